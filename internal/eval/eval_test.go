package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/report"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// sums is a dataset of n additions, "what is i+i?" with 2i expected.
func sums(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "q%d", "prompt": "What is %d+%d?", "expected": "%d"}`+"\n", i, i, i, 2*i)
	}
	return b.String()
}

// adder answers sums; wrong ones for odd operands when sloppy. It counts
// its calls, and bills the prompt's tokens as count counts them.
func adder(sloppy bool, calls *atomic.Int64, count func(string) int) provider.Provider {
	return provider.Func(func(_ context.Context, req provider.Request) (provider.Response, error) {
		calls.Add(1)
		input := count(req.System)
		for _, m := range req.Messages {
			input += count(m.Content)
		}
		var a, b int
		fmt.Sscanf(req.Messages[len(req.Messages)-1].Content, "What is %d+%d?", &a, &b)
		sum := a + b
		if sloppy && a%2 == 1 {
			sum++
		}
		return provider.Response{Text: fmt.Sprint(sum), Usage: provider.Usage{InputTokens: input, OutputTokens: 2}}, nil
	})
}

type testRun struct {
	st     store.Store
	tok    *tokenizer.Tokenizer
	calls  [2]atomic.Int64
	models []Model
}

func newTestRun(t *testing.T) *testRun {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "eval.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tok, err := tokenizer.New("")
	if err != nil {
		t.Fatal(err)
	}
	r := &testRun{st: st, tok: tok}
	price := models.Price{InputPerM: 1000, OutputPerM: 1000} // a tenth of a cent a token
	for i, name := range []string{"careful", "sloppy"} {
		r.models = append(r.models, Model{Spec: provider.Spec{Provider: "openai", Model: name}, Provider: adder(i == 1, &r.calls[i], tok.Count),
			Price: price, Limits: engine.Limits{Window: time.Minute}})
	}
	return r
}

func (r *testRun) run(t *testing.T, data string, o Options) (*Outcome, *report.Eval) {
	t.Helper()
	o.Dataset, o.Source, o.Models, o.Tokenizer, o.Store = "sums.jsonl", strings.NewReader(data), r.models, r.tok, r.st
	o.Concurrency = max(o.Concurrency, 2)
	if o.Scorer == nil {
		o.Scorer = &score.Scorer{}
	}
	out, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if o.DryRun {
		return out, nil
	}
	run, ok, err := r.st.Run(context.Background(), out.RunID)
	if err != nil || !ok {
		t.Fatalf("run %s: %v %v", out.RunID, ok, err)
	}
	e, err := Report(context.Background(), r.st, run, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out, e
}

// TestRunScoresEveryModelAndPaysOnce: every item is asked of every model
// once, scored against its expected answer, and a rerun pays nothing.
func TestRunScoresEveryModelAndPaysOnce(t *testing.T) {
	r := newTestRun(t)
	out, e := r.run(t, sums(10), Options{})
	if out.Items != 10 || r.calls[0].Load() != 10 || r.calls[1].Load() != 10 {
		t.Fatalf("%d items, %d and %d calls; want 10 each", out.Items, r.calls[0].Load(), r.calls[1].Load())
	}
	if e.Models[0].Passed != 10 || e.Models[1].Passed != 5 {
		t.Errorf("passed %d and %d, want 10 and 5", e.Models[0].Passed, e.Models[1].Passed)
	}
	if p := e.Pairs[0]; p.AOnly != 5 || p.BOnly != 0 || p.Both != 5 {
		t.Errorf("pair %+v: want the careful model alone right on the 5 odd items", p)
	}
	out, e = r.run(t, sums(10), Options{})
	if r.calls[0].Load() != 10 || r.calls[1].Load() != 10 || out.Requests != 0 {
		t.Errorf("a rerun called the models: %d and %d calls, %d requests", r.calls[0].Load(), r.calls[1].Load(), out.Requests)
	}
	if e.Models[0].Cached != 10 || e.Models[1].Passed != 5 {
		t.Errorf("rerun: %+v", e.Models)
	}
}

// TestRunKeepsUnderMaxCost: each answer's worst case is booked before it
// is sent, so the run stops short of --max-cost and counts what it left.
func TestRunKeepsUnderMaxCost(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	out, e := r.run(t, sums(10), Options{MaxCost: 0.05, Concurrency: 1, Params: Params{MaxTokens: 8}})
	got := int(r.calls[0].Load())
	if got < 2 || got >= 10 || out.NotSent != 10-got {
		t.Errorf("%d calls, %d not sent; want some sent under $0.05 and the rest counted", got, out.NotSent)
	}
	if spent := e.Models[0].CostUSD; spent > 0.05 {
		t.Errorf("spent $%.4f, over --max-cost $0.05", spent)
	}
}

// TestDryRunCountsAndSendsNothing: a dry run counts one request per item
// and model, calls no model and stores nothing.
func TestDryRunCountsAndSendsNothing(t *testing.T) {
	r := newTestRun(t)
	out, _ := r.run(t, sums(6), Options{DryRun: true})
	if r.calls[0].Load()+r.calls[1].Load() != 0 {
		t.Fatal("a dry run called a model")
	}
	if len(out.Estimate) != 2 || out.Estimate[0].Requests != 6 || out.Estimate[1].Requests != 6 || out.Estimate[0].CostUSD <= 0 {
		t.Errorf("estimate %+v, want 6 requests per model, priced", out.Estimate)
	}
	if runs, _ := r.st.Runs(context.Background()); len(runs) != 0 {
		t.Errorf("a dry run stored %d runs", len(runs))
	}
}

// TestRepeatAsksEachItemAgain: --repeat 3 asks each item three times of
// each model, under keys of their own.
func TestRepeatAsksEachItemAgain(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	out, e := r.run(t, sums(4), Options{Params: Params{Repeat: 3}})
	if r.calls[0].Load() != 12 || e.Models[0].Items != 12 || out.Items != 4 {
		t.Errorf("%d calls, %d results, %d items; want 12, 12, 4", r.calls[0].Load(), e.Models[0].Items, out.Items)
	}
}
