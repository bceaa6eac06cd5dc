package summarize

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// highlighted are the versions of the sections that got highlights, in order.
func highlighted(hs []changelog.Highlights) []string {
	var versions []string
	for _, h := range hs {
		versions = append(versions, h.Version)
	}
	return versions
}

// highlightsOptions are opts for f with highlights, on a model at price
// (dollars per million tokens in and out).
func (h *testRun) highlightsOptions(f *gittest.Fixture, price models.Price) Options {
	opts := h.options("test:gpt", f.Dir)
	opts.Highlights, opts.Target.Price = true, price
	return opts
}

// TestHighlightsPerSection: with Highlights each version gets 3 to 6
// bullets from the offline model, one request per section after the
// summaries'; a rerun asks nothing and reads the same bullets from the
// store; without Highlights there are none.
func TestHighlightsPerSection(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	first := h.mustRun(h.highlightsOptions(f, models.Price{}))
	if n := h.calls.Load(); n != 3 {
		t.Errorf("%d requests, want 3: one batch of summaries, then one per section", n)
	}
	hs := first.Changelog.Highlights
	if got := highlighted(hs); len(got) != 2 || got[0] != "" || got[1] != "v0.1.0" {
		t.Fatalf("sections with highlights: %q, want Unreleased and v0.1.0", got)
	}
	for _, s := range hs {
		if len(s.Bullets) < 3 || len(s.Bullets) > 6 || s.RepoID == "" {
			t.Errorf("%q: %d highlights, repo id %q; want 3 to 6", s.Version, len(s.Bullets), s.RepoID)
		}
	}
	if first.HighlightSections != 2 || first.HighlightsWritten != 2 || first.HighlightsStored != 0 {
		t.Errorf("%d sections, %d written, %d from the store; want 2, 2, 0", first.HighlightSections, first.HighlightsWritten, first.HighlightsStored)
	}
	again := h.mustRun(h.highlightsOptions(f, models.Price{}))
	if n := h.calls.Load(); n != 0 || again.HighlightsStored != 2 || again.HighlightsWritten != 0 {
		t.Fatalf("rerun: %d requests, %d from the store; want 0 and 2", n, again.HighlightsStored)
	}
	for i := range hs {
		if strings.Join(again.Changelog.Highlights[i].Bullets, "|") != strings.Join(hs[i].Bullets, "|") {
			t.Errorf("rerun's highlights of %q differ: %q, first %q", hs[i].Version, again.Changelog.Highlights[i].Bullets, hs[i].Bullets)
		}
	}
	plain := h.mustRun(h.options("test:gpt", f.Dir))
	if plain.Changelog.Highlights != nil || h.calls.Load() != 0 {
		t.Errorf("without Highlights: %d highlights, %d requests", len(plain.Changelog.Highlights), h.calls.Load())
	}
}

// TestHighlightsDryRun: a dry run counts one request per section whose
// highlights are not stored, each summary not known yet at its cap; the
// requests exactly once the summaries are stored; none once the highlights
// are.
func TestHighlightsDryRun(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	dry := func(highlights bool) *Estimate {
		t.Helper()
		opts := h.highlightsOptions(f, models.Price{InputPerM: 1, OutputPerM: 2})
		opts.DryRun, opts.Highlights = true, highlights
		opts.Store = h.store()
		res, err := Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		return res.Estimate
	}
	plain, est := dry(false), dry(true)
	if est.Commits != 8 || est.Highlights != 2 || est.HighlightsStored != 0 || est.Requests != 3 {
		t.Fatalf("estimate %+v, want 8 commits, the highlights of 2 sections, in 3 requests", est)
	}
	// Every summary not known yet counts at its cap: 8 of them.
	if est.InputTokens <= plain.InputTokens+8*prompt.MaxOutputTokens || est.MaxOutputTokens != plain.MaxOutputTokens+2*prompt.HighlightsMaxTokens {
		t.Errorf("highlights counted as %+v over %+v", est, plain)
	}
	h.mustRun(h.options("test:gpt", f.Dir))
	known := dry(true)
	if known.Requests != 2 || known.Highlights != 2 || known.InputTokens == 0 || known.InputTokens >= est.InputTokens {
		t.Errorf("dry run with the summaries stored: %+v", known)
	}
	h.mustRun(h.highlightsOptions(f, models.Price{}))
	if none := dry(true); none.Commits != 0 || none.Highlights != 0 || none.HighlightsStored != 2 || none.Requests != 0 {
		t.Errorf("dry run with everything stored: %+v", none)
	}
}

