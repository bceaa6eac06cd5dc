package tokenizer

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func newTok(t testing.TB, name string) *Tokenizer {
	t.Helper()
	tok, err := New(name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestNewTokenizer(t *testing.T) {
	tests := []struct {
		name     string
		wantName string
	}{
		{"", "o200k_base"},
		{"o200k_base", "o200k_base"},
		{"cl100k_base", "cl100k_base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := newTok(t, tt.name)
			if got := tok.Name(); got != tt.wantName {
				t.Errorf("Name() = %q, want %q", got, tt.wantName)
			}
			if n := tok.Count("func main() { fmt.Println(\"hello\") }"); n <= 0 {
				t.Errorf("Count = %d, want > 0", n)
			}
			if n := tok.Count(""); n != 0 {
				t.Errorf("Count(\"\") = %d, want 0", n)
			}
		})
	}
	if Default != "o200k_base" || !slices.Contains(Names, Default) {
		t.Errorf("Default %q is not one of Names %v", Default, Names)
	}
}

func TestNewTokenizerRefusesUnknown(t *testing.T) {
	for _, name := range []string{"gpt2", "p50k_base", "r50k_base", "O200K_BASE", " o200k_base", "cl100k"} {
		t.Run(name, func(t *testing.T) {
			tok, err := New(name)
			if err == nil {
				t.Fatalf("New(%q) = %v, want an error", name, tok)
			}
			msg := err.Error()
			if !strings.Contains(msg, "Try:") || !strings.Contains(msg, strconv.Quote(name)) {
				t.Errorf("error %q does not name the input and a way out", msg)
			}
			for _, option := range Names {
				if !strings.Contains(msg, option) {
					t.Errorf("error %q does not list %s", msg, option)
				}
			}
		})
	}
}

func TestVocabulariesCountDifferently(t *testing.T) {
	o200k, cl100k := newTok(t, "o200k_base"), newTok(t, "cl100k_base")
	texts := []string{
		"Привет, как дела? Это проверка токенизатора для русского текста.",
		"これは日本語のテキストです。トークンの数が違うはずです。",
		"हिन्दी में लिखा गया एक वाक्य, जिसे गिनना है।",
	}
	differ := false
	for _, s := range texts {
		a, b := o200k.Count(s), cl100k.Count(s)
		if a <= 0 || b <= 0 {
			t.Errorf("%q: counts %d and %d, want both > 0", s, a, b)
		}
		differ = differ || a != b
	}
	if !differ {
		t.Error("o200k_base and cl100k_base count every text the same: both names load one vocabulary")
	}
}

func TestSkipPath(t *testing.T) {
	tests := []struct {
		path string
		want string
	}{
		// Lockfiles, by name, at any depth, and anything ending in .lock.
		{"package-lock.json", Lockfile},
		{"yarn.lock", Lockfile},
		{"pnpm-lock.yaml", Lockfile},
		{"go.sum", Lockfile},
		{"Cargo.lock", Lockfile},
		{"poetry.lock", Lockfile},
		{"Gemfile.lock", Lockfile},
		{"composer.lock", Lockfile},
		{"flake.lock", Lockfile},
		{"anything.lock", Lockfile},
		{"web/package-lock.json", Lockfile},
		{"services/api/go.sum", Lockfile},
		{"vendor/github.com/x/y/go.sum", Lockfile},

		// Vendored directories at any depth.
		{"vendor/github.com/pkg/errors/errors.go", Vendored},
		{"node_modules/react/index.js", Vendored},
		{"third_party/zlib/zlib.h", Vendored},
		{"web/node_modules/left-pad/index.js", Vendored},
		{"a/b/vendor/c.go", Vendored},
		{"lib/third_party/x/y.c", Vendored},

		// Generated code.
		{"api/v1/service.pb.go", Generated},
		{"service.pb.go", Generated},
		{"static/app.min.js", Generated},
		{"static/app.min.css", Generated},
		{"pkg/apis/v1/zz_generated.deepcopy.go", Generated},
		{"proto/api_pb2.py", Generated},

		// Ordinary paths, including names that merely contain the words.
		{"main.go", ""},
		{"docs/vendor.md", ""},
		{"vendor.go", ""},
		{"lock.go", ""},
		{"blockchain.go", ""},
		{"internal/lockfile/lockfile.go", ""},
		{"cmd/node_modules.go", ""},
		{"src/app.js", ""},
		{"package.json", ""},
		{"go.mod", ""},
		{"README.md", ""},
		{"vendored/x.go", ""},
		{"proto/service.proto", ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := SkipPath(tt.path); got != tt.want {
				t.Errorf("SkipPath(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// hunk returns a file's section: a git diff header and n added lines.
func hunk(name string, n int) Section {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -0,0 +1,%d @@\n", name, name, name, name, n)
	for i := range n {
		fmt.Fprintf(&b, "+var generated%d = table[%d] // entry %d of the lookup table\n", i, i*7, i)
	}
	return Section{Name: name, Text: b.String()}
}

func join(sections []Section) string {
	var b strings.Builder
	for _, s := range sections {
		b.WriteString(s.Text)
	}
	return b.String()
}

var noteLine = regexp.MustCompile(`^\[digest: diff cut to (\d+) tokens \(limit (\d+)\); cut: (.*)\]$`)

// splitNote splits a truncated cut's text into the diff kept and its note,
// which must be the text's last line.
func splitNote(t *testing.T, text string) (body, note string) {
	t.Helper()
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("truncated text does not end with a newline: %q", tail(text))
	}
	trimmed := strings.TrimSuffix(text, "\n")
	i := strings.LastIndexByte(trimmed, '\n')
	body, note = text[:i+1], trimmed[i+1:]
	if !strings.HasPrefix(note, "[digest: diff cut to") {
		t.Fatalf("last line is not the note: %q", note)
	}
	return body, note
}

func tail(s string) string {
	if len(s) > 300 {
		return "..." + s[len(s)-300:]
	}
	return s
}

func TestFitUnderBudget(t *testing.T) {
	tok := newTok(t, "")
	tests := []struct {
		name     string
		sections []Section
		max      int
	}{
		{"nothing", nil, 100},
		{"one empty section", []Section{{Name: "a", Text: ""}}, 1},
		{"one file", []Section{hunk("main.go", 3)}, 4000},
		{"three files", []Section{hunk("a.go", 10), hunk("b/b.go", 20), hunk("c/c/c.go", 5)}, 4000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := join(tt.sections)
			max := tt.max
			if n := tok.Count(full); n > max {
				max = n // exactly at the limit also fits
			}
			got := tok.Fit(tt.sections, max)
			if got.Text != full {
				t.Errorf("Text changed:\n got %q\nwant %q", tail(got.Text), tail(full))
			}
			if got.Truncated || len(got.CutFiles) != 0 {
				t.Errorf("Truncated = %v, CutFiles = %v, want false and none", got.Truncated, got.CutFiles)
			}
			if want := tok.Count(got.Text); got.Tokens != want {
				t.Errorf("Tokens = %d, Count(Text) = %d", got.Tokens, want)
			}
		})
	}
}

func TestFitExactlyAtLimitIsNotCut(t *testing.T) {
	tok := newTok(t, "")
	sections := []Section{hunk("a.go", 40), hunk("b.go", 40)}
	n := tok.Count(join(sections))
	if got := tok.Fit(sections, n); got.Truncated {
		t.Errorf("Fit at exactly %d tokens truncated the diff", n)
	}
	if got := tok.Fit(sections, n-1); !got.Truncated {
		t.Errorf("Fit at %d tokens, one under the diff's %d, did not truncate", n-1, n)
	}
}

// TestFitSeamCanExceedLimit: two sections that fit by their summed counts can
// count more once joined.
func TestFitSeamCanExceedLimit(t *testing.T) {
	tok := newTok(t, "")
	// Room enough for a note, so a fixed Fit can cut instead.
	lines := strings.Repeat("+some line of the diff\n", 20)
	sections := []Section{{Name: "a", Text: lines + "  "}, {Name: "b", Text: "2s(h"}}
	sum := tok.Count(sections[0].Text) + tok.Count(sections[1].Text)
	joined := tok.Count(join(sections))
	if joined <= sum {
		t.Skipf("this vocabulary does not merge the seam differently (%d summed, %d joined)", sum, joined)
	}
	got := tok.Fit(sections, sum)
	if got.Tokens != tok.Count(got.Text) {
		t.Errorf("Tokens = %d, Count(Text) = %d", got.Tokens, tok.Count(got.Text))
	}
	if n := tok.Count(got.Text); n > sum {
		t.Errorf("Fit(max=%d) returned %d tokens, Truncated = %v: %q", sum, n, got.Truncated, got.Text)
	}
}

// checkCut checks what every truncated cut promises and returns the body
// kept before the note.
func checkCut(t *testing.T, tok *Tokenizer, sections []Section, max int, got Cut) string {
	t.Helper()
	if !got.Truncated {
		t.Fatalf("not truncated: %d tokens of %d", tok.Count(join(sections)), max)
	}
	if n := tok.Count(got.Text); n > max {
		t.Errorf("Text counts %d tokens, limit %d", n, max)
	}
	if want := tok.Count(got.Text); got.Tokens != want {
		t.Errorf("Tokens = %d, Count(Text) = %d", got.Tokens, want)
	}
	if !utf8.ValidString(got.Text) {
		t.Errorf("Text is not valid UTF-8")
	}
	body, note := splitNote(t, got.Text)
	m := noteLine.FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("note %q is not in the expected form", note)
	}
	if kept, _ := strconv.Atoi(m[1]); kept != tok.Count(body) {
		t.Errorf("note says the diff was cut to %s tokens, the body counts %d", m[1], tok.Count(body))
	}
	if m[2] != strconv.Itoa(max) {
		t.Errorf("note says limit %s, want %d", m[2], max)
	}
	full := join(sections)
	// A line cut in the middle gets a newline of its own; anything else kept is
	// a prefix of the diff.
	if !strings.HasPrefix(full, body) && !strings.HasPrefix(full, strings.TrimSuffix(body, "\n")) {
		t.Errorf("kept body is not a prefix of the diff:\n%s", tail(body))
	}
	if len(got.CutFiles) == 0 {
		t.Errorf("truncated but CutFiles is empty")
	}
	for i, name := range got.CutFiles {
		if i >= maxNamesInNote {
			break
		}
		if !strings.Contains(m[3], name) {
			t.Errorf("note %q does not name cut file %s", note, name)
		}
	}
	return body
}

func TestFitCutsLongDiff(t *testing.T) {
	tok := newTok(t, "")
	sections := []Section{hunk("small.go", 2), hunk("gen/table.go", 3000), hunk("gen/other.go", 50), hunk("z.go", 1)}
	for _, max := range []int{100, 500, 2000} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			got := tok.Fit(sections, max)
			body := checkCut(t, tok, sections, max, got)
			if !strings.HasPrefix(join(sections), body) {
				t.Errorf("cut at whole lines, yet the body is not a prefix of the diff")
			}
			if tok.Count(body) < max/2 {
				t.Errorf("kept only %d tokens of %d", tok.Count(body), max)
			}
			// small.go fits whole; table.go is cut partly, then everything after wholly.
			want := []string{"gen/table.go", "gen/other.go", "z.go"}
			if !slices.Equal(got.CutFiles, want) {
				t.Errorf("CutFiles = %v, want %v", got.CutFiles, want)
			}
			// table.go is "(partly)" kept exactly when some of it is in the body.
			list := "cut: gen/table.go, gen/other.go, z.go]\n"
			if len(body) > len(sections[0].Text) {
				list = "cut: gen/table.go (partly), gen/other.go, z.go]\n"
			}
			if !strings.HasSuffix(got.Text, list) {
				t.Errorf("note does not end %q: %q", list, tail(got.Text))
			}
			if !strings.HasPrefix(got.Text, sections[0].Text) {
				t.Errorf("the first file, which fits, was not kept whole")
			}
		})
	}
}

