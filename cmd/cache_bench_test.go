package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
)

// fiveShot writes a dataset of n items that share five worked examples
// (ten turns, about 1,500 tokens) before their own question: the shape of
// a few-shot eval.
func fiveShot(tb testing.TB, n int) string {
	var shots []map[string]string
	for i := range 5 {
		shots = append(shots,
			map[string]string{"role": "user", "content": fmt.Sprintf("Example %d. %s What is %d + %d?", i, strings.Repeat("Read the question carefully and answer with the number alone. ", 18), i, i+1)},
			map[string]string{"role": "assistant", "content": fmt.Sprint(2*i + 1)})
	}
	var lines []string
	for i := range n {
		msgs := append(append([]map[string]string{}, shots...), map[string]string{"role": "user", "content": fmt.Sprintf("What is %d + %d?", i, i)})
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "messages": msgs, "expected": fmt.Sprint(2 * i), "assert": []map[string]string{{"type": "numeric"}}})
		lines = append(lines, string(b))
	}
	path := filepath.Join(tb.TempDir(), "five-shot.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkFiveShotPromptCache measures what a 100-item 5-shot eval costs
// on anthropic:claude-sonnet-4-5 at the table's prices, with the shared
// examples marked for Anthropic's prompt cache (as digest sends them) and
// as it cost before, every input token at the full price; usd-ratio is
// the first over the second. The fake caches as Anthropic documents: a
// write at 125% of the input price, then reads at 10%.
func BenchmarkFiveShotPromptCache(b *testing.B) {
	const items = 100
	data := fiveShot(b, items)
	spec := provider.Spec{Provider: "anthropic", Model: "claude-sonnet-4-5"}
	price := models.Lookup(spec).Price
	var cached, full float64
	for b.Loop() {
		srv := fakeprovider.Start(b, fakeprovider.Config{Window: time.Second})
		h := newHarness(b)
		h.env = map[string]string{"ANTHROPIC_BASE_URL": srv.AnthropicBaseURL(), "ANTHROPIC_API_KEY": "sk-ant-bench"}
		res := h.run(context.Background(), "eval", data, "--models", spec.String(), "--rpm", "100000", "--tpm", "100000000", "-f", "json")
		if res.code != 0 && res.code != 1 {
			b.Fatalf("exit %d: %s", res.code, res.errOut)
		}
		var rep struct {
			Models []struct {
				InputTokens       int     `json:"input_tokens"`
				CachedInputTokens int     `json:"cached_input_tokens"`
				OutputTokens      int     `json:"output_tokens"`
				CostUSD           float64 `json:"cost_usd"`
			} `json:"models"`
		}
		if err := json.Unmarshal([]byte(res.out), &rep); err != nil || len(rep.Models) != 1 {
			b.Fatalf("%v: %s", err, res.out)
		}
		m := rep.Models[0]
		if m.CachedInputTokens == 0 {
			b.Fatalf("nothing was read from the cache: %+v", m)
		}
		cached, full = m.CostUSD, price.Cost(m.InputTokens, m.OutputTokens)
	}
	b.ReportMetric(cached, "usd-cached")
	b.ReportMetric(full, "usd-uncached")
	b.ReportMetric(cached/full, "usd-ratio")
}
