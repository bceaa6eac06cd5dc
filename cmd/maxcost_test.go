package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// TestMaxCostCoversEveryRepository: --max-cost bounds the whole run, not
// each repository of it: what the first spent is not spent again by the
// second.
func TestMaxCostCoversEveryRepository(t *testing.T) {
	f := fixture(t)
	other := gittest.New(t)
	for i := range 6 {
		other.Write("a.txt", fmt.Sprintf("line %d\n", i)).Commit(fmt.Sprintf("Change %d", i))
	}
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, other.Dir, "--model", "test:gpt", "--price", "1000/1000",
		"--max-cost", "1.5", "--batch-size", "1", "--concurrency", "1", "-f", "jsonl")
	if res.code != 1 || !strings.Contains(res.errOut, "stopped before --max-cost $1.5") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	spent := 0.0
	for _, e := range entries(t, res.out) {
		spent += e["cost_usd"].(float64)
	}
	if spent > 1.5 {
		t.Errorf("spent $%.4f over two repositories, over --max-cost 1.5", spent)
	}
}
