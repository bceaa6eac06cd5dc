// Package textsafe shows text that digest did not write (commit subjects,
// author and file names, dataset text, model answers) to people without
// letting it act: no escape sequence reaches a terminal, no bidirectional
// override reorders what is read, no invisible character hides text, and
// no Markdown or HTML in it changes the structure of a report.
//
// A character that could act is made visible rather than dropped, in Go's
// notation, so that a reader sees something is there: ESC as \x1b, a
// right-to-left override as \u202e, a byte that is not UTF-8 as \xff.
// Backslashes are left alone: a file named C:\x1b reads the same as one
// holding ESC, but it does nothing, and every Windows path stays readable.
package textsafe

import (
	"unicode"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// Line is s for one line of a terminal, a table cell or a message: runs of
// white space, line breaks and tabs included, become one space, the ends
// are trimmed, and every other control or invisible format character is
// made visible.
func Line(s string) string {
	if isCleanLine(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	var st state
	space := false
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = appendSpace(b, &space)
			b = appendByteEscape(b, s[i])
			st.inFlag = false
			i++
			continue
		}
		i += size
		if unicode.IsSpace(r) {
			space = true
			st.inFlag = false
			continue
		}
		b = appendSpace(b, &space)
		b = st.appendRune(b, r)
	}
	return string(b)
}

// appendSpace writes the space a run of white space folded into, unless
// the run led the line.
func appendSpace(b []byte, pending *bool) []byte {
	if *pending && len(b) > 0 {
		b = append(b, ' ')
	}
	*pending = false
	return b
}

// isCleanLine tells whether Line would return s as it is, so that clean
// text, nearly all of it, is not copied.
func isCleanLine(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prevSpace := false
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if r == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		prevSpace = false
		if unicode.IsSpace(r) || !plain(r) {
			return false
		}
	}
	return true
}

// Text is s for a terminal or a page that shows several lines: line
// breaks and tabs stay, a carriage return alone or before a line feed
// becomes a line feed (a bare one would let a line write over the one
// before), so do Unicode's line and paragraph separators, and every other
// control or invisible format character is made visible.
func Text(s string) string {
	if isCleanText(s) {
		return s
	}
	var st state
	return string(st.appendText(make([]byte, 0, len(s)+8), s))
}

// isCleanText tells whether Text would return s as it is.
func isCleanText(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if r != '\n' && r != '\t' && !plain(r) {
			return false
		}
	}
	return true
}

// plain tells whether r shows as itself whatever comes around it: not a
// control character, not a format character, not the start of a flag's
// tag sequence (which changes how the characters after it show).
func plain(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f:
		return false
	case r < 0x80:
		return true
	case r <= 0x9f: // C1 controls, CSI among them
		return false
	case r == 0x2028 || r == 0x2029 || r == 0xfffe || r == 0xffff || r == flagBase:
		return false
	case r >= 0xe0000 && r <= 0xe007f:
		// The Tags block, its unassigned first code point included: all of
		// it is invisible, and only a flag's tags (see shows) may stand.
		return false
	}
	return !unicode.Is(unicode.Cf, r) || keptFormat(r)
}

// keptFormat are the format characters that writing needs and that cannot
// hide or reorder text: the joiners of Persian, Indic scripts and emoji
// sequences, and the marks that Arabic and Syriac numbers begin with,
// which show.
func keptFormat(r rune) bool {
	return r == 0x200c || r == 0x200d || unicode.Is(unicode.Prepended_Concatenation_Mark, r)
}

// A subdivision flag (England's, Scotland's) is a black flag, up to seven
// invisible tag letters and digits, and a cancel tag. The same tags after
// anything else, or more of them, spell hidden ASCII, the trick that
// smuggles instructions past a reader.
const (
	flagBase   = 0x1f3f4
	tagCancel  = 0xe007f
	maxFlagTag = 7
)

// state is what a character's treatment depends on before it: where in a
// flag's tags it stands, and whether a carriage return came just before.
type state struct {
	inFlag  bool // a black flag came, and tags may follow
	tags    int  // the tags since the flag
	afterCR bool
}

func flagTag(r rune) bool {
	return r >= 0xe0030 && r <= 0xe0039 || r >= 0xe0061 && r <= 0xe007a
}

// shows tells whether r, a character that is not white space, shows as
// itself where it stands, and moves the state past it.
func (st *state) shows(r rune) bool {
	switch {
	case r == flagBase:
		st.inFlag, st.tags = true, 0
		return true
	case st.inFlag && st.tags < maxFlagTag && flagTag(r):
		st.tags++
		return true
	case st.inFlag && st.tags > 0 && r == tagCancel:
		st.inFlag = false
		return true
	}
	st.inFlag = false
	return plain(r)
}

// appendRune writes r as it shows, for a character that is not white
// space; the caller has dealt with line breaks.
func (st *state) appendRune(b []byte, r rune) []byte {
	if st.shows(r) {
		return utf8.AppendRune(b, r)
	}
	return appendRuneEscape(b, r)
}

// appendText writes s as Text shows it, carrying the state across calls.
func (st *state) appendText(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		afterCR := st.afterCR
		st.afterCR = false
		if r == utf8.RuneError && size == 1 {
			b = appendByteEscape(b, s[i])
			st.inFlag = false
			i++
			continue
		}
		i += size
		switch r {
		case '\n':
			st.inFlag = false
			if !afterCR {
				b = append(b, '\n')
			}
		case '\r':
			st.inFlag = false
			st.afterCR = true
			b = append(b, '\n')
		case 0x85, 0x2028, 0x2029: // NEL, line and paragraph separators
			st.inFlag = false
			b = append(b, '\n')
		case '\t':
			st.inFlag = false
			b = append(b, '\t')
		default:
			b = st.appendRune(b, r)
		}
	}
	return b
}

// appendByteEscape writes a byte as \xNN.
func appendByteEscape(b []byte, c byte) []byte {
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendRuneEscape writes a character as Go writes it in a string literal:
// \x1b below U+0080, \u202e up to U+FFFF, \U000e0041 above.
func appendRuneEscape(b []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return appendByteEscape(b, byte(r))
	case r <= 0xffff:
		b = append(b, '\\', 'u')
		for shift := 12; shift >= 0; shift -= 4 {
			b = append(b, hexDigits[r>>shift&0xf])
		}
		return b
	}
	b = append(b, '\\', 'U')
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[r>>shift&0xf])
	}
	return b
}
