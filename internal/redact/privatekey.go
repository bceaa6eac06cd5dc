package redact

import (
	"regexp"
	"strings"
)

const privateKeyRule = "private-key"

var (
	privateKeyBegin = regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	privateKeyEnd   = regexp.MustCompile(`-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
)

// keyStops are the lines that end a file's part of what is sent: the next
// file's diff, digest's note that the budget cut the diff or message, and
// the line that closes a commit in a prompt.
var keyStops = []string{"\ndiff --git ", "\n[digest: ", "\n=== end ", "\n=== commit "}

// redactPrivateKeys replaces each private key block, from its BEGIN line to
// its END line. gitleaks needs both ends and a long enough body; a diff cut
// to the token budget can end inside a key, and what remains of it is still
// secret, so a block without an end is replaced up to the end of its file's
// part, keeping the line break before whatever follows, so that a budget
// note or a prompt's closing line stay whole lines of their own. A key
// written on one line, a string literal with escaped line breaks, ends with
// its line.
func redactPrivateKeys(text string, counts Counts) string {
	if !strings.Contains(text, "PRIVATE KEY") {
		return text
	}
	var b strings.Builder
	for {
		loc := privateKeyBegin.FindStringIndex(text)
		if loc == nil {
			break
		}
		b.WriteString(text[:loc[0]])
		rest := text[loc[1]:]
		b.WriteString(Marker(privateKeyRule))
		counts[privateKeyRule]++
		text = rest[keyEnd(rest):]
	}
	if b.Len() == 0 {
		return text
	}
	b.WriteString(text)
	return b.String()
}

// keyEnd is where the key whose BEGIN line rest follows ends in rest.
// Its END line counts only before its file's part ends: an END further on
// closes another key.
func keyEnd(rest string) int {
	part := len(rest)
	for _, stop := range keyStops {
		if i := strings.Index(rest[:part], stop); i >= 0 {
			part = i
		}
	}
	if e := privateKeyEnd.FindStringIndex(rest[:part]); e != nil {
		return e[1]
	}
	lineEnd := strings.IndexByte(rest, '\n')
	if lineEnd < 0 {
		return len(rest)
	}
	if strings.TrimSpace(strings.Trim(rest[:lineEnd], "\"'`,;)")) != "" {
		return lineEnd // the key's body followed on its BEGIN line
	}
	if part == len(rest) && strings.HasSuffix(rest, "\n") {
		part-- // the text's own last line break stays too
	}
	return part
}
