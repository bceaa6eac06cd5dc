package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// TestEvalSaysOnceWhatEachModelGoesWithout: with --temperature 0 --seed 1
// an eval over five models says once per model which flag its API does
// not take and is sent without; a model that takes them all goes unnamed.
// Each is priced from the built-in table. What is sent, synchronously and
// through the batch APIs, is eval's TestEachModelIsSentOnlyWhatItTakes;
// that today's models are in the table, models' TestCurrentModelsAreInTheTable.
func TestEvalSaysOnceWhatEachModelGoesWithout(t *testing.T) {
	h := newHarness(t)
	data := writeDataset(t, `{"id": "a", "prompt": "Say ok.", "expected": "ok"}`)
	res := h.run(context.Background(), "eval", data, "--models", "openai:gpt-4o-mini,openai:gpt-5-mini,openai:o3-mini,anthropic:claude-haiku-4-5,anthropic:claude-opus-4-7",
		"--temperature", "0", "--seed", "1", "--dry-run", "-f", "json")
	var est struct {
		Models []struct {
			Model   string
			CostUSD *float64 `json:"cost_usd"`
		}
	}
	if err := json.Unmarshal([]byte(res.out), &est); err != nil || res.code != 0 || len(est.Models) != 5 {
		t.Fatalf("exit %d: %v: %s", res.code, err, res.errOut)
	}
	for _, m := range est.Models {
		if m.CostUSD == nil || *m.CostUSD <= 0 {
			t.Errorf("%s: cost %v, want the table's price", m.Model, m.CostUSD)
		}
	}
	for _, line := range []string{
		"openai:gpt-5-mini takes no --temperature; sent without it",
		"openai:o3-mini takes no --temperature; sent without it",
		"anthropic:claude-haiku-4-5 takes no --seed; sent without it",
		"anthropic:claude-opus-4-7 takes no --temperature or --seed; sent without it",
	} {
		if n := strings.Count(res.errOut, line); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", line, n, res.errOut)
		}
	}
	if strings.Contains(res.errOut, "gpt-4o-mini takes no") {
		t.Errorf("gpt-4o-mini takes every flag given:\n%s", res.errOut)
	}
}

// A temperature outside a model's range is refused before anything is
// sent, naming the model and the range.
func TestEvalRefusesATemperatureOutOfRange(t *testing.T) {
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["ANTHROPIC_API_KEY"] = "sk-test-rules", "sk-ant-test-rules"
	data := writeDataset(t, `{"prompt": "Say ok.", "expected": "ok"}`)
	for _, c := range []struct{ models, temperature, want string }{
		{"anthropic:claude-haiku-4-5", "1.5", "anthropic:claude-haiku-4-5: --temperature 1.5 is over the 1 its API allows. Try: --temperature between 0 and 1"},
		{"openai:gpt-4o-mini", "2.5", "openai:gpt-4o-mini: --temperature 2.5 is over the 2 its API allows"},
	} {
		res := h.run(context.Background(), "eval", data, "--models", c.models, "--temperature", c.temperature)
		oneLineError(t, res, 2, c.want)
	}
	if n := h.calls.Load(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// summarize takes --reasoning-effort too: a model that reasons is sent it,
// one that does not goes without, said once; a value no API takes is
// refused. Each wire's bodies are the provider packages'
// TestBodyFollowsTheModelsRules.
func TestSummarizeSendsTheEffortWhereTheModelTakesIt(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["OPENAI_BASE_URL"] = "sk-test-rules", srv.OpenAIBaseURL()
	repo := historyRepo(t, 3).Dir
	res := h.run(context.Background(), "summarize", repo, "--model", "openai:gpt-5-mini", "--reasoning-effort", "low", "-f", "jsonl")
	if q := srv.Requests(); res.code != 0 || len(q) == 0 || !strings.Contains(string(q[0].Body), `"reasoning_effort":"low"`) || strings.Contains(res.errOut, "takes no") {
		t.Errorf("gpt-5-mini: exit %d, %d requests: %s", res.code, len(q), res.errOut)
	}
	res = h.run(context.Background(), "summarize", repo, "--model", "openai:gpt-4o-mini", "--reasoning-effort", "low", "--dry-run")
	if n := strings.Count(res.errOut, "openai:gpt-4o-mini takes no --reasoning-effort; sent without it"); res.code != 0 || n != 1 {
		t.Errorf("gpt-4o-mini: exit %d, said %d times: %s", res.code, n, res.errOut)
	}
	res = h.run(context.Background(), "summarize", repo, "--reasoning-effort", "extreme")
	oneLineError(t, res, 2, `--reasoning-effort "extreme" is not one of low, medium, high`)
}