func TestFitCutsWholeFiles(t *testing.T) {
	tok := newTok(t, "")
	// Every file but the first is bigger than the whole budget.
	sections := []Section{hunk("a.go", 2), hunk("b.go", 800), hunk("c.go", 800)}
	got := tok.Fit(sections, 300)
	checkCut(t, tok, sections, 300, got)
	if want := []string{"b.go", "c.go"}; !slices.Equal(got.CutFiles, want) {
		t.Errorf("CutFiles = %v, want %v", got.CutFiles, want)
	}
}

func TestFitOtherVocabulary(t *testing.T) {
	tok := newTok(t, "cl100k_base")
	sections := []Section{hunk("a.go", 400)}
	got := tok.Fit(sections, 250)
	checkCut(t, tok, sections, 250, got)
}

// TestFitEnormousLine: a first file that is one 200 KB line (ASCII, or runes
// of 2 and 4 bytes) is cut on a character boundary, within the limit, and
// some of it is kept.
func TestFitEnormousLine(t *testing.T) {
	tok := newTok(t, "")
	const size = 200 << 10
	tests := []struct {
		name string
		line string
	}{
		{"ascii", strings.Repeat("x", size)},
		{"minified", strings.Repeat("var a=b(c,d);", size/13)},
		{"two-byte runes", strings.Repeat("é", size/2)},
		{"emoji", strings.Repeat("😀", size/4)},
		{"mixed", strings.Repeat("ab€😀é ", size/14)},
	}
	for _, tt := range tests {
		for _, max := range []int{64, 300, 4000} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, max), func(t *testing.T) {
				for _, sections := range [][]Section{
					{{Name: "dist/app.js", Text: tt.line}},
					{{Name: "dist/app.js", Text: "+" + tt.line + "\n"}, hunk("b.go", 3)},
				} {
					got := tok.Fit(sections, max)
					body := checkCut(t, tok, sections, max, got)
					if got.CutFiles[0] != "dist/app.js" {
						t.Errorf("CutFiles = %v, want dist/app.js first", got.CutFiles)
					}
					if max >= 300 && body == "" {
						t.Errorf("nothing of the line was kept in %d tokens: %q", max, got.Text)
					}
					checkLeftOut(t, fmt.Sprintf("%d sections", len(sections)), sections, got)
				}
			})
		}
	}
}