// TestHighlightsBeyondMaxCostAreSkipped: highlights whose worst case does
// not fit what MaxCost leaves are not asked for, and counted as not sent;
// the changelog keeps its sections. A rerun with room asks for them alone.
func TestHighlightsBeyondMaxCostAreSkipped(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	price := models.Price{InputPerM: 1000, OutputPerM: 1000}
	h.mustRun(h.options("test:gpt", f.Dir))
	// Each highlights request may cost $0.4 for its output alone.
	opts := h.highlightsOptions(f, price)
	opts.MaxCost = 0.3
	res := h.mustRun(opts)
	if n := h.calls.Load(); n != 0 || res.HighlightsNotSent != 2 || res.HighlightSections != 2 || len(res.Changelog.Highlights) != 0 {
		t.Fatalf("%d requests, %d of %d sections not sent, %d highlighted; want 0 requests, 2 of 2 not sent", n, res.HighlightsNotSent, res.HighlightSections, len(res.Changelog.Highlights))
	}
	if len(res.Changelog.Entries) != 8 {
		t.Errorf("%d entries, want the changelog whole", len(res.Changelog.Entries))
	}
	opts.MaxCost = 5
	more := h.mustRun(opts)
	if n := h.calls.Load(); n != 2 || len(more.Changelog.Highlights) != 2 || more.HighlightsNotSent != 0 {
		t.Errorf("with room: %d requests, %d highlighted; want 2 and 2", n, len(more.Changelog.Highlights))
	}
}

// refuse answers HTTP 400 to the requests match picks, and passes the rest on.
func refuse(match func(req provider.Request) bool) func(provider.Provider) provider.Provider {
	return func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if match(req) {
				return provider.Response{}, &provider.Error{Provider: "test", Kind: provider.Permanent, StatusCode: 400, Message: "upstream said no"}
			}
			return next.Complete(ctx, req)
		})
	}
}

// isHighlights tells a highlights request from a summaries one.
func isHighlights(req provider.Request) bool {
	_, ok := prompt.ReadHighlights(req.System, req.Messages)
	return ok
}

// TestHighlightsWaitForEverySummary: a section with a commit that got no
// summary goes without highlights (written now, they would be paid again
// once the summary comes), with a warning; the others get theirs. The rerun
// that summarizes the commit asks for that section's alone.
func TestHighlightsWaitForEverySummary(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	h.wrap = refuse(func(req provider.Request) bool { return strings.Contains(req.Messages[0].Content, f.Deps) })
	opts := h.highlightsOptions(f, models.Price{})
	opts.BatchSize = 1
	res := h.mustRun(opts)
	if len(res.Failures) != 1 {
		t.Fatalf("failures %v, want the refused commit's", res.Failures)
	}
	if got := highlighted(res.Changelog.Highlights); len(got) != 1 || got[0] != "" {
		t.Errorf("sections with highlights: %q, want Unreleased alone", got)
	}
	if !strings.Contains(h.logs.String(), "highlights: 1 of 2 sections go without, as some of their commits have no summary yet") {
		t.Errorf("no warning of the section gone without:\n%s", h.logs.String())
	}
	h.wrap = nil
	again := h.mustRun(h.highlightsOptions(f, models.Price{}))
	if n := h.calls.Load(); n != 2 || len(again.Changelog.Highlights) != 2 {
		t.Errorf("rerun: %d requests, %d highlighted; want 2 (the commit, its section's highlights)", n, len(again.Changelog.Highlights))
	}
}

// TestHighlightsFailureKeepsTheChangelog: a highlights request that fails
// costs its section's highlights, not the changelog: the failure names the
// section, and a rerun retries only it.
func TestHighlightsFailureKeepsTheChangelog(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	h.wrap = refuse(func(req provider.Request) bool {
		return isHighlights(req) && strings.Contains(req.Messages[0].Content, "Update dependencies")
	})
	res := h.mustRun(h.highlightsOptions(f, models.Price{}))
	if fs := res.HighlightFailures; len(fs) != 1 || fs[0].Version != "v0.1.0" || !strings.Contains(fs[0].Err.Error(), "HTTP 400: upstream said no") {
		t.Fatalf("highlight failures %+v, want v0.1.0's, with the provider's error", fs)
	}
	if got := highlighted(res.Changelog.Highlights); len(got) != 1 || got[0] != "" || len(res.Changelog.Entries) != 8 {
		t.Errorf("sections with highlights %q, %d entries; want Unreleased's, and the changelog whole", got, len(res.Changelog.Entries))
	}
	h.wrap = nil
	if again := h.mustRun(h.highlightsOptions(f, models.Price{})); h.calls.Load() != 1 || len(again.Changelog.Highlights) != 2 {
		t.Errorf("rerun: %d requests, want 1", h.calls.Load())
	}
}

