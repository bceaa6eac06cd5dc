package score

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// spaces is what starts-with trims from the left of the answer.
const spaces = " \t\r\n\v\f\u00a0\u2028\u2029\ufeff"

// clipRunes is about how much of a text a reason quotes.
const clipRunes = 80

// clip cuts s to about 80 characters, marking the cut with "…".
func clip(s string) string {
	if utf8.RuneCountInString(s) <= clipRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == clipRunes-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// quoteAny is a list of accepted texts for a reason: "a", "a" or "b", or
// "a", "b" or 3 more.
func quoteAny(vals []string) string {
	const shown = 3
	var b strings.Builder
	for i, v := range vals {
		if i == shown && len(vals) > shown+1 {
			fmt.Fprintf(&b, " or %d more", len(vals)-shown)
			break
		}
		if i > 0 {
			if i == len(vals)-1 {
				b.WriteString(" or ")
			} else {
				b.WriteString(", ")
			}
		}
		fmt.Fprintf(&b, "%q", clip(v))
	}
	return b.String()
}

// oneLine makes s fit on one line of a report, cut to about 160 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 2*clipRunes {
		r := []rune(s)
		s = string(r[:2*clipRunes-1]) + "…"
	}
	return s
}

// fold maps s to a case-free form by Unicode simple case folding: every
// rune becomes the smallest rune of its folding orbit, so that K, k and
// the Kelvin sign K, or Σ, σ and ς, all compare equal. (Full folding, as
// of ß to ss, is not done.)
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}
