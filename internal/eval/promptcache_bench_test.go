package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// fiveShot is a dataset of n items that share five worked examples (ten
// turns, about 1,500 tokens) before their own question: the shape of a
// few-shot eval.
func fiveShot(n int) string {
	var shots []map[string]string
	for i := range 5 {
		shots = append(shots,
			map[string]string{"role": "user", "content": fmt.Sprintf("Example %d. %s What is %d + %d?", i, strings.Repeat("Read the question carefully and answer with the number alone. ", 18), i, i+1)},
			map[string]string{"role": "assistant", "content": fmt.Sprint(2*i + 1)})
	}
	var lines strings.Builder
	for i := range n {
		msgs := append(append([]map[string]string{}, shots...), map[string]string{"role": "user", "content": fmt.Sprintf("What is %d + %d?", i, i)})
		b, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "messages": msgs, "expected": fmt.Sprint(2 * i), "assert": []map[string]string{{"type": "numeric"}}})
		lines.Write(b)
		lines.WriteByte('\n')
	}
	return lines.String()
}

// BenchmarkFiveShotPromptCache measures what a 100-item 5-shot eval costs
// on anthropic:claude-sonnet-4-5 at the table's prices, with the shared
// examples marked for Anthropic's prompt cache (as digest sends them) and
// as it cost before, every input token at the full price; usd-ratio is
// the first over the second. The run goes through Run, the real Anthropic
// client and a fresh SQLite file each time, at digest eval's default -j 4,
// against the fake, which caches as Anthropic documents: a write at 125%
// of the input price, then reads at 10%.
//
//	go test ./internal/eval -run '^$' -bench FiveShotPromptCache -benchtime 3x
func BenchmarkFiveShotPromptCache(b *testing.B) {
	const items = 100
	data := fiveShot(items)
	spec := provider.Spec{Provider: "anthropic", Model: "claude-sonnet-4-5"}
	price := models.Lookup(spec).Price
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var cached, full float64
	for b.Loop() {
		srv := fakeprovider.Start(b, fakeprovider.Config{Window: time.Second})
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "eval.db"))
		if err != nil {
			b.Fatal(err)
		}
		client := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-ant-bench"})
		m := target.Target{Spec: spec, BaseURL: srv.AnthropicBaseURL(), Provider: client,
			Limits: engine.Limits{RPM: 100000, TPM: 100000000, Window: time.Minute},
			Price:  price, SyncPrice: price, Rules: provider.ProviderRules(spec)}
		out, err := Run(ctx, Options{Dataset: "five-shot.jsonl", Source: strings.NewReader(data), Models: []target.Target{m},
			Scorer: &score.Scorer{}, Concurrency: 4, Tokenizer: tok, Store: st})
		if err != nil {
			b.Fatal(err)
		}
		run, ok, err := st.Run(ctx, out.RunID)
		if err != nil || !ok {
			b.Fatalf("run %s: %v %v", out.RunID, ok, err)
		}
		e, err := Report(ctx, st, run, nil)
		if err != nil {
			b.Fatal(err)
		}
		st.Close()
		if len(e.Models) != 1 || e.Models[0].Items != items || e.Models[0].Errors != 0 {
			b.Fatalf("%+v, want %d items answered", e.Models, items)
		}
		rep := e.Models[0]
		if rep.CachedInputTokens == 0 {
			b.Fatalf("nothing was read from the cache: %+v", rep)
		}
		cached, full = rep.CostUSD, price.Cost(rep.InputTokens, rep.OutputTokens)
	}
	b.ReportMetric(cached, "usd-cached")
	b.ReportMetric(full, "usd-uncached")
	b.ReportMetric(cached/full, "usd-ratio")
}
