package prompt_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

func changes() []prompt.HighlightInput {
	return []prompt.HighlightInput{
		{Commit: h1, Type: "docs", Summary: "Documents the flags.", DiffTokens: 900},
		{Commit: h2, Type: "feat", Scope: "client", Summary: "Adds retries (#12).\nBackoff is capped.", DiffTokens: 300},
		{Commit: h3, Type: "fix", Summary: `Fixes a crash on "<empty>" input.`, DiffTokens: 50},
		{Commit: h4, Type: "refactor", Breaking: true, Scope: "parser", Summary: "Rewrites the parser.", DiffTokens: 10},
		{Commit: strings.Repeat("5", 40), Type: "feat", Summary: "Adds a bigger feature.", DiffTokens: 700},
	}
}

// TestHighlightsRequestRoundTrip: the request lists the changes breaking
// first, then by kind, each kind largest first, one line each, and the
// offline model reads back exactly what was listed.
func TestHighlightsRequestRoundTrip(t *testing.T) {
	req, listed := prompt.Highlights("some-model", changes())
	if req.Model != "some-model" || req.MaxTokens != prompt.HighlightsMaxTokens {
		t.Errorf("model %q, max tokens %d", req.Model, req.MaxTokens)
	}
	var order []string
	for _, c := range listed {
		order = append(order, c.Summary)
	}
	want := []string{"Rewrites the parser.", "Adds a bigger feature.", "Adds retries (#12). Backoff is capped.", `Fixes a crash on "<empty>" input.`, "Documents the flags."}
	if !slices.Equal(order, want) {
		t.Errorf("listed in the order\n%q\nwant\n%q", order, want)
	}
	if !strings.HasPrefix(req.Messages[0].Content, "Write the highlights of these 5 changes.\n\n") || strings.Contains(req.Messages[0].Content, h1) {
		t.Errorf("request text:\n%s", req.Messages[0].Content)
	}
	got, ok := prompt.ReadHighlights(req.System, req.Messages)
	if !ok {
		t.Fatal("the highlights request is not recognised")
	}
	for i := range listed {
		listed[i].Commit = "" // never sent
	}
	if !reflect.DeepEqual(got, listed) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, listed)
	}
	if _, ok := prompt.ReadHighlights(prompt.Request("m", []prompt.Commit{commit1()}).System, req.Messages); ok {
		t.Error("a commit-summary request is taken for a highlights request")
	}
}

// TestHighlightsRequestIsOfTheSet: the same changes in any order make the
// same request, so its answer is cached under the set.
func TestHighlightsRequestIsOfTheSet(t *testing.T) {
	a, _ := prompt.Highlights("m", changes())
	reversed := changes()
	slices.Reverse(reversed)
	b, _ := prompt.Highlights("m", reversed)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("order changed the request:\n%s\n---\n%s", a.Messages[0].Content, b.Messages[0].Content)
	}
}

// TestHighlightsRequestStaysBounded: a release of hundreds of commits, some
// with long summaries, lists the most important 100, each summary cut.
func TestHighlightsRequestStaysBounded(t *testing.T) {
	var many []prompt.HighlightInput
	for i := range 150 {
		many = append(many, prompt.HighlightInput{Commit: fmt.Sprintf("%040d", i), Type: "fix", DiffTokens: i,
			Summary: strings.Repeat("A very long sentence about the change. ", 40)})
	}
	req, listed := prompt.Highlights("m", many)
	if len(listed) != 100 || listed[0].DiffTokens != 149 || listed[99].DiffTokens != 50 {
		t.Errorf("%d listed, from %d to %d diff tokens; want the 100 largest", len(listed), listed[0].DiffTokens, listed[len(listed)-1].DiffTokens)
	}
	text := req.Messages[0].Content
	if !strings.HasPrefix(text, "Write the highlights of these 150 changes.") || !strings.HasSuffix(text, "\n(and 50 smaller changes not listed)\n") {
		t.Errorf("request text does not say what was left out:\n%.200s ... %s", text, text[len(text)-80:])
	}
	whole := strings.TrimSpace(many[0].Summary)
	for _, c := range listed {
		if len(c.Summary) > 400+len("…") || !strings.HasPrefix(whole, strings.TrimSuffix(c.Summary, "…")+" ") {
			t.Fatalf("summary of %d bytes not cut at a word: %q", len(c.Summary), c.Summary[len(c.Summary)-20:])
		}
	}
	if n := strings.Count(text, "\n"); n != 2+100+2 {
		t.Errorf("%d lines, want one per change listed", n)
	}
}

