package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/fakeprovider"
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

// TestHighlightsPerSection: with --highlights each version gets 3 to 6
// bullets from the offline model, one request per section after the
// summaries'; a rerun asks nothing and writes the same bytes, also through
// DIGEST_HIGHLIGHTS; JSON lists them, and the step summary has them.
func TestHighlightsPerSection(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	summary := filepath.Join(t.TempDir(), "step_summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	first := h.run(context.Background(), "summarize", f.Dir, "--highlights", "--step-summary")
	if first.code != 0 {
		t.Fatalf("exit %d: %s", first.code, first.errOut)
	}
	if n := h.calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3: one batch of summaries, then one per section", n)
	}
	golden(t, "highlights.md", first.out)
	got := highlightsOf(first.out)
	if len(got) != 2 || got[0].title != "Unreleased" || got[1].title != "v0.1.0 ("+gittest.Epoch.Add(2*time.Hour).Format(time.DateOnly)+")" {
		t.Fatalf("sections with highlights: %q\n%s", got, first.out)
	}
	for _, s := range got {
		if len(s.bullets) < 3 || len(s.bullets) > 6 {
			t.Errorf("%s: %d highlights, want 3 to 6", s.title, len(s.bullets))
		}
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
	if again.code != 0 || h.calls.Load() != 0 {
		t.Fatalf("rerun: exit %d, %d requests, want 0: %s", again.code, h.calls.Load(), again.errOut)
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
	if plain := h.run(context.Background(), "summarize", f.Dir); strings.Contains(plain.out, "**Highlights**") || h.calls.Load() != 0 {
		t.Errorf("highlights without --highlights:\n%s", plain.out)
	}
}

// TestHighlightsDryRun: a dry run counts one request per section whose
// highlights are not stored, none once they are.
func TestHighlightsDryRun(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	plain := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--price", "1/2")
	res := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--price", "1/2", "--highlights")
	if res.code != 0 || !strings.HasPrefix(res.out, "dry run: 8 commits to summarize (0 cached), the highlights of 2 sections (0 stored), in 3 requests") {
		t.Fatalf("exit %d: %q %s", res.code, res.out, res.errOut)
	}
	// Every summary not known yet counts at its cap: 8 of them.
	if tokens(t, res.out, "input") <= tokens(t, plain.out, "input")+8*prompt.MaxOutputTokens ||
		tokens(t, res.out, "output") != tokens(t, plain.out, "output")+2*prompt.HighlightsMaxTokens {
		t.Errorf("highlights counted as\n%s\nover\n%s", res.out, plain.out)
	}
	// Summaries stored: the sections' requests are known exactly.
	h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt")
	known := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--highlights", "-f", "json")
	var est struct {
		Requests    int `json:"requests"`
		Highlights  int `json:"highlights"`
		InputTokens int `json:"input_tokens"`
	}
	json.Unmarshal([]byte(known.out), &est)
	if est.Requests != 2 || est.Highlights != 2 || est.InputTokens == 0 || est.InputTokens >= tokens(t, res.out, "input") {
		t.Errorf("dry run with the summaries stored: %s", known.out)
	}
	h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--highlights")
	h.calls.Store(0)
	none := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--highlights")
	if !strings.HasPrefix(none.out, "dry run: 0 commits to summarize (8 cached), the highlights of 0 sections (2 stored), in 0 requests") || h.calls.Load() != 0 {
		t.Errorf("dry run with everything stored: %q", none.out)
	}
}

// tokens reads "N input tokens" or "at most N output tokens" from a dry run's line.
func tokens(t *testing.T, line, which string) int {
	t.Helper()
	m := regexp.MustCompile(`(\d+) ` + which + ` tokens`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no %s tokens in %q", which, line)
	}
	return atoi(m[1])
}

// TestHighlightsBeyondMaxCostAreSkipped: highlights whose worst case does
// not fit what --max-cost leaves are not asked for; the changelog is
// written without them, one line says so, and the exit code is 1, as for
// anything --max-cost leaves unsent. A rerun with room asks for them alone.
func TestHighlightsBeyondMaxCostAreSkipped(t *testing.T) {
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
	more := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000", "--highlights", "--max-cost", "5")
	if more.code != 0 || h.calls.Load() != 2 || len(highlightsOf(more.out)) != 2 {
		t.Errorf("with room: exit %d, %d requests, want 2: %s", more.code, h.calls.Load(), more.errOut)
	}
}

// TestHighlightsThroughTheOpenAIWireFormat: a hosted model's answers, as
// it may give them: fenced JSON of seven bullets (six are kept), list
// lines in chatter (read as bullets), and an answer with none (the section
// goes without, and the run does not fail). Every answer is stored: a
// rerun sends nothing.
func TestHighlightsThroughTheOpenAIWireFormat(t *testing.T) {
	f := taggedFixture(t)
	other := gittest.New(t)
	for _, s := range []string{"Other one", "Other two", "Other three"} {
		other.Write("a.txt", s+"\n").Commit(s)
	}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "sk-test", Answer: func(r fakeprovider.Received) string {
		if _, ok := prompt.ReadHighlights(r.System, r.Messages); !ok {
			return fakeprovider.DefaultAnswer(r)
		}
		text := r.Messages[0].Content
		switch {
		case strings.Contains(text, "Other one"):
			return "Sure! The highlights are:\n\n- Adds one.\n- Adds two.\n* Adds three.\n\nLet me know [if] you need more."
		case strings.Contains(text, "Update dependencies"):
			return "I'm sorry, I can't {write} that [as JSON"
		}
		return "Here you go:\n```json\n[\"One.\", \"Two.\", \"Three.\", \"Four.\", \"Five.\", \"Six.\", \"Seven.\"]\n```"
	}})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	// Limits far above what the run needs: paced at gpt-4o-mini's, it waits seconds.
	args := []string{"summarize", f.Dir, other.Dir, "--model", "openai:gpt-4o-mini", "--base-url", srv.OpenAIBaseURL(), "--highlights", "--rpm", "100000", "--tpm", "100000000"}
	res := h.run(context.Background(), args...)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	got := highlightsOf(res.out)
	if len(got) != 2 || !strings.Contains(res.out, "### v0.1.0") {
		t.Fatalf("v0.1.0, answered with no highlights, has some, or a section is missing: %q\n%s", got, res.out)
	}
	if strings.Join(got[0].bullets, "|") != "- One.|- Two.|- Three.|- Four.|- Five.|- Six." {
		t.Errorf("hello's Unreleased: %q", got[0].bullets)
	}
	if i := strings.Index(res.out, "## "+filepath.Base(other.Dir)); i < 0 || !strings.Contains(res.out[i:], "**Highlights**\n\n- Adds one.\n- Adds two.\n- Adds three.\n\n") {
		t.Errorf("the other repository's highlights:\n%s", res.out)
	}
	asked := 0
	for _, r := range srv.Requests() {
		if _, ok := prompt.ReadHighlights(r.System, r.Messages); ok {
			asked++
			if r.Header.Get("Authorization") != "Bearer sk-test" || r.MaxTokens != prompt.HighlightsMaxTokens {
				t.Errorf("highlights request: %v, max tokens %d", r.Header, r.MaxTokens)
			}
		}
	}
	if asked != 3 {
		t.Errorf("%d highlights requests, want 3", asked)
	}
	before := srv.Stats().Requests
	again := h.run(context.Background(), args...)
	if again.code != 0 || srv.Stats().Requests != before || again.out != res.out {
		t.Errorf("rerun: exit %d, %d more requests, same output %v", again.code, srv.Stats().Requests-before, again.out == res.out)
	}
}