// TestFitTinyBudget: whatever the limit, the text never counts more than it.
func TestFitTinyBudget(t *testing.T) {
	tok := newTok(t, "")
	sections := []Section{hunk("a.go", 30), hunk("b.go", 30)}
	for _, max := range []int{1, 5, 20, 25, 30, 40, 64} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			got := tok.Fit(sections, max)
			if !got.Truncated {
				t.Fatalf("not truncated")
			}
			if got.Tokens != tok.Count(got.Text) {
				t.Errorf("Tokens = %d, Count(Text) = %d", got.Tokens, tok.Count(got.Text))
			}
			if !slices.Equal(got.CutFiles, []string{"a.go", "b.go"}) && !slices.Equal(got.CutFiles, []string{"b.go"}) {
				t.Errorf("CutFiles = %v", got.CutFiles)
			}
			if n := tok.Count(got.Text); n > max {
				t.Errorf("Fit(max=%d) returned %d tokens: %q", max, n, got.Text)
			}
		})
	}
}

// TestFitCutFilesNamesEveryFileLeftOut: a file none of whose text is in the
// result must be in CutFiles and in the note.
func TestFitCutFilesNamesEveryFileLeftOut(t *testing.T) {
	tok := newTok(t, "")
	for _, tc := range []struct {
		n, lines, max int
	}{
		{12, 1, 100}, {12, 1, 120}, {30, 1, 200}, {30, 2, 300}, {8, 3, 150},
	} {
		var sections []Section
		for i := range tc.n {
			sections = append(sections, Section{Name: fmt.Sprintf("pkg/file%02d.go", i), Text: strings.Repeat(fmt.Sprintf("+line of file %d with some words in it\n", i), tc.lines)})
		}
		for max := tc.max; max < tc.max+40; max++ {
			got := tok.Fit(sections, max)
			if !got.Truncated {
				continue
			}
			if !checkLeftOut(t, fmt.Sprintf("%d files of %d lines, max %d", tc.n, tc.lines, max), sections, got) {
				break // one report per shape is enough
			}
		}
	}
}

