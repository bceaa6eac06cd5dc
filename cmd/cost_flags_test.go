package cmd

// --dry-run and --max-cost on the command line: their reports, messages
// and exit codes. What a dry run counts and what a budget lets through are
// internal/summarize's tests (dryrun_test.go, maxcost_test.go).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
)

// entries decodes a JSONL report.
func entries(t *testing.T, jsonl string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		if line == "" {
			continue
		}
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		out = append(out, e)
	}
	return out
}

// TestDryRunReport: --dry-run prints its estimate as a sentence or, with
// -f json, as JSON, needs no API key for a hosted model, and creates no
// database. What it counts is internal/summarize's
// TestDryRunSendsAndStoresNothing.
func TestDryRunReport(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--price", "1/2", "--batch-size", "3")
	if res.code != 0 || h.calls.Load() != 0 {
		t.Fatalf("exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
	if !strings.HasPrefix(res.out, "dry run: 8 commits to summarize (0 cached) in 3 requests to test:gpt: ") {
		t.Errorf("stdout %q", res.out)
	}
	js := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--price", "1/2", "-f", "json")
	var est struct {
		DryRun          bool    `json:"dry_run"`
		Commits         int     `json:"commits"`
		Requests        int     `json:"requests"`
		InputTokens     int     `json:"input_tokens"`
		MaxOutputTokens int     `json:"max_output_tokens"`
		CostUSD         float64 `json:"cost_usd"`
	}
	if err := json.Unmarshal([]byte(js.out), &est); err != nil {
		t.Fatal(err)
	}
	if !est.DryRun || est.Commits != 8 || est.Requests != 1 || est.InputTokens < 4000 || est.MaxOutputTokens != 8*prompt.MaxOutputTokens {
		t.Errorf("estimate %+v", est)
	}
	if want := (float64(est.InputTokens)*1 + float64(est.MaxOutputTokens)*2) / 1e6; est.CostUSD != want {
		t.Errorf("cost %v, want %v", est.CostUSD, want)
	}
	if _, err := os.Stat(h.db); !os.IsNotExist(err) {
		t.Errorf("a dry run created the database: %v", err)
	}
	// A hosted model with no key set: a dry run calls nobody, so it needs none.
	real := newHarness(t)
	if res := real.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "openai:gpt-4o-mini"); res.code != 0 || !strings.Contains(res.out, "at most $") {
		t.Errorf("dry run without OPENAI_API_KEY: exit %d, %q %q", res.code, res.out, res.errOut)
	}
}

// TestMaxCostStopExitsOneAndSaysWhatWasLeft: a run stopped by --max-cost
// exits 1 and says on stderr what stopped it and what was left unsent;
// what it spends is internal/summarize's
// TestMaxCostStopsBeforeTheBudgetIsPassed.
func TestMaxCostStopExitsOneAndSaysWhatWasLeft(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000",
		"--max-cost", "1.5", "--batch-size", "1", "--concurrency", "1", "-f", "jsonl")
	if res.code != 1 || !strings.Contains(res.errOut, "stopped before --max-cost $1.5") || !strings.Contains(res.errOut, "left unsent") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	if got := entries(t, res.out); len(got) == 0 || len(got) == 8 {
		t.Errorf("%d entries in the report, want those summarized before the stop", len(got))
	}
}

func TestMaxCostNeedsAPrice(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:unknown", "--max-cost", "1")
	if res.code != 2 || !strings.Contains(res.errOut, "Try: --price") {
		t.Errorf("exit %d: %s", res.code, res.errOut)
	}
	cfg := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(cfg, []byte(`{"test:unknown": {"price": {"input_per_million": 1, "output_per_million": 1}}}`), 0o600)
	if res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:unknown", "--max-cost", "1", "--model-config", cfg); res.code != 0 {
		t.Errorf("with a models file: exit %d: %s", res.code, res.errOut)
	}
}
