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
