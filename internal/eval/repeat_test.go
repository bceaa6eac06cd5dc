package eval

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// TestRepeatsAreSentAsTheyAreMade: a billion repeats of one item are not
// made in memory first. The model hears its first request at once, and a
// stop then ends the run between two lookup batches, having stored what it
// was answered.
func TestRepeatsAreSentAsTheyAreMade(t *testing.T) {
	for _, dry := range []bool{false, true} {
		t.Run(fmt.Sprint("dry run ", dry), func(t *testing.T) {
			r := newTestRun(t)
			r.models = r.models[:1]
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var seen atomic.Int64
			m := r.models[0]
			m.Provider = provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
				if seen.Add(1) == 10 {
					cancel()
				}
				return provider.Response{Text: "0"}, nil
			})
			o := Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(1)), Models: []target.Target{m}, Tokenizer: r.tok, Store: r.st,
				Concurrency: 2, Scorer: &score.Scorer{}, Params: Params{Repeat: 1_000_000_000}, DryRun: dry}
			if dry {
				// A dry run sends nothing: it stops on the lookups instead.
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			_, err := Run(ctx, o)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want it stopped by the cancel", err)
			}
			if !dry && seen.Load() < 10 {
				t.Errorf("%d requests sent", seen.Load())
			}
		})
	}
}

// BenchmarkRepeatMemory runs 10 items with ever more repeats through the
// offline-fast adder into a real SQLite file, and reports the peak of the
// heap: it stays flat as the repeats grow, since they stream a lookup
// batch at a time. On 2 cores, 36 MB for 1,000 results and 38 MB for
// 100,000 sent and stored; 35 MB for 100,000 counted by a dry run and
// 46 MB for a million repeats of the 10 items, ten million results (72 s):
//
//	go test ./internal/eval -run '^$' -bench BenchmarkRepeatMemory -benchtime 1x
func BenchmarkRepeatMemory(b *testing.B) {
	for _, c := range []struct {
		repeat int
		dry    bool
	}{{100, false}, {1000, false}, {10_000, false}, {10_000, true}, {100_000, true}, {1_000_000, true}} {
		name := fmt.Sprintf("run/repeat=%d", c.repeat)
		if c.dry {
			name = fmt.Sprintf("dry-run/repeat=%d", c.repeat)
		}
		b.Run(name, func(b *testing.B) {
			st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "eval.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			tok, err := tokenizer.New("")
			if err != nil {
				b.Fatal(err)
			}
			var calls atomic.Int64
			m := target.Target{Spec: provider.Spec{Provider: "openai", Model: "adder"}, Provider: adder(false, &calls, tok.Count)}
			var peak uint64
			for b.Loop() {
				stop := watchHeap(&peak)
				_, err := Run(context.Background(), Options{Dataset: "sums.jsonl", Source: strings.NewReader(sums(10)), Models: []target.Target{m},
					Tokenizer: tok, Store: st, Concurrency: 4, Scorer: &score.Scorer{}, Params: Params{Repeat: c.repeat}, DryRun: c.dry})
				stop()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(10*c.repeat), "results")
		})
	}
}

// watchHeap samples the live heap every few milliseconds into *peak until
// the returned stop is called.
func watchHeap(peak *uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			*peak = max(*peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// TestPromptOverTheTokenLimitIsReportedWithItsPrompt: a prompt no window
// of the model's token limit can hold fails alone, with an error naming
// the sizes and eval's own way out, and its result shows the prompt.
func TestPromptOverTheTokenLimitIsReportedWithItsPrompt(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	r.models[0].Limits.TPM = 1000 // the two short items fit in its first burst
	long := `{"id": "long", "prompt": "` + strings.Repeat("word ", 2000) + `What is 1+1?", "expected": "2"}` + "\n"
	out, e := r.run(t, sums(2)+long, Options{Params: Params{MaxTokens: 8}})
	if out.Items != 3 || r.calls[0].Load() != 2 {
		t.Fatalf("%d items, %d calls; want 3 items and the 2 short ones sent", out.Items, r.calls[0].Load())
	}
	var failed []string
	for res := range e.Results {
		if res.Error == "" {
			continue
		}
		failed = append(failed, res.Item)
		if !strings.HasPrefix(res.Error, "request needs ") || !strings.Contains(res.Error, "limit of 1000 tokens per minute. Try: ") || strings.Contains(res.Error, "--max-diff-tokens") {
			t.Errorf("error %q: want the sizes and eval's advice, not summarize's", res.Error)
		}
		if !strings.HasSuffix(res.Prompt, "What is 1+1?") {
			t.Errorf("the failed result's prompt is %q, want the prompt it could not send", res.Prompt)
		}
	}
	if len(failed) != 1 || failed[0] != "long" {
		t.Errorf("failed %v, want the long item alone", failed)
	}
}
