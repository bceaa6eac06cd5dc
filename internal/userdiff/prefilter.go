package userdiff

import (
	"regexp/syntax"
	"unicode"
	"unicode/utf8"
)

// A hunk header's search runs a driver's expressions on every line above
// the hunk up to a function line: over C files, most lines are indented
// statements no rule could match. lineFilter turns most of them away by
// their first bytes, read off the expressions themselves, before any
// expression runs.

// byteSet is a set of byte values.
type byteSet [4]uint64

func (s *byteSet) add(b byte)      { s[b>>6] |= 1 << (b & 63) }
func (s *byteSet) has(b byte) bool { return s[b>>6]&(1<<(b&63)) != 0 }

func (s *byteSet) addRange(lo, hi byte) {
	for b := int(lo); b <= int(hi); b++ {
		s.add(byte(b))
	}
}

func (s *byteSet) union(o byteSet) {
	for i := range s {
		s[i] |= o[i]
	}
}

func (s *byteSet) meets(o byteSet) bool {
	for i := range s {
		if s[i]&o[i] != 0 {
			return true
		}
	}
	return false
}

// lineFilter passes a line that some positive expression could match:
// one whose first byte, after any run of skip bytes, is in first.
type lineFilter []leadBytes

type leadBytes struct {
	skip  byteSet // bytes an expression's leading [ \t]* may consume
	first byteSet
}

func (f lineFilter) pass(line string) bool {
	for i := range f {
		l := &f[i]
		j := 0
		for j < len(line) && l.skip.has(line[j]) {
			j++
		}
		if j < len(line) && l.first.has(line[j]) {
			return true
		}
	}
	return false
}

// filterFor builds the filter of a rule's positive expressions, or nil
// when one of them could match a line anywhere or match an empty line:
// then every line must be tried.
func filterFor(rules []funcRule) lineFilter {
	var f lineFilter
	for _, r := range rules {
		if r.negate {
			continue
		}
		re, err := syntax.Parse(r.re.String(), syntax.Perl)
		if err != nil {
			return nil
		}
		l, ok := leadOf(re.Simplify())
		if !ok {
			return nil
		}
		f = append(f, l)
	}
	return f
}

// leadOf reads the lead bytes of an expression anchored at the start of
// the text.
func leadOf(re *syntax.Regexp) (leadBytes, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText {
		return leadBytes{}, false
	}
	rest := re.Sub[1:]
	// A leading run of ASCII bytes, as [ \t]*, is skipped before looking:
	// when what follows cannot start with one of them.
	if star := rest[0]; star.Op == syntax.OpStar && len(rest) > 1 {
		if skip, ok := asciiClass(star.Sub[0]); ok {
			first, nullable, ok := firstOfSeq(rest[1:])
			if ok && !nullable && !first.meets(skip) {
				return leadBytes{skip: skip, first: first}, true
			}
		}
	}
	first, nullable, ok := firstOfSeq(rest)
	if !ok || nullable {
		return leadBytes{}, false
	}
	return leadBytes{first: first}, true
}

// asciiClass is the set of a character class of ASCII characters only.
func asciiClass(re *syntax.Regexp) (byteSet, bool) {
	var s byteSet
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) != 1 || re.Rune[0] >= utf8.RuneSelf || re.Flags&syntax.FoldCase != 0 {
			return s, false
		}
		s.add(byte(re.Rune[0]))
	case syntax.OpCharClass:
		for i := 0; i < len(re.Rune); i += 2 {
			if re.Rune[i+1] >= utf8.RuneSelf {
				return s, false
			}
			s.addRange(byte(re.Rune[i]), byte(re.Rune[i+1]))
		}
	default:
		return s, false
	}
	return s, true
}

// firstOfSeq is the set of bytes a match of the sequence can start with,
// and whether it can match the empty string.
func firstOfSeq(seq []*syntax.Regexp) (byteSet, bool, bool) {
	var all byteSet
	for _, re := range seq {
		first, nullable, ok := firstOf(re)
		if !ok {
			return all, false, false
		}
		all.union(first)
		if !nullable {
			return all, false, true
		}
	}
	return all, true, true
}

// firstOf is firstOfSeq for one expression; ok is false for what it does
// not analyse.
func firstOf(re *syntax.Regexp) (first byteSet, nullable, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return first, true, true
		}
		addRune(&first, re.Rune[0])
		if re.Flags&syntax.FoldCase != 0 {
			for r := unicode.SimpleFold(re.Rune[0]); r != re.Rune[0]; r = unicode.SimpleFold(r) {
				addRune(&first, r)
			}
		}
		return first, false, true
	case syntax.OpCharClass:
		for i := 0; i < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo < utf8.RuneSelf {
				first.addRange(byte(lo), byte(min(hi, utf8.RuneSelf-1)))
			}
			if hi >= utf8.RuneSelf {
				// Any multi-byte character, or an invalid byte read as U+FFFD.
				first.addRange(0x80, 0xff)
			}
		}
		return first, false, true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		first.addRange(0, 0xff)
		return first, false, true
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return first, true, true
	case syntax.OpNoMatch:
		return first, false, true
	case syntax.OpCapture:
		return firstOf(re.Sub[0])
	case syntax.OpStar, syntax.OpQuest:
		first, _, ok = firstOf(re.Sub[0])
		return first, true, ok
	case syntax.OpPlus:
		return firstOf(re.Sub[0])
	case syntax.OpRepeat:
		first, nullable, ok = firstOf(re.Sub[0])
		return first, nullable || re.Min == 0, ok
	case syntax.OpConcat:
		return firstOfSeq(re.Sub)
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			f, n, ok := firstOf(sub)
			if !ok {
				return first, false, false
			}
			first.union(f)
			nullable = nullable || n
		}
		return first, nullable, true
	}
	return first, false, false
}

func addRune(s *byteSet, r rune) {
	var buf [utf8.UTFMax]byte
	utf8.EncodeRune(buf[:], r)
	s.add(buf[0])
	if r >= utf8.RuneSelf {
		s.addRange(0x80, 0xff) // an invalid byte reads as U+FFFD too
	}
}