// TestTwoProcessesPayEachHighlightOnce: two real processes writing the
// highlights of the same release notes at once ask for each section's once
// between them: the sections are claimed like commits.
func TestTwoProcessesPayEachHighlightOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	forEachDatabase(t, func(t *testing.T, db string) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 40 * time.Millisecond, Answer: func(r fakeprovider.Received) string {
			if _, ok := prompt.ReadHighlights(r.System, r.Messages); ok {
				return `["A.", "B.", "C."]`
			}
			return fakeprovider.DefaultAnswer(r)
		}})
		f := taggedFixture(t)
		args := []string{"--db", db, "summarize", f.Dir, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(), "--concurrency", "2"}
		// The summaries stored first, both processes reach the highlights at once.
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		outs := runTogether(t, bin, append(args, "--highlights")...)
		asked := 0
		for _, r := range srv.Requests() {
			if _, ok := prompt.ReadHighlights(r.System, r.Messages); ok {
				asked++
			}
		}
		if asked != 2 {
			t.Errorf("%d highlights requests between the two processes, want 2: one per section", asked)
		}
		if outs[0] != outs[1] || strings.Count(outs[0], "**Highlights**") != 2 {
			t.Errorf("the two processes printed different notes, or not both sections' highlights:\n%s\n---\n%s", outs[0], outs[1])
		}
	})
}

