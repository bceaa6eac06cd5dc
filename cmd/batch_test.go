package cmd

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
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

// TestBatchAnswersAreMatchedByHash has the model answer a batch shuffled
// and with one commit left out: every summary must land on its own commit
// (the offline model starts each with the commit's subject), and the
// missing one is asked about again, alone.
func TestBatchAnswersAreMatchedByHash(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	var mu sync.Mutex
	var sizes []int
	rng := rand.New(rand.NewPCG(1, 2))
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			resp, err := next.Complete(ctx, req)
			if err != nil {
				return resp, err
			}
			var answers []prompt.Answer
			if err := json.Unmarshal([]byte(resp.Text), &answers); err != nil {
				t.Errorf("offline answer is not JSON: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			sizes = append(sizes, len(answers))
			rng.Shuffle(len(answers), func(i, j int) { answers[i], answers[j] = answers[j], answers[i] })
			if len(answers) > 1 {
				answers = answers[1:] // one commit left out
				answers = append(answers, prompt.Answer{Commit: strings.Repeat("f", 40), Summary: "about a commit nobody asked about"})
			}
			resp.Text = "Here you go:\n```json\n" + prompt.FormatAnswer(answers) + "\n```"
			return resp, nil
		})
	}
	res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--batch-size", "4")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	got := entries(t, res.out)
	if len(got) != 8 {
		t.Fatalf("%d entries, want 8", len(got))
	}
	for _, e := range got {
		if subject := e["subject"].(string); !strings.HasPrefix(e["summary"].(string), subject) {
			t.Errorf("commit %v (%q) got the summary %q", e["commit"], subject, e["summary"])
		}
	}
	slices.Sort(sizes)
	if want := []int{1, 1, 4, 4}; !slices.Equal(sizes, want) {
		t.Errorf("request sizes %v, want %v: two batches, then each left-out commit alone", sizes, want)
	}
}

func TestGarbledBatchAnswerIsAskedAgainOneByOne(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	var calls int
	var mu sync.Mutex
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			calls++
			first := calls == 1
			mu.Unlock()
			resp, err := next.Complete(ctx, req)
			if first {
				resp.Text = `[{"commit": "` + f.Root[:12] + `", "summary": "short hashes are not accepted"}, {"commit": 42}]`
			}
			return resp, err
		})
	}
	res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl")
	if res.code != 0 || calls != 9 || len(entries(t, res.out)) != 8 {
		t.Errorf("exit %d after %d calls, want 0 after 1 batch and 8 single retries: %s", res.code, calls, res.errOut)
	}
}

// TestDryRunCountsAClonesCommitsOnce: a run over a repository and its clone
// pays for each commit once, the clone finding the summaries stored; a dry
// run, which stores nothing, must count them once too.
func TestDryRunCountsAClonesCommitsOnce(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, f.Clone().Dir, "--dry-run", "--model", "test:gpt", "--batch-size", "1")
	if res.code != 0 || !strings.HasPrefix(res.out, "dry run: 8 commits to summarize (0 cached) in 8 requests") {
		t.Errorf("exit %d, stdout %q, want the 8 commits counted once: %s", res.code, res.out, res.errOut)
	}
}

func TestDryRunSendsAndStoresNothing(t *testing.T) {
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
	// With a database, cached commits are counted as cached.
	h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "-n", "3")
	again := h.run(context.Background(), "summarize", f.Dir, "--dry-run", "--model", "test:gpt", "--price", "1/2")
	if !strings.HasPrefix(again.out, "dry run: 5 commits to summarize (3 cached)") {
		t.Errorf("dry run after a partial run: %q", again.out)
	}
}

func TestMaxCostStopsBeforeTheBudgetIsPassed(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	// At $1000/$1000 per million, one commit's request may cost up to about
	// (its tokens + 300 output) / 1000 dollars: $1.5 allows a few, not all.
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000",
		"--max-cost", "1.5", "--batch-size", "1", "--concurrency", "1", "-f", "jsonl")
	if res.code != 1 || !strings.Contains(res.errOut, "stopped before --max-cost $1.5") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	got := entries(t, res.out)
	spent := 0.0
	for _, e := range got {
		spent += e["cost_usd"].(float64)
	}
	if len(got) == 0 || len(got) == 8 || spent > 1.5 {
		t.Errorf("%d commits summarized for $%.4f, want some but not all, within $1.5", len(got), spent)
	}
	if !strings.Contains(res.errOut, "left unsent") {
		t.Errorf("stderr does not say what was left: %q", res.errOut)
	}
	h.calls.Store(0)
	again := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000", "--batch-size", "1", "-f", "jsonl")
	if again.code != 0 || int(h.calls.Load()) != 8-len(got) {
		t.Errorf("rerun without the limit: exit %d, %d calls, want %d", again.code, h.calls.Load(), 8-len(got))
	}
}

// With requests in flight, --max-cost holds the next request until answers
// settle what was spent, rather than stopping on worst cases alone.
func TestMaxCostWithConcurrencyUsesTheBudget(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "test:gpt", "--price", "1000/1000",
		"--max-cost", "3", "--batch-size", "1", "--concurrency", "4", "-f", "jsonl")
	spent := 0.0
	got := entries(t, res.out)
	for _, e := range got {
		spent += e["cost_usd"].(float64)
	}
	if spent > 3 {
		t.Errorf("spent $%.4f, over --max-cost 3", spent)
	}
	// Each of these commits costs at most about $0.7 in the worst case and
	// far less in fact: the budget buys more than the worst cases would.
	if len(got) < 4 {
		t.Errorf("%d commits summarized for $%.4f of $3: stopped on worst cases", len(got), spent)
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