// checkLeftOut checks CutFiles, and the note's "(partly)", against the text
// actually kept.
func checkLeftOut(t *testing.T, what string, sections []Section, got Cut) bool {
	t.Helper()
	body := got.Text
	i := strings.LastIndex(body, "[digest: diff cut to")
	if i < 0 {
		t.Errorf("%s: no note in %q", what, tail(got.Text))
		return false
	}
	body, note := body[:i], body[i:]
	var want []string
	partly := false
	off := 0
	for _, s := range sections {
		end := off + len(s.Text)
		if end > len(body) || body[off:end] != s.Text {
			if len(want) == 0 {
				partly = off < len(body) && len(strings.TrimSuffix(body[off:], "\n")) > 0
			}
			want = append(want, s.Name)
		}
		off = end
	}
	ok := true
	if !slices.Equal(got.CutFiles, want) {
		t.Errorf("%s: CutFiles = %v, but the files not wholly kept are %v", what, got.CutFiles, want)
		ok = false
	}
	if says := strings.Contains(note, " (partly)"); says != partly {
		t.Errorf("%s: note %q says (partly) = %v, but part of %s kept = %v", what, note, says, want[0], partly)
		ok = false
	}
	return ok
}

func TestFitManyFilesNoteIsShort(t *testing.T) {
	tok := newTok(t, "")
	sections := make([]Section, 10000)
	for i := range sections {
		sections[i] = Section{Name: fmt.Sprintf("f%05d.txt", i), Text: fmt.Sprintf("+%d\n", i)}
	}
	const max = 200
	got := tok.Fit(sections, max)
	checkCut(t, tok, sections, max, got)
	_, note := splitNote(t, got.Text)
	m := noteLine.FindStringSubmatch(note)
	if m == nil {
		t.Fatalf("note %q", note)
	}
	names := regexp.MustCompile(`^(.*) and (\d+) more$`).FindStringSubmatch(m[3])
	if names == nil {
		t.Fatalf("note does not end with \"and N more\": %q", note)
	}
	listed := strings.Split(names[1], ", ")
	if len(listed) > maxNamesInNote {
		t.Errorf("note lists %d names, want at most %d", len(listed), maxNamesInNote)
	}
	if more, _ := strconv.Atoi(names[2]); len(listed)+more != len(got.CutFiles) {
		t.Errorf("note lists %d and %d more, CutFiles has %d", len(listed), more, len(got.CutFiles))
	}
	if len(got.CutFiles) < 10000-max {
		t.Errorf("only %d files cut", len(got.CutFiles))
	}
	if want := sections[len(sections)-1].Name; got.CutFiles[len(got.CutFiles)-1] != want {
		t.Errorf("last cut file %s, want %s", got.CutFiles[len(got.CutFiles)-1], want)
	}
	if !slices.IsSorted(got.CutFiles) {
		t.Errorf("CutFiles are not in diff order")
	}
}

