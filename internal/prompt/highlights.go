package prompt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/provider"
)

// HighlightsVersion names the highlights prompt in the cache: change its
// wording or the way the changes are listed, bump it.
const HighlightsVersion = "highlights-v1"

// A section's highlights are 3 to 6 bullets, each a sentence: the answer
// needs far fewer tokens than HighlightsMaxTokens, which only bounds a
// model that rambles.
const (
	MinHighlights       = 3
	MaxHighlights       = 6
	HighlightsMaxTokens = 400
)

// A release of thousands of commits must still fit one request: the
// changes are listed most important first, up to maxHighlightEntries, each
// summary cut to maxHighlightSummary bytes (its first sentences, which are
// all a highlight is made of).
const (
	maxHighlightEntries = 100
	maxHighlightSummary = 400
	maxHighlightRunes   = 240 // one bullet as read from an answer
)

var highlightsSystem = fmt.Sprintf(`You write the highlights of a software release for its release notes.
You are given the changes the release holds, one JSON object per line: the
kind of change ("type"), the area it changes ("scope"), whether users of the
code must change something ("breaking"), the size of its diff in tokens
("diff_tokens") and a summary of it.

Pick the %d to %d changes its users most need to know about: breaking changes
first, then the largest features and fixes. Write one short sentence for each,
in the present tense, naming its area. Say nothing the summaries do not say.

Answer with only a JSON array of %d to %d strings, one per highlight:
["<highlight>", "<highlight>", "<highlight>"]`, MinHighlights, MaxHighlights, MinHighlights, MaxHighlights)

// HighlightInput is one change of a release section, as the highlights
// request lists it.
type HighlightInput struct {
	Commit     string `json:"-"` // keys the cache; the model is not told it
	Type       string `json:"type"`
	Scope      string `json:"scope"`
	Breaking   bool   `json:"breaking"`
	DiffTokens int    `json:"diff_tokens"`
	Summary    string `json:"summary"`
}

// highlightRank orders the kinds of change as release notes group them,
// breaking changes first.
func highlightRank(in HighlightInput) int {
	if in.Breaking {
		return 0
	}
	if i := slices.Index([]string{"feat", "fix", "perf", "refactor", "docs", "test", "build", "ci"}, in.Type); i >= 0 {
		return i + 1
	}
	return 9
}

// Highlights builds the highlights request for a section's changes. They
// are listed in one canonical order (breaking changes, features, fixes and
// on, each largest first), so the same set of changes always makes the same
// request; listed is that order, cut to what the request holds, for keying
// the answer.
func Highlights(model string, changes []HighlightInput) (req provider.Request, listed []HighlightInput) {
	listed = make([]HighlightInput, len(changes))
	for i, c := range changes {
		c.Summary = cutSummary(c.Summary)
		listed[i] = c
	}
	slices.SortStableFunc(listed, func(a, b HighlightInput) int {
		if d := highlightRank(a) - highlightRank(b); d != 0 {
			return d
		}
		if a.DiffTokens != b.DiffTokens {
			return b.DiffTokens - a.DiffTokens
		}
		return strings.Compare(a.Commit, b.Commit)
	})
	omitted := max(0, len(listed)-maxHighlightEntries)
	listed = listed[:len(listed)-omitted]
	var b bytes.Buffer
	if len(changes) == 1 {
		b.WriteString("Write the highlights of this change.\n\n")
	} else {
		fmt.Fprintf(&b, "Write the highlights of these %d changes.\n\n", len(changes))
	}
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, c := range listed {
		enc.Encode(c) // a struct of strings, ints and bools: never fails
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n(and %d smaller changes not listed)\n", omitted)
	}
	return provider.Request{
		Model:     model,
		System:    highlightsSystem,
		Messages:  []provider.Message{{Role: "user", Content: b.String()}},
		MaxTokens: HighlightsMaxTokens,
	}, listed
}