func TestParseHighlights(t *testing.T) {
	seven := `["One.", "Two.", "Three.", "Four.", "Five.", "Six.", "Seven."]`
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"array", `["Adds retries.", "Fixes a crash.", "Rewrites the parser."]`, []string{"Adds retries.", "Fixes a crash.", "Rewrites the parser."}},
		{"fenced, with chatter and a bracket before", "Here are the highlights [draft]:\n```json\n[\"A.\", \"B.\",\n \"C.\"]\n```\nHope this helps.", []string{"A.", "B.", "C."}},
		{"seven cut to six", seven, []string{"One.", "Two.", "Three.", "Four.", "Five.", "Six."}},
		{"objects", `[{"text": "A."}, {"highlight": "B."}, {"summary": "C."}]`, []string{"A.", "B.", "C."}},
		{"markdown list", "Highlights:\n\n- **client**: adds retries\n* fixes a crash\n• faster\n+ docs\n\nThanks!", []string{"**client**: adds retries", "fixes a crash", "faster", "docs"}},
		{"numbered list", "1. First.\r\n2) Second.\n10. Tenth.", []string{"First.", "Second.", "Tenth."}},
		{"cut-off array falls back to lines", "[\"A.\",\n\"B.\",\n\"C", nil},
		{"cut-off array with list lines", "- A.\n- B.\n[\"x", []string{"A.", "B."}},
		{"prose", "The release adds retries and fixes a crash.", nil},
		{"empty", "", nil},
		{"empty array", "[]", nil},
		{"numbers are not highlights", "[1, 2, 3]", nil},
		{"blanks, repeats and markers dropped", `["  A.  ", "", "A.", "-", "- B.", "\"C.\"", "x\n y"]`, []string{"A.", "B.", "C.", "x y"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := prompt.ParseHighlights(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	long := prompt.ParseHighlights(`["` + strings.Repeat("word ", 100) + `"]`)
	if len(long) != 1 || utf8.RuneCountInString(long[0]) > 240 || !strings.HasSuffix(long[0], "word…") {
		t.Errorf("a long bullet: %q", long)
	}
}

// FuzzParseHighlights: whatever a model answers, at most six bullets, each
// one non-empty line of valid UTF-8 within 240 runes, none repeated; and
// reading the bullets written back gives the same bullets.
func FuzzParseHighlights(f *testing.F) {
	f.Add(`["Adds retries.", "Fixes a crash.", "Rewrites the parser."]`)
	f.Add("```json\n[\"A.\", \"B.\"]\n```")
	f.Add("- a\n* b\n1. c\n2) d")
	f.Add(`[{"text": "A."}, "B.", 3, null, ["C."]]`)
	f.Add(`["- - x", "\"\"y\"\"", "  "]`)
	f.Add("[\"\xff\xfe\", \"\u00a0z\u0085\"]")
	f.Add("[")
	f.Fuzz(func(t *testing.T, text string) {
		got := prompt.ParseHighlights(text)
		if len(got) > prompt.MaxHighlights {
			t.Fatalf("%d bullets", len(got))
		}
		for i, b := range got {
			if b == "" || strings.ContainsAny(b, "\n\r") || !utf8.ValidString(b) || utf8.RuneCountInString(b) > 240 || slices.Contains(got[:i], b) {
				t.Fatalf("bullet %q of %q", b, got)
			}
		}
		if again := prompt.ParseHighlights(prompt.FormatHighlights(got)); !slices.Equal(again, got) {
			t.Fatalf("written back and read again: %q, was %q", again, got)
		}
	})
}

// TestHighlightsSystemPromptAsksForTheFormat guards the wording the parser
// and the offline model rely on.
func TestHighlightsSystemPromptAsksForTheFormat(t *testing.T) {
	req, _ := prompt.Highlights("m", changes())
	for _, want := range []string{"JSON array of 3 to 6 strings", `"breaking"`, `"diff_tokens"`} {
		if !strings.Contains(req.System, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	var _ provider.Request = req
}