// TestHighlightsWaitForEverySummary: a section with a commit that got no
// summary goes without highlights (written now, they would be paid again
// once the summary comes), and one line says so; the others get theirs.
// The rerun that summarizes the commit asks for that section's alone.
func TestHighlightsWaitForEverySummary(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if strings.Contains(req.Messages[0].Content, f.Deps) {
				return provider.Response{}, &provider.Error{Provider: "test", Kind: provider.Permanent, StatusCode: 400, Message: "upstream said no"}
			}
			return next.Complete(ctx, req)
		})
	}
	res := h.run(context.Background(), "summarize", f.Dir, "--highlights", "--batch-size", "1")
	if res.code != 1 || !strings.Contains(res.errOut, "highlights: 1 of 2 sections go without, as some of their commits have no summary yet") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	if got := highlightsOf(res.out); len(got) != 1 || got[0].title != "Unreleased" {
		t.Errorf("sections with highlights: %q", got)
	}
	h.wrap = nil
	h.calls.Store(0)
	again := h.run(context.Background(), "summarize", f.Dir, "--highlights")
	if again.code != 0 || h.calls.Load() != 2 || len(highlightsOf(again.out)) != 2 {
		t.Errorf("rerun: exit %d, %d requests, want 2 (the commit, its section's highlights): %s", again.code, h.calls.Load(), again.errOut)
	}
}

// TestHighlightsFailureKeepsTheChangelog: a highlights request that fails
// costs its section's highlights, not the changelog: it is written, a line
// names the section, the exit code is 1, and a rerun retries only it.
func TestHighlightsFailureKeepsTheChangelog(t *testing.T) {
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
	h.wrap = nil
	h.calls.Store(0)
	if again := h.run(context.Background(), "summarize", f.Dir, "--highlights"); again.code != 0 || h.calls.Load() != 1 || len(highlightsOf(again.out)) != 2 {
		t.Errorf("rerun: exit %d, %d requests, want 1: %s", again.code, h.calls.Load(), again.errOut)
	}
}

// TestHighlightsCountWhatTheSummariesSpent: --max-cost covers the
// summaries and the highlights together. At $0 in and $1000 out per
// million tokens, a summary's worst case is $0.3 and a highlights
// request's $0.4; the budget is what the summaries cost (measured by a run
// into another database) and $0.35: every summary fits, and then no
// highlights request does.
func TestHighlightsCountWhatTheSummariesSpent(t *testing.T) {
	f := taggedFixture(t)
	args := []string{"summarize", f.Dir, "--model", "test:gpt", "--price", "0/1000", "--batch-size", "1", "--concurrency", "1", "-f", "json"}
	measure := newHarness(t).run(context.Background(), args...)
	var doc struct {
		Stats struct {
			CostUSD float64 `json:"cost_usd"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(measure.out), &doc); err != nil || doc.Stats.CostUSD <= 0 {
		t.Fatalf("%v: the summaries cost $%v", err, doc.Stats.CostUSD)
	}
	h := newHarness(t)
	budget := fmt.Sprintf("%.6f", doc.Stats.CostUSD+0.35)
	res := h.run(context.Background(), append(args, "--highlights", "--max-cost", budget)...)
	if res.code != 1 || !strings.Contains(res.errOut, "highlights of 2 of 2 sections not asked for") || h.calls.Load() != 8 {
		t.Errorf("exit %d, %d requests, want the 8 summaries' only: %s", res.code, h.calls.Load(), res.errOut)
	}
}

// TestInterruptDuringHighlights: Ctrl-C while a section's highlights are
// asked for ends the run as an interruption (exit 130) with the summaries
// and the highlights already answered stored; the rerun asks for the
// missing section's alone.
func TestInterruptDuringHighlights(t *testing.T) {
	f := taggedFixture(t)
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked atomic.Int32
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
			if _, ok := prompt.ReadHighlights(req.System, req.Messages); ok && asked.Add(1) > 1 {
				cancel()
				<-c.Done()
				return provider.Response{}, c.Err()
			}
			return next.Complete(c, req)
		})
	}
	res := h.run(ctx, "summarize", f.Dir, "--highlights", "--concurrency", "1")
	if res.code != cmdutil.ExitInterrupted || !strings.HasPrefix(res.errOut, "digest: interrupted after 8 new summaries") {
		t.Fatalf("exit %d, want 130: %q", res.code, res.errOut)
	}
	h.wrap = nil
	h.calls.Store(0)
	if again := h.run(context.Background(), "summarize", f.Dir, "--highlights"); again.code != 0 || h.calls.Load() != 1 || len(highlightsOf(again.out)) != 2 {
		t.Errorf("rerun: exit %d, %d requests, want 1: %s", again.code, h.calls.Load(), again.errOut)
	}
}
