package redact

//go:generate go run gen_bigrams.go

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

const highEntropyRule = "high-entropy-string"

// minTokenLen is the shortest bare token judged by its looks: shorter
// random strings are rarely credentials, and often a word and a number.
const minTokenLen = 20

// A token reads as random when it breaks into many short pieces at case
// and digit changes and its letters pair unlike the words of names do.
// Random base62 and base64 of 20 characters and more break about every 2
// characters, and under 1% of them less often than every 3.3; their letter
// pairs score -2.7 bits on the mean, and under 1% of them above 0. Names
// such as TestIterEncodedObjectsSHA256HashesRoundTrip break every 4 to 6,
// into words whose pairs score 1.2 bits and more. Shannon entropy cannot
// tell them apart at these lengths: the rule before, 4.3 bits a character,
// let 62% of random base62 tokens of 24 characters through.
// TestHighEntropyRuleCatchesRandomTokensAndSparesIdentifiers measures this.
const (
	randomBreaks     = 0.30 // pieces per character above which a token is random...
	randomMaxBigram  = 10   // ...unless its letters pair as words do, in tenths of a bit
	looseBreaks      = 0.25 // pieces per character above which a token whose...
	looseMaxBigram   = 5    // ...letters pair no better than this is random too
	minTokenEntropy  = 3.0  // bits per character: aAaAaA... is no credential
	maxHexShare      = 0.85 // tokens this hexadecimal are hashes and object names
	minDecodedLength = 8    // bytes of decoded base64 worth reading as text
)

// scanTokens appends to spans the bare tokens of line that read as random:
// keys pasted with no name before them. Hashes, identifiers, paths, hash-
// built URLs, encoded text and public keys are left alone.
func scanTokens(line string, marks markers, spans []span) []span {
	earlier := len(spans) // the spans of other rules, in order
	// Whether a token is in a URL: a "://" since the last character that
	// ends a URL.
	urlAt, urlEnd := -1, -1
	for i := 0; i < len(line); {
		if !isTokenChar(line[i]) {
			switch c := line[i]; {
			case c == ':' && strings.HasPrefix(line[i:], "://"):
				urlAt = i
			case strings.IndexByte(" \t\"'`<>(", c) >= 0:
				urlEnd = i
			}
			i++
			continue
		}
		start := i
		for i < len(line) && isTokenChar(line[i]) {
			i++
		}
		end := i
		for i < len(line) && line[i] == '=' && i-end < 2 {
			i++
		}
		padded := i
		run := start
		for start < end && !isAlnum(line[start]) {
			start++ // a diff's +, a path's leading /
		}
		if end-start < minTokenLen || overlaps(spans[:earlier], start, end) || marks.contain(start) {
			continue
		}
		if urlAt > urlEnd {
			spans = scanURLPath(line, start, end, spans)
			continue
		}
		if looksRandom(line[start:padded], line[:run]) {
			spans = append(spans, span{start, padded, highEntropyRule})
		}
	}
	return spans
}

func isTokenChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '_' || c == '-'
}

// overlaps reports whether line[start:end] overlaps one of spans, which
// are in order and do not overlap each other.
func overlaps(spans []span, start, end int) bool {
	i, _ := slices.BinarySearchFunc(spans, start, func(s span, at int) int { return s.end - 1 - at })
	return i < len(spans) && spans[i].start < end
}

// scanURLPath judges each part of a URL's path on its own, so that a commit
// hash in it does not make its words random.
func scanURLPath(line string, start, end int, spans []span) []span {
	for start < end {
		next := strings.IndexByte(line[start:end], '/')
		partEnd := end
		if next >= 0 {
			partEnd = start + next
		}
		if partEnd-start >= minTokenLen && looksRandom(line[start:partEnd], line[:start]) {
			spans = append(spans, span{start, partEnd, highEntropyRule})
		}
		start = partEnd + 1
	}
	return spans
}

// hashPrefixes come before a hash written in base64 rather than hex: go.sum's
// h1:, an SSH key's SHA256: fingerprint; and before a data URI's content.
var hashPrefixes = []string{"h1:", "sha1:", "sha256:", "sha384:", "sha512:", "md5:", ";base64,"}

