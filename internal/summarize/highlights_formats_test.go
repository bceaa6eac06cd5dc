package summarize

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/gittest"
)

// sectionHighlights are the highlights under one heading of a Markdown
// changelog.
type sectionHighlights struct {
	title   string
	bullets []string
}

// highlightsOf lists the sections of a Markdown changelog that have
// highlights, in order, each with its list lines.
func highlightsOf(markdown string) []sectionHighlights {
	var out []sectionHighlights
	for _, part := range regexp.MustCompile(`(?m)^#+ `).Split(markdown, -1)[1:] {
		title, body, _ := strings.Cut(part, "\n")
		_, list, ok := strings.Cut(body, "\n**Highlights**\n\n")
		if !ok {
			continue
		}
		list, _, _ = strings.Cut(list, "\n\n")
		out = append(out, sectionHighlights{title, strings.Split(list, "\n")})
	}
	return out
}

// TestHighlightsInMarkdownAndJSON: each section's bullets are written
// under its heading in Markdown (golden, as `digest summarize --highlights`
// writes it) and listed in the JSON document with their repository and
// version; a rerun, reading them from the store, writes the same bytes
// (TestHighlightsPerSection checks the requests).
func TestHighlightsInMarkdownAndJSON(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	opts := h.options("", f.Dir)
	opts.Release, opts.Highlights = cliRelease(t, false), true
	first := renderAs(t, "markdown", &h.mustRun(opts).Changelog)
	compareGolden(t, "highlights.md", first)
	got := highlightsOf(first)
	if len(got) != 2 || got[0].title != "Unreleased" || got[1].title != "v0.1.0 ("+gittest.Epoch.Add(2*time.Hour).Format(time.DateOnly)+")" {
		t.Fatalf("sections with highlights: %q\n%s", got, first)
	}
	again := h.mustRun(opts)
	if md := renderAs(t, "markdown", &again.Changelog); md != first || again.HighlightsStored != 2 {
		t.Errorf("rerun, %d highlights from the store, differs:\n%s\n--- first ---\n%s", again.HighlightsStored, md, first)
	}
	var doc struct {
		Highlights []struct {
			Repo    string   `json:"repo"`
			RepoID  string   `json:"repo_id"`
			Version string   `json:"version"`
			Bullets []string `json:"bullets"`
		}
	}
	if err := json.Unmarshal([]byte(renderAs(t, "json", &again.Changelog)), &doc); err != nil {
		t.Fatal(err)
	}
	if hs := doc.Highlights; len(hs) != 2 || hs[0].Version != "" || hs[1].Version != "v0.1.0" || hs[0].Repo != "hello" || len(hs[0].RepoID) != 16 ||
		len(hs[0].Bullets) != len(got[0].bullets) || len(hs[1].Bullets) != len(got[1].bullets) {
		t.Errorf("JSON highlights: %+v", hs)
	}
}
