package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// fiveModels are the models of issue 23's check: two that take every flag
// asked here but for the seed at Anthropic, and three that refuse the
// temperature (OpenAI's reasoning models and a Claude model after Opus 4.6).
const fiveModels = "openai:gpt-4o-mini,openai:gpt-5-mini,openai:o3-mini,anthropic:claude-haiku-4-5,anthropic:claude-opus-4-7"

func rulesEnv(srv *fakeprovider.Server) map[string]string {
	return map[string]string{"OPENAI_BASE_URL": srv.OpenAIBaseURL(), "OPENAI_API_KEY": "sk-test-rules",
		"ANTHROPIC_BASE_URL": srv.AnthropicBaseURL(), "ANTHROPIC_API_KEY": "sk-ant-test-rules"}
}

// TestEvalSaysOnceWhatEachModelGoesWithout: with --temperature 0 --seed 1
// an eval over five models says once per model which flag its API does
// not take and was sent without; a model that takes them all goes
// unnamed. What is sent, synchronously and through the batch APIs, is
// eval's TestEachModelIsSentOnlyWhatItTakes.
func TestEvalSaysOnceWhatEachModelGoesWithout(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	h := newHarness(t)
	h.raw, h.env = true, rulesEnv(srv)
	data := writeDataset(t, `{"id": "a", "prompt": "Say ok.", "expected": "ok", "assert": [{"type": "icontains"}]}`)
	res := h.run(context.Background(), "eval", data, "--models", fiveModels, "--temperature", "0", "--seed", "1", "-f", "json")
	if res.code != 0 && res.code != 1 { // the fake's answers are not "ok": exit 1 is a failed score, not a refused request
		t.Fatalf("exit %d: %s", res.code, res.errOut)
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
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	h := newHarness(t)
	h.env = rulesEnv(srv)
	data := writeDataset(t, `{"prompt": "Say ok.", "expected": "ok"}`)
	for _, c := range []struct{ models, temperature, want string }{
		{"anthropic:claude-haiku-4-5", "1.5", "anthropic:claude-haiku-4-5: --temperature 1.5 is over the 1 its API allows. Try: --temperature between 0 and 1"},
		{"openai:gpt-4o-mini", "2.5", "openai:gpt-4o-mini: --temperature 2.5 is over the 2 its API allows"},
	} {
		res := h.run(context.Background(), "eval", data, "--models", c.models, "--temperature", c.temperature)
		if res.code != 2 || !strings.Contains(res.errOut, c.want) {
			t.Errorf("%s: exit %d: %s", c.models, res.code, res.errOut)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// --dry-run prices today's models from the built-in table: none of them
// is "cost unknown".
func TestDryRunPricesTodaysModels(t *testing.T) {
	h := newHarness(t)
	data := writeDataset(t, `{"prompt": "Say ok.", "expected": "ok"}`)
	res := h.run(context.Background(), "eval", data, "--dry-run", "-f", "json",
		"--models", "anthropic:claude-sonnet-5,anthropic:claude-opus-4-8,openai:gpt-5.5,openai:gpt-5.4-mini")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var est struct {
		Models []struct {
			Model   string   `json:"model"`
			CostUSD *float64 `json:"cost_usd"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(res.out), &est); err != nil || len(est.Models) != 4 {
		t.Fatalf("%v: %s", err, res.out)
	}
	for _, m := range est.Models {
		if m.CostUSD == nil || *m.CostUSD <= 0 {
			t.Errorf("%s: cost %v", m.Model, m.CostUSD)
		}
	}
}

// The token factor a run learns from reported usage is kept in the
// database, and the next run counts with it: against a server whose
// tokenizer counts 40% more than o200k, a --dry-run after one real run
// counts about 40% more input tokens than one before it.
func TestLearnedTokenFactorIsKeptForTheNextRun(t *testing.T) {
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second,
		CountTokens: func(s string) int { return int(math.Ceil(1.4 * float64(tok.Count(s)))) }})
	h := newHarness(t)
	h.env = rulesEnv(srv)
	items := func(tag string) string {
		var lines []string
		for i := range 12 {
			lines = append(lines, fmt.Sprintf(`{"id": "%s%d", "prompt": "%s %d: %s", "expected": "ok"}`, tag, i, tag, i,
				strings.Repeat("Read the whole clause before answering. ", 20)))
		}
		return writeDataset(t, lines...)
	}
	dryInput := func(data string) int {
		res := h.run(context.Background(), "eval", data, "--models", "openai:my-model", "--dry-run", "-f", "json")
		var est struct {
			Models []struct {
				InputTokens int `json:"input_tokens"`
			} `json:"models"`
		}
		if err := json.Unmarshal([]byte(res.out), &est); err != nil || len(est.Models) != 1 {
			t.Fatalf("exit %d: %v: %s %s", res.code, err, res.out, res.errOut)
		}
		return est.Models[0].InputTokens
	}
	before := dryInput(items("b"))
	if res := h.run(context.Background(), "eval", items("a"), "--models", "openai:my-model", "-f", "json"); res.code > 1 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	after := dryInput(items("c"))
	if ratio := float64(after) / float64(before); ratio < 1.35 || ratio > 1.45 {
		t.Errorf("--dry-run counted %d input tokens before the run and %d after (x%.2f), want about x1.4", before, after, ratio)
	}
}

// summarize takes --reasoning-effort too: a model that reasons is sent it,
// one that does not goes without, said once, and no request is refused.
func TestSummarizeSendsTheEffortWhereTheModelTakesIt(t *testing.T) {
	for _, c := range []struct {
		model string
		sent  bool
	}{{"openai:gpt-5-mini", true}, {"openai:gpt-4o-mini", false}} {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
		h := newHarness(t)
		h.env = rulesEnv(srv)
		repo := historyRepo(t, 3)
		res := h.run(context.Background(), "summarize", repo.Dir, "--model", c.model, "--reasoning-effort", "low", "-f", "jsonl")
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", c.model, res.code, res.errOut)
		}
		for _, r := range srv.Requests() {
			if got := strings.Contains(string(r.Body), `"reasoning_effort":"low"`); got != c.sent || r.Status != 200 {
				t.Errorf("%s: effort sent %v, status %d", c.model, got, r.Status)
			}
		}
		if said := strings.Contains(res.errOut, c.model+" takes no --reasoning-effort; sent without it"); said == c.sent {
			t.Errorf("%s: notice %v:\n%s", c.model, said, res.errOut)
		}
	}
	h := newHarness(t)
	if res := h.run(context.Background(), "summarize", historyRepo(t, 1).Dir, "--reasoning-effort", "extreme"); res.code != 2 ||
		!strings.Contains(res.errOut, `--reasoning-effort "extreme" is not one of low, medium, high`) {
		t.Errorf("exit %d: %s", res.code, res.errOut)
	}
}