// TestHighlightsCountWhatTheSummariesSpent: MaxCost covers the summaries
// and the highlights together. At $0 in and $1000 out per million tokens,
// a summary's worst case is $0.3 and a highlights request's $0.4; the
// budget is what the summaries cost (measured by a run into another
// database) and $0.35: every summary fits, and then no highlights request
// does.
func TestHighlightsCountWhatTheSummariesSpent(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	price := models.Price{OutputPerM: 1000}
	measure := newTestRun(t)
	opts := measure.highlightsOptions(f, price)
	opts.Highlights, opts.BatchSize, opts.Concurrency = false, 1, 1
	cost := measure.mustRun(opts).Changelog.Stats.CostUSD
	if cost <= 0 {
		t.Fatalf("the summaries cost $%v", cost)
	}
	h := newTestRun(t)
	opts = h.highlightsOptions(f, price)
	opts.BatchSize, opts.Concurrency, opts.MaxCost = 1, 1, cost+0.35
	res := h.mustRun(opts)
	if n := h.calls.Load(); n != 8 || res.HighlightsNotSent != 2 || res.NotSent != 0 {
		t.Errorf("%d requests, %d commits and %d sections not sent; want the 8 summaries' requests only", n, res.NotSent, res.HighlightsNotSent)
	}
}

// TestInterruptDuringHighlights: a cancellation while a section's
// highlights are asked for ends the run with context.Canceled, the
// summaries and the highlights already answered stored; the rerun asks for
// the missing section's alone.
func TestInterruptDuringHighlights(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newTestRun(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked atomic.Int32
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
			if isHighlights(req) && asked.Add(1) > 1 {
				// Cancelled, the request is dropped: a hosted model's call
				// would otherwise have engine.DefaultGrace to answer.
				cancel()
				return provider.Response{}, ctx.Err()
			}
			return next.Complete(c, req)
		})
	}
	opts := h.highlightsOptions(f, models.Price{})
	opts.Concurrency = 1
	res, err := h.run(ctx, opts)
	if !errors.Is(err, context.Canceled) || res == nil || res.Changelog.Stats.Summarized != 8 {
		t.Fatalf("%v, want context.Canceled after 8 summaries", err)
	}
	h.wrap = nil
	if again := h.mustRun(h.highlightsOptions(f, models.Price{})); h.calls.Load() != 1 || len(again.Changelog.Highlights) != 2 {
		t.Errorf("rerun: %d requests, want 1", h.calls.Load())
	}
}

// TestHighlightsThroughTheOpenAIWireFormat: a hosted model's answers, as
// it may give them over the OpenAI wire format: fenced JSON of seven
// bullets (six are kept), list lines in chatter (read as bullets), and an
// answer with none (the section goes without, and the run does not fail).
// Every answer is stored: a rerun sends nothing.
func TestHighlightsThroughTheOpenAIWireFormat(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
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
	h := newTestRun(t)
	opts := h.options("openai:gpt-4o-mini", f.Dir, other.Dir)
	opts.Highlights = true
	opts.Target.Provider = openai.New(openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test"})
	res := h.mustRun(opts)
	bullets := map[string]string{}
	for _, s := range res.Changelog.Highlights {
		bullets[s.Repo+"@"+s.Version] = strings.Join(s.Bullets, "|")
	}
	want := map[string]string{
		filepath.Base(f.Dir) + "@":     "One.|Two.|Three.|Four.|Five.|Six.",
		filepath.Base(other.Dir) + "@": "Adds one.|Adds two.|Adds three.",
	}
	if !maps.Equal(bullets, want) {
		t.Errorf("highlights %q, want %q (v0.1.0, answered with none, goes without)", bullets, want)
	}
	if len(res.HighlightFailures) != 0 {
		t.Errorf("highlight failures %v, want none", res.HighlightFailures)
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
	again := h.mustRun(opts)
	if n := srv.Stats().Requests - before; n != 0 || len(again.Changelog.Highlights) != 2 {
		t.Errorf("rerun: %d more requests, %d sections highlighted; want 0 and the same 2", n, len(again.Changelog.Highlights))
	}
}