// FuzzFit splits text into sections at NUL bytes.
func FuzzFit(f *testing.F) {
	// Seeds stay small: the fuzzer minimizes every new input it finds, and a
	// large one takes it most of a short run.
	f.Add("diff --git a/a.go b/a.go\n+package a\n\x00diff --git a/b.go b/b.go\n+func B() {}\n", 5)
	f.Add(strings.Repeat("+x := 1\n", 20)+"\x00"+strings.Repeat("+y\n", 5), 64)
	f.Add(strings.Repeat("é", 200), 30)
	f.Add(strings.Repeat("😀 ", 60)+"\x00\x00\x00", 70)
	f.Add(strings.Repeat("a\x00", 30), 64)
	f.Add("no newline at all", 1)
	f.Add("", 1)
	f.Add("\n\n\n\x00\n", 2000)
	f.Add(strings.Repeat("word ", 40)+"\n"+strings.Repeat("+line\n", 10), 40)
	tok := newTok(f, "")
	f.Fuzz(func(t *testing.T, text string, max int) {
		if max < 0 {
			max = -(max + 1)
		}
		max = 1 + max%2000
		var sections []Section
		var names []string
		for i, part := range strings.Split(text, "\x00") {
			name := fmt.Sprintf("f%d", i)
			sections = append(sections, Section{Name: name, Text: part})
			names = append(names, name)
		}
		got := tok.Fit(sections, max)
		if got.Tokens != tok.Count(got.Text) {
			t.Fatalf("Tokens = %d, Count(Text) = %d", got.Tokens, tok.Count(got.Text))
		}
		if utf8.ValidString(text) && !utf8.ValidString(got.Text) {
			t.Fatalf("valid input, invalid output %q", got.Text)
		}
		full := join(sections)
		if !got.Truncated {
			if got.Text != full || len(got.CutFiles) != 0 {
				t.Fatalf("untruncated Text %q (CutFiles %v), want %q", got.Text, got.CutFiles, full)
			}
		} else if len(got.CutFiles) == 0 {
			t.Fatalf("truncated, CutFiles empty")
		}
		// The longest note Fit could write: every file named, first one partly.
		// When it fits, the text must fit and a cut must carry its note.
		note := tok.Count(cutNote(max, max, names, true))
		if max >= note+1 {
			if n := tok.Count(got.Text); n > max {
				t.Fatalf("Text counts %d tokens, limit %d (note %d)", n, max, note)
			}
			if got.Truncated && !strings.Contains(got.Text, "[digest: diff cut to") {
				t.Fatalf("truncated without a note: %q", got.Text)
			}
		}
	})
}

// TestFitCutsOmittedSectionsWhole: a section whose text was never built is
// cut whole, with everything after it, however much room is left.
func TestFitCutsOmittedSectionsWhole(t *testing.T) {
	tok := newTok(t, "")
	sections := []Section{hunk("a.go", 3), {Name: "b.go", Omitted: true}, hunk("c.go", 2)}
	got := tok.Fit(sections, 4000)
	body := checkCut(t, tok, sections, 4000, got)
	if body != sections[0].Text {
		t.Errorf("kept %q, want a.go whole and nothing else", tail(body))
	}
	if want := []string{"b.go", "c.go"}; !slices.Equal(got.CutFiles, want) {
		t.Errorf("CutFiles = %v, want %v", got.CutFiles, want)
	}
}
