package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// taggedFixture is the fixture on main with a GitHub origin and v0.1.0
// tagging its third commit: Unreleased holds 5 commits, v0.1.0 holds 3.
func taggedFixture(t *testing.T) *gittest.Fixture {
	t.Helper()
	f := fixture(t)
	f.Checkout("main")
	if _, err := f.Git.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{"git@github.com:acme/hello.git"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Git.Storer.SetReference(plumbing.NewHashReference("refs/tags/v0.1.0", plumbing.NewHash(f.Deps))); err != nil {
		t.Fatal(err)
	}
	return f
}

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

// TestHighlightsInEveryFormat: --highlights puts each section's bullets
// under its heading in Markdown (golden) and the step summary, and lists
// them in JSON; standard error counts them; a rerun through
// DIGEST_HIGHLIGHTS writes the same bytes from the cache; without either
// there are none (summarize.TestHighlightsPerSection checks the requests).
func TestHighlightsInEveryFormat(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	summary := filepath.Join(t.TempDir(), "step_summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	first := h.run(context.Background(), "summarize", f.Dir, "--highlights", "--step-summary")
	if first.code != 0 {
		t.Fatalf("exit %d: %s", first.code, first.errOut)
	}
	golden(t, "highlights.md", first.out)
	got := highlightsOf(first.out)
	if len(got) != 2 || got[0].title != "Unreleased" || got[1].title != "v0.1.0 ("+gittest.Epoch.Add(2*time.Hour).Format(time.DateOnly)+")" {
		t.Fatalf("sections with highlights: %q\n%s", got, first.out)
	}
	if !strings.Contains(first.errOut, "highlights: 2 requests sent, 0 answers from the cache; 2 sections have highlights") {
		t.Errorf("stderr: %q", first.errOut)
	}
	step, _ := os.ReadFile(summary)
	if !strings.Contains(string(step), "## Unreleased\n\n**Highlights**\n\n- ") {
		t.Errorf("step summary without highlights:\n%s", step)
	}

	h.calls.Store(0)
	delete(h.env, "GITHUB_STEP_SUMMARY")
	h.env["DIGEST_HIGHLIGHTS"] = "true"
	again := h.run(context.Background(), "summarize", f.Dir)
	if again.code != 0 {
		t.Fatalf("rerun: exit %d: %s", again.code, again.errOut)
	}
	if again.out != first.out {
		t.Errorf("rerun differs:\n%s\n--- first ---\n%s", again.out, first.out)
	}
	if !strings.Contains(again.errOut, "highlights: 0 requests sent, 2 answers from the cache; 2 sections have highlights") {
		t.Errorf("stderr: %q", again.errOut)
	}

	doc := h.run(context.Background(), "summarize", f.Dir, "-f", "json")
	var parsed struct {
		Highlights []struct {
			Repo    string   `json:"repo"`
			RepoID  string   `json:"repo_id"`
			Version string   `json:"version"`
			Bullets []string `json:"bullets"`
		}
	}
	if err := json.Unmarshal([]byte(doc.out), &parsed); err != nil {
		t.Fatal(err)
	}
	if hs := parsed.Highlights; len(hs) != 2 || hs[0].Version != "" || hs[1].Version != "v0.1.0" || hs[0].Repo != "hello" || len(hs[0].RepoID) != 16 ||
		len(hs[0].Bullets) != len(got[0].bullets) || len(hs[1].Bullets) != len(got[1].bullets) {
		t.Errorf("JSON highlights: %+v", hs)
	}
	delete(h.env, "DIGEST_HIGHLIGHTS")
	if plain := h.run(context.Background(), "summarize", f.Dir); strings.Contains(plain.out, "**Highlights**") {
		t.Errorf("highlights without --highlights:\n%s", plain.out)
	}
}

// TestHighlightsDryRunSaysWhatItCounts: a dry run's line counts the
// sections whose highlights would be asked for (summarize.TestHighlightsDryRun
// checks the counting).
func TestHighlightsDryRunSaysWhatItCounts(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--price", "1/2", "--highlights")
	if res.code != 0 || !strings.HasPrefix(res.out, "dry run: 8 commits to summarize (0 cached), the highlights of 2 sections (0 stored), in 3 requests") {
		t.Fatalf("exit %d: %q %s", res.code, res.out, res.errOut)
	}
}

// TestHighlightsBeyondMaxCostExitOne: highlights --max-cost leaves unasked
// for make the exit code 1, as anything --max-cost leaves unsent, with one
// line saying so under the changelog written without them
// (summarize.TestHighlightsBeyondMaxCostAreSkipped checks what is asked).
func TestHighlightsBeyondMaxCostExitOne(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	if res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000"); res.code != 0 {
		t.Fatal(res.errOut)
	}
	h.calls.Store(0)
	// Each highlights request may cost $0.4 for its output alone.
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000", "--highlights", "--max-cost", "0.3")
	if res.code != 1 || h.calls.Load() != 0 {
		t.Fatalf("exit %d, %d requests: %s", res.code, h.calls.Load(), res.errOut)
	}
	if strings.Contains(res.out, "**Highlights**") || !strings.Contains(res.out, "## v0.1.0") {
		t.Errorf("changelog:\n%s", res.out)
	}
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "digest: stopped before --max-cost $0.3: highlights of 2 of 2 sections not asked for") || !strings.Contains(last, "Try: a higher --max-cost") {
		t.Errorf("stderr: %q", res.errOut)
	}
}

// TestHighlightsFailureExitsOne: a failed highlights request is named on a
// line of its own, then one line says the changelog is written without
// them, and the exit code is 1 (summarize.TestHighlightsFailureKeepsTheChangelog
// checks what is kept and retried).
func TestHighlightsFailureExitsOne(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if _, ok := prompt.ReadHighlights(req.System, req.Messages); ok && strings.Contains(req.Messages[0].Content, "Update dependencies") {
				return provider.Response{}, &provider.Error{Provider: "test", Kind: provider.Permanent, StatusCode: 400, Message: "upstream said no"}
			}
			return next.Complete(ctx, req)
		})
	}
	res := h.run(context.Background(), "summarize", f.Dir, "--highlights")
	if res.code != 1 || !strings.Contains(res.errOut, "highlights of v0.1.0: test: HTTP 400: upstream said no") ||
		!strings.Contains(res.errOut, "digest: highlights of 1 of 2 sections could not be written; the changelog is written without them. Try: run again") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	if got := highlightsOf(res.out); len(got) != 1 || got[0].title != "Unreleased" || !strings.Contains(res.out, "## v0.1.0") {
		t.Errorf("changelog:\n%s", res.out)
	}
}
