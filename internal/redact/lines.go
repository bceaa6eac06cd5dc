package redact

import (
	"slices"
	"strings"
)

// A span is a secret's place in a line, and the rule that found it.
type span struct {
	start, end int
	rule       string
}

// lineState is what one line tells the scanners of the next.
type lineState struct {
	// armored is set inside a block of public key material, a certificate
	// or a signature: base64 that is random and no secret.
	armored bool
	// pendingName is the category of a secret named on the line before,
	// as in a Kubernetes env entry: "- name: DB_PASSWORD" then "value: ...".
	pendingName category
}

// minRepeatLen is the shortest secret replaced wherever else it occurs: a
// short password such as "admin" is also an ordinary word.
const minRepeatLen = 8

// maxRepeated bounds the secrets searched for again in a whole text, each
// search reading all of it: a text holding more is generated data.
const maxRepeated = 64

// redactLines runs digest's own rules over each line of text.
func redactLines(text string, counts Counts) string {
	lower := asciiLower(text)
	var (
		b       strings.Builder
		written int // text[:written] is in b
		spans   []span
		state   lineState
		found   []span // the secrets, as spans of text, for repeatSecrets
	)
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		line, lline := text[start:end], lower[start:end]
		spans = scanLine(line, lline, spans[:0], &state)
		if len(spans) > 0 {
			spans = dropOverlaps(spans)
			for _, s := range spans {
				b.WriteString(text[written : start+s.start])
				b.WriteString(Marker(s.rule))
				written = start + s.end
				counts[s.rule]++
				found = append(found, span{start + s.start, start + s.end, s.rule})
			}
		}
		start = end + 1
	}
	if len(found) == 0 {
		return text
	}
	b.WriteString(text[written:])
	return repeatSecrets(text, b.String(), found, counts)
}

// scanLine appends the secrets in one line to spans.
func scanLine(line, lower string, spans []span, state *lineState) []span {
	if strings.HasPrefix(line, "diff --git ") {
		*state = lineState{}
		return spans
	}
	marks := findMarkers(line)
	spans = scanURLPasswords(line, spans)
	spans = scanCommandLines(line, lower, spans)
	spans = scanAssignments(line, lower, marks, spans, state)
	spans = scanBearer(line, spans)
	wasArmored := state.armored
	if i := strings.Index(line, "-----BEGIN "); i >= 0 && !strings.Contains(line[i:], "PRIVATE") {
		state.armored = true
	}
	if strings.Contains(line, "-----END ") {
		state.armored = false
	}
	if !wasArmored && !state.armored {
		spans = scanTokens(line, marks, dropOverlaps(spans))
	}
	if len(marks) == 0 {
		return spans
	}
	// A marker is never part of a secret: rules that read to a colon
	// (curl -u user:PASS) would otherwise take the one inside a marker
	// for theirs, and a second pass would change the first one's output.
	return slices.DeleteFunc(spans, func(s span) bool { return marks.overlap(s) })
}

// markers are the places of the markers in a line, in order: a rule's name
// such as "password-assignment" is no key, and a marker no token.
type markers []span

func findMarkers(line string) markers {
	var m markers
	for from := 0; ; {
		i := strings.Index(line[from:], markerPrefix)
		if i < 0 {
			return m
		}
		start := from + i
		end := strings.IndexByte(line[start:], ']')
		if end < 0 {
			return m
		}
		m = append(m, span{start: start, end: start + end + 1})
		from = start + end + 1
	}
}

// contain reports whether line[at] is within a marker.
func (m markers) contain(at int) bool {
	i, _ := slices.BinarySearchFunc(m, at, func(s span, at int) int { return s.end - 1 - at })
	return i < len(m) && m[i].start <= at
}

// overlap reports whether s shares a byte with a marker.
func (m markers) overlap(s span) bool {
	i, _ := slices.BinarySearchFunc(m, s.start, func(mk span, at int) int { return mk.end - 1 - at })
	return i < len(m) && m[i].start < s.end
}

// dropOverlaps sorts spans and keeps, of overlapping ones, the first.
func dropOverlaps(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	kept := spans[:1]
	for _, s := range spans[1:] {
		if s.start >= kept[len(kept)-1].end {
			kept = append(kept, s)
		}
	}
	return kept
}

// repeatSecrets replaces in redacted the other occurrences of the secrets
// found in text: the same password in a test a few lines on is as secret.
// Only whole tokens are replaced, and only secrets long and odd enough not
// to be ordinary words.
func repeatSecrets(text, redacted string, found []span, counts Counts) string {
	seen := map[string]bool{}
	for _, f := range found {
		secret := text[f.start:f.end]
		if seen[secret] || !repeatable(secret) {
			continue
		}
		if len(seen) == maxRepeated {
			break
		}
		seen[secret] = true
		if !strings.Contains(redacted, secret) {
			continue
		}
		var b strings.Builder
		marks, marker := findMarkers(redacted), Marker(f.rule)
		from := 0 // redacted[:from] is in b
		for at := 0; ; {
			i := strings.Index(redacted[at:], secret)
			if i < 0 {
				break
			}
			i += at
			j := i + len(secret)
			at = j
			if (i > 0 && isAlnum(redacted[i-1])) || (j < len(redacted) && isAlnum(redacted[j])) || marks.contain(i) {
				continue
			}
			b.WriteString(redacted[from:i])
			b.WriteString(marker)
			from = j
			counts[f.rule]++
		}
		if from > 0 {
			b.WriteString(redacted[from:])
			redacted = b.String()
		}
	}
	return redacted
}

// repeatable is a secret odd enough that its other occurrences are it too:
// not a word, and not a name a program would use for something else.
func repeatable(secret string) bool {
	if len(secret) < minRepeatLen {
		return false
	}
	return !isIdentLike(secret) || strings.IndexFunc(secret, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// asciiLower lowers ASCII letters only, so that offsets in the result are
// offsets in s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