// cutSummary is a summary as one line of at most maxHighlightSummary
// bytes, ending at a word when one is near.
func cutSummary(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxHighlightSummary {
		return s
	}
	end := maxHighlightSummary
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	if i := strings.LastIndexByte(s[:end], ' '); i >= end/2 {
		end = i
	}
	return s[:end] + "…"
}

// ReadHighlights reads the changes back out of a highlights request: the
// offline provider answers from them, as a hosted model reads the same
// text. ok is false for any other request.
func ReadHighlights(system string, messages []provider.Message) (changes []HighlightInput, ok bool) {
	if system != highlightsSystem {
		return nil, false
	}
	for _, m := range messages {
		if m.Role != "user" {
			continue
		}
		for _, line := range strings.Split(m.Content, "\n") {
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var c HighlightInput
			if json.Unmarshal([]byte(line), &c) == nil {
				changes = append(changes, c)
			}
		}
	}
	return changes, true
}

// FormatHighlights writes highlights in the form the prompt asks for.
func FormatHighlights(bullets []string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(bullets)
	return strings.TrimSpace(b.String())
}

// bulletLine is a line of a Markdown or numbered list: "- x", "* x", "• x",
// "1. x", "2) x".
var bulletLine = regexp.MustCompile(`^\s*(?:[-*•+]|\d{1,2}[.)])\s+(.*)$`)

// ParseHighlights reads the bullets out of a model's answer: the first JSON
// array of strings in it (inside a code fence or chatter), or else its list
// lines. Each bullet is one trimmed line of at most maxHighlightRunes
// runes; empty ones (no letter or digit) and repeated ones are dropped, and
// at most MaxHighlights are kept. An answer with none gives nil: the
// section goes without.
func ParseHighlights(text string) []string {
	items, ok := jsonStrings(text)
	if !ok {
		for _, line := range strings.Split(text, "\n") {
			if m := bulletLine.FindStringSubmatch(line); m != nil {
				items = append(items, m[1])
			}
		}
	}
	var out []string
	for _, item := range items {
		item = cleanBullet(item)
		if !strings.ContainsFunc(item, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) || slices.Contains(out, item) {
			continue
		}
		out = append(out, item)
		if len(out) == MaxHighlights {
			break
		}
	}
	return out
}

// jsonStrings finds the first '[' from which a JSON array decodes whose
// elements are strings, or objects holding one under a name a model might
// choose ("text", "highlight", "summary"), and returns those strings.
func jsonStrings(text string) ([]string, bool) {
	for i := 0; i < len(text); i++ {
		j := strings.IndexByte(text[i:], '[')
		if j < 0 {
			break
		}
		i += j
		var raw []json.RawMessage
		if json.NewDecoder(strings.NewReader(text[i:])).Decode(&raw) != nil {
			continue
		}
		var out []string
		for _, r := range raw {
			var s string
			if json.Unmarshal(r, &s) == nil {
				out = append(out, s)
				continue
			}
			var o struct{ Text, Highlight, Summary string }
			if json.Unmarshal(r, &o) == nil {
				out = append(out, cmp.Or(o.Text, o.Highlight, o.Summary))
			}
		}
		if len(out) > 0 {
			return out, true
		}
	}
	return nil, false
}

// cleanBullet is one bullet as one line: whitespace runs made one space,
// the list markers and quotes a model wrapped it in taken off, cut to
// maxHighlightRunes at a word. Cleaning a clean bullet changes nothing.
func cleanBullet(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	for {
		was := s
		if m := bulletLine.FindStringSubmatch(s); m != nil {
			s = m[1]
		}
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			s = strings.TrimSpace(s[1 : len(s)-1])
		}
		if s == was {
			break
		}
	}
	if utf8.RuneCountInString(s) <= maxHighlightRunes {
		return s
	}
	cut := string([]rune(s)[:maxHighlightRunes-1]) // and the ellipsis
	if i := strings.LastIndexByte(cut, ' '); i >= len(cut)/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