// looksRandom judges one token; before is the text before it on its line.
func looksRandom(tok, before string) bool {
	lowerBefore := asciiLower(before[max(0, len(before)-8):])
	for _, p := range hashPrefixes {
		if strings.HasSuffix(lowerBefore, p) {
			return false
		}
	}
	lowerTok := asciiLower(tok[:min(len(tok), 8)])
	for _, p := range []string{"sha1-", "sha256-", "sha384-", "sha512-"} {
		if strings.HasPrefix(lowerTok, p) {
			return false // a subresource integrity hash
		}
	}
	body := strings.TrimRight(tok, "=")
	var upper, lower, digits, hex int
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case isUpper(c):
			upper++
		case isLower(c):
			lower++
		case isDigit(c):
			digits++
		}
		if isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' {
			hex++
		}
	}
	classes := 0
	for _, n := range []int{upper, lower, digits} {
		if n > 0 {
			classes++
		}
	}
	if classes < 2 || float64(hex) >= maxHexShare*float64(upper+lower+digits) {
		return false
	}
	if entropy(body) < minTokenEntropy || encodesTextOrPublicKey(tok) {
		return false
	}
	breaks, bigram := pieces(body)
	perChar := float64(breaks) / float64(upper+lower+digits)
	return perChar >= randomBreaks && bigram < randomMaxBigram ||
		perChar >= looseBreaks && bigram < looseMaxBigram
}

// pieces breaks a token as a name reads: at a change from letters to
// digits, before a capital starting a word, keeping a run of hex of 7 or
// more (a hash in a path) whole. Punctuation separates the parts of a path
// or a name, and adds no piece: go-git/go-billy/v5 is 2 pieces, not 6. It
// returns how many pieces there are and the mean bigram score of the
// letters paired within them, in tenths of a bit (very low when there are
// none).
func pieces(tok string) (n int, bigram float64) {
	var score, pairs int
	n = 1
	for _, part := range strings.FieldsFunc(tok, func(r rune) bool { return r == '+' || r == '/' || r == '_' || r == '-' }) {
		if len(part) >= 7 && (isHexString(part) || part[0] == 'g' && isHexString(part[1:])) {
			continue // a hash, or git describe's g and a hash
		}
		for i := 1; i < len(part); i++ {
			p, c := part[i-1], part[i]
			switch {
			case charClass(p) != charClass(c) && !(isUpper(p) && isLower(c)):
				n++
				continue
			case isUpper(p) && isUpper(c) && i+1 < len(part) && isLower(part[i+1]):
				n++
				continue
			}
			if isLetter(p) && isLetter(c) {
				score += int(bigramScore[(p|0x20)-'a'][(c|0x20)-'a'])
				pairs++
			}
		}
	}
	if pairs == 0 {
		return n, math.Inf(-1)
	}
	return n, float64(score) / float64(pairs)
}

func charClass(c byte) int {
	switch {
	case isUpper(c):
		return 0
	case isLower(c):
		return 1
	case isDigit(c):
		return 2
	}
	return 3
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// encodesTextOrPublicKey reports base64 that decodes to text (a fixture, a
// sentence), or to an SSH public key or signature: random-looking, no secret.
func encodesTextOrPublicKey(tok string) bool {
	body := strings.TrimRight(tok, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(body, "-_") {
		enc = base64.RawURLEncoding
	}
	if len(body)%4 == 1 {
		body = body[:len(body)-1] // no base64 ends so: the token is cut
	}
	decoded, err := enc.DecodeString(body)
	if err != nil || len(decoded) < minDecodedLength {
		return false
	}
	if string(decoded[:min(6, len(decoded))]) == "SSHSIG" {
		return true
	}
	if n := binary.BigEndian.Uint32(decoded); n >= 7 && n <= 40 && int(n)+4 <= len(decoded) {
		name := string(decoded[4 : 4+n])
		if strings.HasPrefix(name, "ssh-") || strings.HasPrefix(name, "ecdsa-") || strings.HasPrefix(name, "sk-") {
			return true
		}
	}
	if !utf8.Valid(decoded) {
		return false
	}
	var space, letters bool
	for _, r := range string(decoded) {
		switch {
		case r == ' ' || r == '\n' || r == '\t' || r == '\r':
			space = true
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			return false
		case unicode.IsLetter(r):
			letters = true
		}
	}
	// Text with words in it; or, without spaces, text that does not itself
	// read as random: the base64 of a key is still a secret.
	return letters && (space || !looksRandom(string(decoded), ""))
}

// entropy is the Shannon entropy of s's characters, in bits per character.
func entropy(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range freq {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
