package offline_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
)

// highlightsOf asks the offline model for the highlights of changes, as
// summarize does, twice: the answer must not change.
func highlightsOf(t *testing.T, changes []prompt.HighlightInput) []string {
	t.Helper()
	p, _ := newProvider(t)
	req, _ := prompt.Highlights("offline", changes)
	first, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := p.Complete(context.Background(), req)
	if first.Text != again.Text || first.Usage.InputTokens == 0 || first.Usage.OutputTokens == 0 {
		t.Errorf("answers %q then %q, usage %+v", first.Text, again.Text, first.Usage)
	}
	return prompt.ParseHighlights(first.Text)
}

// TestOfflineHighlightsPickTheLargestNotableChanges: breaking changes
// first, then features and fixes by the size of their diffs, each its
// summary's first sentence after its scope, the commit's prefix dropped.
func TestOfflineHighlightsPickTheLargestNotableChanges(t *testing.T) {
	got := highlightsOf(t, []prompt.HighlightInput{
		{Type: "docs", Summary: "Documents every flag. Long.", DiffTokens: 5000},
		{Type: "fix", Summary: "fix: stops a crash on empty input. The handler panicked.", DiffTokens: 40},
		{Type: "feat", Scope: "client", Summary: "feat(client): add retries (#12). Backoff is capped at 8 s.", DiffTokens: 900},
		{Type: "refactor", Scope: "parser", Breaking: true, Summary: "Rewrites the parser, e.g. its lexer. Tokens are now typed.", DiffTokens: 10},
		{Type: "feat", Summary: "Adds a progress bar.", DiffTokens: 300},
		{Type: "test", Summary: "Tests the client.", DiffTokens: 2000},
	})
	want := []string{
		"parser (breaking): Rewrites the parser, e.g. its lexer.",
		"client: Add retries (#12).",
		"Adds a progress bar.",
		"Stops a crash on empty input.",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestOfflineHighlightsAreThreeToSix: a release of many features keeps the
// six largest; one of few notable changes is made up to three with the
// largest others.
func TestOfflineHighlightsAreThreeToSix(t *testing.T) {
	var many []prompt.HighlightInput
	for i := range 9 {
		many = append(many, prompt.HighlightInput{Type: "feat", Summary: fmt.Sprintf("Adds feature %d.", i), DiffTokens: i * 10})
	}
	if got := highlightsOf(t, many); !slices.Equal(got, []string{"Adds feature 8.", "Adds feature 7.", "Adds feature 6.", "Adds feature 5.", "Adds feature 4.", "Adds feature 3."}) {
		t.Errorf("nine features: %q", got)
	}
	few := []prompt.HighlightInput{
		{Type: "docs", Summary: "Documents a.", DiffTokens: 10},
		{Type: "fix", Summary: "Fixes b.", DiffTokens: 1},
		{Type: "ci", Summary: "Runs c.", DiffTokens: 30},
		{Type: "chore", Summary: "Tidies d.", DiffTokens: 20},
	}
	if got := highlightsOf(t, few); !slices.Equal(got, []string{"Fixes b.", "Runs c.", "Tidies d."}) {
		t.Errorf("one fix among chores: %q", got)
	}
}
