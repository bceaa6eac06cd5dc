package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// The vocabularies first split text into pieces with a regular expression,
// then merge bytes within each piece. Run through the tokenizer library's
// backtracking engine, that expression took half of digest's time over a
// history, so the split is written out here by hand, branch by branch. It
// reproduces that library's compiled matcher exactly, quirks included: its
// `\s*[\r\n]+` stops at the first newline run of a whitespace run, not the
// last, and it matches no DEL (0x7f) at all, so that byte is dropped.
// TestCountMatchesLibrary, TestCountEveryRune and FuzzCount hold the two to
// the same counts.

// Character classes of an ASCII byte.
const (
	asciiUpper   = 1 << iota // Lu
	asciiLower               // Ll
	asciiDigit               // N
	asciiSpace               // \s
	asciiNewline             // \r or \n
	asciiPunct               // [^\s\p{L}\p{N}], DEL excepted
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		switch {
		case c >= 'A' && c <= 'Z':
			t[c] = asciiUpper
		case c >= 'a' && c <= 'z':
			t[c] = asciiLower
		case c >= '0' && c <= '9':
			t[c] = asciiDigit
		case c == '\r' || c == '\n':
			t[c] = asciiSpace | asciiNewline
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			t[c] = asciiSpace
		case c != 0x7f:
			t[c] = asciiPunct
		}
	}
	return t
}()

func runeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&(asciiUpper|asciiLower) != 0
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiDigit != 0
	}
	return unicode.IsNumber(r)
}

func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiSpace != 0
	}
	return unicode.IsSpace(r)
}

// isOptionalLead is [^\r\n\p{L}\p{N}], the one character allowed before a word.
func isOptionalLead(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&(asciiPunct|asciiSpace) != 0 && asciiClass[r]&asciiNewline == 0
	}
	return !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// isPunct is [^\s\p{L}\p{N}].
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiPunct != 0
	}
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// isCased is o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], a word's capitals.
func isCased(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiUpper != 0
	}
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

// isUncased is o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}], the rest of a word.
func isUncased(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiLower != 0
	}
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

// run returns the end of the longest run from i of runes in class.
func run(s string, i int, class func(rune) bool) int {
	for i < len(s) {
		r, w := runeAt(s, i)
		if !class(r) {
			break
		}
		i += w
	}
	return i
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or i.
// Like the library's matcher, it takes ſ for s and compares the rest by
// ASCII case.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	lower := func(j int) byte {
		if j < len(s) {
			return s[j] | 0x20
		}
		return 0
	}
	switch s[i+1] {
	case 'S', 'T', 's', 't', 'M', 'm', 'D', 'd':
		return i + 2
	case 'R', 'r', 'V', 'v':
		if lower(i+2) == 'e' {
			return i + 3
		}
	case 'L', 'l':
		if lower(i+2) == 'l' {
			return i + 3
		}
	case 0xC5: // ſ is C5 BF
		if i+2 < len(s) && s[i+2] == 0xBF {
			return i + 3
		}
	}
	return i
}

// numbers is \p{N}{1,3}: the end of up to three numerals from i, or i.
func numbers(s string, i int) int {
	for range 3 {
		if i >= len(s) {
			break
		}
		r, w := runeAt(s, i)
		if !isNumber(r) {
			break
		}
		i += w
	}
	return i
}

// punctuation is ` ?[^\s\p{L}\p{N}]+[\r\n]*`, with '/' among the trailing
// bytes when slash is set (o200k), or i when it does not match.
func punctuation(s string, i int, slash bool) int {
	j := i
	if j < len(s) && s[j] == ' ' {
		j++
	}
	end := run(s, j, isPunct)
	if end == j {
		return i
	}
	for end < len(s) && (s[end] == '\r' || s[end] == '\n' || slash && s[end] == '/') {
		end++
	}
	return end
}

// whitespace matches the last three branches at i, a run of white space:
// `\s*[\r\n]+` (in the library's reading), then `\s+(?!\S)`, then `\s+`.
func whitespace(s string, i int) int {
	end := run(s, i, isSpace)
	if end == i {
		return i
	}
	for j := i; j < end; j++ {
		if s[j] == '\r' || s[j] == '\n' {
			for j < end && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
	}
	if end == len(s) {
		return end
	}
	_, first := runeAt(s, i)
	if i+first == end {
		return end // a single space before a non-space
	}
	_, last := utf8.DecodeLastRuneInString(s[:end])
	return end - last
}

// o200kPiece returns the end of the piece of o200k_base's split that starts
// at i, or i when none does.
func o200kPiece(s string, i int) int {
	r, w := runeAt(s, i)
	lead := isOptionalLead(r)
	// [^\r\n\p{L}\p{N}]?[cased]*[uncased]+('s...)?
	starts, n := leads(i, w, lead)
	for _, start := range starts[:n] {
		casedEnd := run(s, start, isCased)
		for e := casedEnd; ; {
			if end := run(s, e, isUncased); end > e {
				return contraction(s, end)
			}
			if e == start {
				break
			}
			_, back := utf8.DecodeLastRuneInString(s[:e])
			e -= back
		}
	}
	// [^\r\n\p{L}\p{N}]?[cased]+[uncased]*('s...)?
	for _, start := range starts[:n] {
		if casedEnd := run(s, start, isCased); casedEnd > start {
			return contraction(s, run(s, casedEnd, isUncased))
		}
	}
	if end := numbers(s, i); end > i {
		return end
	}
	if end := punctuation(s, i, true); end > i {
		return end
	}
	return whitespace(s, i)
}

// cl100kPiece returns the end of the piece of cl100k_base's split that
// starts at i, or i when none does.
func cl100kPiece(s string, i int) int {
	if end := contraction(s, i); end > i {
		return end
	}
	r, w := runeAt(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	starts, n := leads(i, w, isOptionalLead(r))
	for _, start := range starts[:n] {
		if end := run(s, start, isLetter); end > start {
			return end
		}
	}
	if end := numbers(s, i); end > i {
		return end
	}
	if end := punctuation(s, i, false); end > i {
		return end
	}
	return whitespace(s, i)
}

// leads lists where a word may start after an optional leading character,
// in the order backtracking tries them: with the character, then without.
func leads(i, w int, lead bool) ([2]int, int) {
	if lead {
		return [2]int{i + w, i}, 2
	}
	return [2]int{i}, 1
}
