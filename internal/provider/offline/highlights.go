package offline

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/prompt"
)

// maxHighlightRunes keeps an extractive highlight to a short sentence.
const maxHighlightRunes = 120

// Highlights picks a release's highlights without a model: its breaking
// changes, features and fixes, largest diff first, at most
// prompt.MaxHighlights of them; when they are fewer than
// prompt.MinHighlights, the largest other changes make up the number. Each
// is the first sentence of the change's summary, after its scope.
func Highlights(changes []prompt.HighlightInput) []string {
	notable := func(c prompt.HighlightInput) bool { return c.Breaking || c.Type == "feat" || c.Type == "fix" }
	rank := func(c prompt.HighlightInput) int {
		switch {
		case c.Breaking:
			return 0
		case notable(c):
			return 1 // features and fixes compete on size alone
		}
		return 2
	}
	order := slices.Clone(changes)
	slices.SortStableFunc(order, func(a, b prompt.HighlightInput) int {
		return cmp.Or(rank(a)-rank(b), b.DiffTokens-a.DiffTokens)
	})
	var out []string
	for _, c := range order {
		if len(out) == prompt.MaxHighlights || !notable(c) && len(out) >= prompt.MinHighlights {
			break
		}
		s := shortSentence(c.Summary)
		if s == "" || slices.Contains(out, highlight(c, s)) {
			continue
		}
		out = append(out, highlight(c, s))
	}
	return out
}

func highlight(c prompt.HighlightInput, sentence string) string {
	label := c.Scope
	if c.Breaking {
		label = strings.TrimSpace(label + " (breaking)")
	}
	if label == "" {
		return sentence
	}
	return label + ": " + sentence
}

// conventionalPrefix is the "type(scope)!: " a summary taken from a
// commit subject starts with: the highlight names the scope itself.
var conventionalPrefix = regexp.MustCompile(`^[A-Za-z]+(?:\([^()]*\))?!?:\s+`)

// shortSentence is a summary's first sentence, without a conventional
// commit prefix, capitalized, cut at a word past maxHighlightRunes.
func shortSentence(summary string) string {
	s := firstSentence(strings.Join(strings.Fields(summary), " "))
	s = conventionalPrefix.ReplaceAllString(s, "")
	if r, n := utf8.DecodeRuneInString(s); n > 0 {
		s = string(unicode.ToUpper(r)) + s[n:]
	}
	if utf8.RuneCountInString(s) <= maxHighlightRunes {
		return s
	}
	cut := string([]rune(s)[:maxHighlightRunes])
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return cut + "…"
}
