package summarize

import (
	"fmt"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/models"
)

// TestMaxCostCoversEveryRepository: MaxCost bounds the whole run, not each
// repository of it: what the first spent is not spent again by the second.
// The commits left unsent are counted, and a rerun with room sends them
// alone.
func TestMaxCostCoversEveryRepository(t *testing.T) {
	f := gittest.NewFixture(t)
	other := gittest.New(t)
	for i := range 6 {
		other.Write("a.txt", fmt.Sprintf("line %d\n", i)).Commit(fmt.Sprintf("Change %d", i))
	}
	h := newTestRun(t)
	opts := h.options("test:gpt", f.Dir, other.Dir)
	opts.Target.Price = models.Price{InputPerM: 1000, OutputPerM: 1000}
	opts.MaxCost, opts.BatchSize, opts.Concurrency = 1.5, 1, 1
	res := h.mustRun(opts)
	spent := 0.0
	for _, e := range res.Changelog.Entries {
		spent += e.CostUSD
	}
	if spent > 1.5 || res.Changelog.Stats.CostUSD > 1.5 {
		t.Errorf("spent $%.4f over two repositories, over MaxCost 1.5", spent)
	}
	summarized := res.Changelog.Stats.Summarized
	if summarized == 0 || res.NotSent == 0 || summarized+res.NotSent != 14 {
		t.Fatalf("%d summarized, %d not sent; want both, 14 in all", summarized, res.NotSent)
	}
	if int(h.calls.Load()) != summarized {
		t.Errorf("%d requests for %d summaries", h.calls.Load(), summarized)
	}
	opts.MaxCost = 0
	more := h.mustRun(opts)
	if n := int(h.calls.Load()); n != 14-summarized || more.NotSent != 0 || len(more.Changelog.Entries) != 14 {
		t.Errorf("with room: %d requests, %d not sent, %d entries; want the %d left, and all 14", n, more.NotSent, len(more.Changelog.Entries), 14-summarized)
	}
}

// TestMaxCostStopsBeforeTheBudgetIsPassed: at $1000 per million tokens
// each way, a commit's request may cost up to about $0.5 in the worst
// case: $1.5 allows a few of the 8, not all. What was spent stays within
// it, the rest is counted as not sent, and a rerun without the limit
// sends those alone.
func TestMaxCostStopsBeforeTheBudgetIsPassed(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	opts := h.options("test:gpt", f.Dir)
	opts.Target.Price = models.Price{InputPerM: 1000, OutputPerM: 1000}
	opts.MaxCost, opts.BatchSize, opts.Concurrency = 1.5, 1, 1
	res := h.mustRun(opts)
	spent := 0.0
	for _, e := range res.Changelog.Entries {
		spent += e.CostUSD
	}
	n := len(res.Changelog.Entries)
	if n == 0 || n == 8 || spent > 1.5 {
		t.Errorf("%d commits summarized for $%.4f, want some but not all, within $1.5", n, spent)
	}
	if res.NotSent != 8-n {
		t.Errorf("%d commits counted as not sent, want the %d left", res.NotSent, 8-n)
	}
	opts.MaxCost = 0
	again := h.mustRun(opts)
	if int(h.calls.Load()) != 8-n || len(again.Changelog.Entries) != 8 || again.NotSent != 0 {
		t.Errorf("rerun without the limit: %d calls, %d entries, %d not sent; want %d calls and all 8",
			h.calls.Load(), len(again.Changelog.Entries), again.NotSent, 8-n)
	}
}

// TestMaxCostWithConcurrencyUsesTheBudget: with requests in flight,
// MaxCost holds the next request until answers settle what was spent,
// rather than stopping on worst cases alone.
func TestMaxCostWithConcurrencyUsesTheBudget(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	opts := h.options("test:gpt", f.Dir)
	opts.Target.Price = models.Price{InputPerM: 1000, OutputPerM: 1000}
	opts.MaxCost, opts.BatchSize, opts.Concurrency = 3, 1, 4
	res := h.mustRun(opts)
	spent := 0.0
	for _, e := range res.Changelog.Entries {
		spent += e.CostUSD
	}
	if spent > 3 {
		t.Errorf("spent $%.4f, over MaxCost 3", spent)
	}
	// Each of these commits costs at most about $0.7 in the worst case and
	// far less in fact: the budget buys more than the worst cases would.
	if len(res.Changelog.Entries) < 4 {
		t.Errorf("%d commits summarized for $%.4f of $3: stopped on worst cases", len(res.Changelog.Entries), spent)
	}
}
