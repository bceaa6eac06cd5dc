package tokenizer

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
	"github.com/tiktoken-go/tokenizer/codec"
)

// library is the tokenizer library's own counter, the reference Count must
// agree with to the token.
func library(t testing.TB, name string) tokenizer.Codec {
	t.Helper()
	codec, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		t.Fatal(err)
	}
	return codec
}

func libraryCount(codec tokenizer.Codec, s string) int {
	n, _ := codec.Count(s)
	return n
}

// trickyRunes exercise every branch of the split: cased and uncased letters
// of several scripts, titlecase, modifier letters, marks, other numerals,
// exotic white space, the contractions' letters and ſ, and invalid bytes.
var trickyRunes = []string{
	"a", "s", "t", "l", "L", "e", "E", "r", "v", "m", "d", "D", "Z", "'", "ſ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f",
	"0", "7", "²", "٣", "Ⅻ", "½", "é", "É", "ǅ", "ʰ", "中", "\u0301", "\u0903", "ß", "ﬀ", "Ω", "ω",
	"\u00a0", "\u0085", "\u2028", "\u3000", "\u1680", "/", "//", "-", "+", "@", "{", "}", "(", ")", ".", ",", "\"", "\\",
	"😀", "\ufffd", "\xff", "\xc5", "\x00", "\x1c", "\x7f", "<|endoftext|>",
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(trickyRunes[rng.IntN(len(trickyRunes))])
	}
	return b.String()
}

func TestCountMatchesLibrary(t *testing.T) {
	for _, name := range Names {
		t.Run(name, func(t *testing.T) {
			tok, codec := newTok(t, name), library(t, name)
			check := func(s string) {
				t.Helper()
				if got, want := tok.Count(s), libraryCount(codec, s); got != want {
					t.Fatalf("Count(%q) = %d, the library counts %d", s, got, want)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20000 {
				check(randomText(rng, 1+rng.IntN(12)))
			}
			for range 50 {
				check(randomText(rng, 200+rng.IntN(2000))) // long pieces take the heap
			}
			check(strings.Repeat("ab", 300) + strings.Repeat("=", 500) + strings.Repeat(" ", 400) + "x")
			// Every Go file of this module: real code, real diffs' stuff.
			files, _ := filepath.Glob("../../*/*/*.go")
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				check(string(b))
			}
		})
	}
}

// TestCountEveryRune puts code points in the contexts where their class
// decides the split, so that no rune's class differs from the library's.
// It samples one rune in 31; DIGEST_EVERY_RUNE=1 checks all of them (40 s).
func TestCountEveryRune(t *testing.T) {
	step := rune(31)
	if os.Getenv("DIGEST_EVERY_RUNE") == "1" {
		step = 1
	}
	for _, name := range Names {
		tok, codec := newTok(t, name), library(t, name)
		var b strings.Builder
		flush := func() {
			s := b.String()
			b.Reset()
			if got, want := tok.Count(s), libraryCount(codec, s); got != want {
				// Narrow the failure down to one context for the message.
				for _, line := range strings.SplitAfter(s, "\x00") {
					if g, w := tok.Count(line), libraryCount(codec, line); g != w {
						t.Fatalf("%s: Count(%q) = %d, the library counts %d", name, line, g, w)
					}
				}
				t.Fatalf("%s: counts differ (%d, library %d) only in a whole batch", name, got, want)
			}
		}
		for r := rune(0); r <= utf8.MaxRune; r += step {
			if !utf8.ValidRune(r) {
				continue
			}
			c := string(r)
			b.WriteString("\x00x" + c + "y 'a" + c + "s " + c + "A" + c + "'S 1" + c + "2 " + c + "+ \n" + c + "\n  " + c + c + "b\x00")
			if b.Len() > 1<<16 {
				flush()
			}
		}
		flush()
	}
}

func BenchmarkCount(b *testing.B) {
	src, err := os.ReadFile("cut.go")
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat(string(src), 10)
	tok, codec := newTok(b, Default), library(b, Default)
	b.Run("digest", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			tok.Count(text)
		}
	})
	b.Run("library", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			libraryCount(codec, text)
		}
	})
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "don't", "HELLO world's", " \n\n  \n x", "a  b   \n", "x²³⁴5", "ſ's 'ſ", "\xffé\u0301"} {
		f.Add(s)
	}
	tokens := map[string]*Tokenizer{}
	codecs := map[string]tokenizer.Codec{}
	for _, name := range Names {
		tokens[name], codecs[name] = newTok(f, name), library(f, name)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range Names {
			if got, want := tokens[name].Count(s), libraryCount(codecs[name], s); got != want {
				t.Fatalf("%s: Count(%q) = %d, the library counts %d", name, s, got, want)
			}
		}
	})
}

