package score

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// answerNumber is the number an answer gives: the first number after the
// last "####" (GSM8K's answer mark) when there is one, else the last number
// in the text.
//
// A number is ASCII digits with an optional fraction (".5", "3.25"),
// optional thousands separators in groups of three ("1,234,567", but
// "1,2,3" is three numbers) and an optional exponent ("1.5e3"). A minus
// ("-" or the sign "−") counts when it directly precedes the digits, or a
// currency symbol before them ("-$3.50"), and does not follow a letter or
// digit: "-3" is negative, "10-20" ends in 20, "COVID-19" in
// 19. Currency symbols ($ € £ ¥) before and a percent sign after are
// ignored: "$72" and "72%" are 72.
func answerNumber(s string) (float64, bool) {
	if i := strings.LastIndex(s, "####"); i >= 0 {
		if v, ok := firstNumber(s[i+4:]); ok {
			return v, true
		}
	}
	return lastNumber(s)
}

func firstNumber(s string) (float64, bool) {
	v, _, ok := nextNumber(s, 0)
	return v, ok
}

func lastNumber(s string) (v float64, ok bool) {
	for i := 0; ; {
		n, end, found := nextNumber(s, i)
		if !found {
			return v, ok
		}
		v, ok, i = n, true, end
	}
}

// nextNumber finds the first number in s at or after byte from, returning
// its value and the byte offset just past it.
func nextNumber(s string, from int) (v float64, end int, ok bool) {
	for i := from; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !(c == '.' && i+1 < len(s) && isDigit(s[i+1])) {
			continue
		}
		start, j := i, i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		// Thousands separators, only after 1 to 3 leading digits and only
		// in whole groups of three.
		if n := j - start; n >= 1 && n <= 3 {
			for j+4 <= len(s) && s[j] == ',' && isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) &&
				(j+4 == len(s) || !isDigit(s[j+4])) {
				j += 4
			}
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j++
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		// An exponent only when digits follow it and no letter after them:
		// "2e5" but not "3eggs".
		if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
			k := j + 1
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				k++
			}
			if k < len(s) && isDigit(s[k]) {
				m := k
				for m < len(s) && isDigit(s[m]) {
					m++
				}
				if m == len(s) || !isLetterAt(s, m) {
					j = m
				}
			}
		}
		text := strings.ReplaceAll(s[start:j], ",", "")
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !math.IsInf(f, 0) {
			// Cannot happen for the digits scanned above, but skip
			// rather than misread.
			i = j - 1
			continue
		}
		if negative(s, start) {
			f = -f
		}
		return f, j, true
	}
	return 0, len(s), false
}

// negative is whether the number starting at byte start of s has a minus
// sign: directly before it or before a currency symbol before it, and not
// after a letter or digit.
func negative(s string, start int) bool {
	p := start
	for _, cur := range []string{"$", "€", "£", "¥"} {
		if strings.HasSuffix(s[:p], cur) {
			p -= len(cur)
			break
		}
	}
	var signLen int
	switch {
	case strings.HasSuffix(s[:p], "-"):
		signLen = 1
	case strings.HasSuffix(s[:p], "−"): // U+2212 MINUS SIGN
		signLen = len("−")
	default:
		return false
	}
	p -= signLen
	if p == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:p])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isLetterAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r)
}

// expectedNumbers reads the expected numbers of a numeric assertion, each
// text read as an answer is (so "#### 72", "$1,234" and "72%" all work).
func expectedNumbers(vals []string) ([]float64, error) {
	var nums []float64
	for _, v := range vals {
		n, ok := answerNumber(v)
		if !ok {
			return nil, fmt.Errorf("expected %q has no number", clip(v))
		}
		nums = append(nums, n)
	}
	return nums, nil
}

// fmtNum writes a number for a reason: 72, -3.5, 1234, 1e+21.
func fmtNum(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
