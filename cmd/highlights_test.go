package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// TestHighlightsSayWhatWasAsked: what the command says of --highlights
// (or DIGEST_HIGHLIGHTS): a dry run counts the sections; a failed request
// is named on a line of its own, then a line says the changelog is
// written without them, exit 1; those --max-cost leaves unasked for make
// the exit code 1 too, as anything it leaves unsent; standard error counts
// the requests and the answers from the cache, and the step summary gets
// them as standard output does. summarize's TestHighlightsDryRun,
// TestHighlightsFailureKeepsTheChangelog, TestHighlightsBeyondMaxCostAreSkipped,
// TestHighlightsPerSection and TestHighlightsInMarkdownAndJSON check what
// is asked and written.
func TestHighlightsSayWhatWasAsked(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newHarness(t)
	run := func(extra ...string) result {
		return h.run(context.Background(), append([]string{"summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000"}, extra...)...)
	}
	says(t, run("--highlights", "--dry-run"), 0, []string{"dry run: 8 commits to summarize (0 cached), the highlights of 2 sections (0 stored), in 3 requests"})
	h.wrap = refuse(func(req provider.Request) bool { // v0.1.0's highlights
		_, ok := prompt.ReadHighlights(req.System, req.Messages)
		return ok && strings.Contains(req.Messages[0].Content, "Update dependencies")
	})
	failed := run("--highlights")
	says(t, failed, 1, []string{"## v0.1.0"}, "highlights of v0.1.0: test: HTTP 400: upstream said no",
		"digest: highlights of 1 of 2 sections could not be written; the changelog is written without them. Try: run again")
	h.wrap = nil
	h.calls.Store(0)
	capped := run("--highlights", "--max-cost", "0.3") // a highlights request may cost $0.4 for its output alone
	lines := strings.Split(strings.TrimSpace(capped.errOut), "\n")
	if last := lines[len(lines)-1]; capped.code != 1 || h.calls.Load() != 0 || !strings.HasPrefix(last, "digest: stopped before --max-cost $0.3: highlights of 1 of 2 sections not asked for") ||
		!strings.Contains(last, "Try: a higher --max-cost") || strings.Count(failed.out+capped.out, "**Highlights**") != 2 {
		t.Errorf("exit %d, %d requests, stderr %q; changelog without v0.1.0's highlights:\n%s", capped.code, h.calls.Load(), capped.errOut, capped.out)
	}
	summary := filepath.Join(t.TempDir(), "step_summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	says(t, run("--highlights", "--step-summary"), 0, nil, "highlights: 1 requests sent, 1 answers from the cache; 2 sections have highlights")
	if step, _ := os.ReadFile(summary); !strings.Contains(string(step), "## Unreleased\n\n**Highlights**\n\n- ") {
		t.Errorf("step summary without highlights:\n%s", step)
	}
	delete(h.env, "GITHUB_STEP_SUMMARY")
	h.env["DIGEST_HIGHLIGHTS"] = "true"
	says(t, run(), 0, []string{"**Highlights**"}, "highlights: 0 requests sent, 2 answers from the cache; 2 sections have highlights")
}
