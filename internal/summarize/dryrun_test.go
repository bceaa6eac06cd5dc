package summarize

import (
	"context"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/models"
)

// TestDryRunSendsAndStoresNothing: a dry run counts the commits the store
// lacks and the requests they would take, batched as a run batches them,
// at their price; it sends nothing and stores nothing, with or without a
// store to read; once the summaries are stored it counts none.
func TestDryRunSendsAndStoresNothing(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	dry := func(batchSize int) *Estimate {
		t.Helper()
		h.calls.Store(0)
		opts := h.options("test:gpt", f.Dir)
		opts.DryRun, opts.BatchSize, opts.Target.Price = true, batchSize, models.Price{InputPerM: 1, OutputPerM: 2}
		opts.Store = h.store()
		res, err := Run(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changelog.Entries) != 0 || h.calls.Load() != 0 {
			t.Errorf("a dry run reported %d entries and sent %d requests, want none", len(res.Changelog.Entries), h.calls.Load())
		}
		return res.Estimate
	}
	whole, one := dry(8), dry(1)
	if whole.Commits != 8 || whole.Requests != 1 || one.Commits != 8 || one.Requests != 8 {
		t.Errorf("batch size 8: %+v; batch size 1: %+v; want 8 commits in 1 and 8 requests", whole, one)
	}
	if whole.InputTokens == 0 || whole.MaxOutputTokens == 0 || one.InputTokens <= whole.InputTokens {
		t.Errorf("tokens: %+v in one request, %+v in eight; want the system prompt counted once per request", whole, one)
	}
	if want := float64(whole.InputTokens)/1e6 + 2*float64(whole.MaxOutputTokens)/1e6; whole.CostUSD < want*0.999 || whole.CostUSD > want*1.001 {
		t.Errorf("cost $%v, want $%v: the input at list price and every output token allowed", whole.CostUSD, want)
	}
	// Nothing was stored: the run pays for every commit.
	if res := h.mustRun(h.options("test:gpt", f.Dir)); h.calls.Load() != 1 || res.Changelog.Stats.Summarized != 8 {
		t.Errorf("the run after the dry runs: %d calls, %d summarized; want 1 and 8", h.calls.Load(), res.Changelog.Stats.Summarized)
	}
	if stored := dry(8); stored.Commits != 0 || stored.Requests != 0 {
		t.Errorf("with the summaries stored: %+v, want nothing to send", stored)
	}
	// Without a store (no database yet), every commit is counted.
	opts := h.options("test:gpt", f.Dir)
	opts.DryRun = true
	if res := h.mustRun(opts); res.Estimate.Commits != 8 {
		t.Errorf("without a store: %+v, want 8 commits", res.Estimate)
	}
}

// TestDryRunCountsAClonesCommitsOnce: a run over a repository and its
// clone pays for each commit once, the clone finding the summaries stored;
// a dry run, which stores nothing, must count them once too.
func TestDryRunCountsAClonesCommitsOnce(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	opts := h.options("test:gpt", f.Dir, f.Clone().Dir)
	opts.DryRun, opts.BatchSize = true, 1
	res := h.mustRun(opts)
	if res.Estimate.Commits != 8 || res.Estimate.Requests != 8 {
		t.Errorf("dry run over a repository and its clone: %+v, want its 8 commits in 8 requests", res.Estimate)
	}
}

// TestDryRunCountsWhatAPartialRunStored: after a run that summarized 3
// commits of 8, a dry run counts the 5 left, and the stored 3 as cached.
func TestDryRunCountsWhatAPartialRunStored(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	opts := h.options("test:gpt", f.Dir)
	opts.Walk.MaxCommits = 3
	h.mustRun(opts)
	opts = h.options("test:gpt", f.Dir)
	opts.DryRun = true
	opts.Store = h.store()
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Estimate.Commits != 5 || res.Changelog.Stats.Cached != 3 {
		t.Errorf("dry run after a partial run: %+v, %d cached; want 5 to summarize, 3 cached", res.Estimate, res.Changelog.Stats.Cached)
	}
}