// countingReads makes New return fresh tokenizers whose ranks reads are
// counted, and puts the shared ones back when the test ends.
func countingReads(t *testing.T) *atomic.Int32 {
	t.Helper()
	var reads atomic.Int32
	loadedMu.Lock()
	saved, savedVocabularies := loaded, vocabularies
	loaded, vocabularies = map[string]*Tokenizer{}, maps.Clone(vocabularies)
	for name, v := range vocabularies {
		newCodec := v.newCodec
		v.newCodec = func() *codec.Codec {
			reads.Add(1)
			return newCodec()
		}
		vocabularies[name] = v
	}
	loadedMu.Unlock()
	t.Cleanup(func() {
		loadedMu.Lock()
		loaded, vocabularies = saved, savedVocabularies
		loadedMu.Unlock()
	})
	return &reads
}

// TestRanksAreReadAtTheFirstCount: a run that counts nothing (a fully
// cached eval) never pays the ranks' tenth of a second and 20 MB.
func TestRanksAreReadAtTheFirstCount(t *testing.T) {
	reads := countingReads(t)
	tok := newTok(t, Default)
	if tok.Name() != Default {
		t.Errorf("Name() = %q, want %q", tok.Name(), Default)
	}
	// A load started by New, in the background or not, has read by now.
	for deadline := time.Now().Add(150 * time.Millisecond); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if n := reads.Load(); n != 0 {
			t.Fatalf("%d ranks reads before any Count, want none", n)
		}
	}
	codec := library(t, Default)
	for _, s := range []string{"hello world's", "func main() {}\n\n\t  x"} {
		if got, want := tok.Count(s), libraryCount(codec, s); got != want {
			t.Errorf("Count(%q) = %d, the library counts %d", s, got, want)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d ranks reads after two counts, want 1", n)
	}
}

// TestPreloadThenCount: counts from many goroutines wait for the ranks
// Preload is reading, which are read once (go test -race checks the wait).
func TestPreloadThenCount(t *testing.T) {
	reads := countingReads(t)
	tok := newTok(t, "cl100k_base")
	tok.Preload()
	codec := library(t, "cl100k_base")
	want := libraryCount(codec, "don't stop 1234 ünïcödé")
	var counting sync.WaitGroup
	for range 4 {
		counting.Go(func() {
			if got := tok.Count("don't stop 1234 ünïcödé"); got != want {
				t.Errorf("Count = %d, the library counts %d", got, want)
			}
		})
	}
	counting.Wait()
	if n := reads.Load(); n != 1 {
		t.Errorf("%d ranks reads, want 1", n)
	}
}

// TestShortTableSize: the table of short tokens is at most two thirds
// full, which keeps probe runs short (BenchmarkCount counts as fast as at
// half full) and o200k_base's table at 4 MB of live heap, not 8.
func TestShortTableSize(t *testing.T) {
	for _, name := range Names {
		tok := newTok(t, name)
		tok.Count("x")
		used := 0
		for _, s := range tok.ranks.short.slots {
			if s.key != 0 {
				used++
			}
		}
		size := len(tok.ranks.short.slots)
		if used*3 > size*2 || used*3 <= size { // more than two thirds, or a third or less
			t.Errorf("%s: %d short tokens in %d slots, want between a third and two thirds full", name, used, size)
		}
	}
}
