package eval

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/stats"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
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
	models []target.Target
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
		r.models = append(r.models, target.Target{Spec: provider.Spec{Provider: "openai", Model: name}, Provider: adder(i == 1, &r.calls[i], tok.Count),
			Price: price, Limits: engine.Limits{Window: time.Minute}})
	}
	return r
}

func (r *testRun) run(t *testing.T, data string, o Options) (*RunStats, *evalreport.Eval) {
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
	if len(out.Estimate) != 2 || out.Estimate[0].Requests != 6 || out.Estimate[1].Requests != 6 || out.Estimate[0].CostUSD == nil || *out.Estimate[0].CostUSD <= 0 {
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

// TestItemsWithNothingToCheckAreNotSent: under --assert numeric, an item
// without an expected answer is never sent; its results are errors,
// counted as unchecked and left out of the accuracy. A dataset of such
// items only sends nothing and fails.
func TestItemsWithNothingToCheckAreNotSent(t *testing.T) {
	r := newTestRun(t)
	data := sums(4) + `{"id": "open1", "prompt": "What is 1+1?"}` + "\n" + `{"id": "open2", "prompt": "What is 3+3?"}` + "\n"
	out, e := r.run(t, data, Options{Scorer: &score.Scorer{Default: "numeric"}})
	if r.calls[0].Load() != 4 || r.calls[1].Load() != 4 {
		t.Errorf("%d and %d calls, want 4 each: the items with nothing to check are not sent", r.calls[0].Load(), r.calls[1].Load())
	}
	m := e.Models[0]
	if out.Unchecked != 4 || m.Unchecked != 2 || m.Errors != 0 || m.Items != 6 || m.Passed != 4 || m.Accuracy != 1 || m.Failures() != 0 {
		t.Errorf("outcome unchecked %d, model %+v: want 2 unchecked per model, no error, accuracy 4/4", out.Unchecked, m)
	}
	if p := e.Pairs[0]; p.Both+p.AOnly+p.BOnly+p.None != 4 {
		t.Errorf("pair %+v counts the unchecked items", p)
	}
	var reasons []string
	for res := range e.Results {
		if res.Error != "" {
			reasons = append(reasons, res.Item+": "+res.Error)
		}
	}
	if len(reasons) != 4 || reasons[0] != "open1: "+evalreport.NothingToCheck {
		t.Errorf("unchecked results %q", reasons)
	}

	r = newTestRun(t)
	o := Options{Dataset: "open.jsonl", Source: strings.NewReader(`{"prompt": "What is 1+1?"}` + "\n"), Models: r.models, Tokenizer: r.tok,
		Store: r.st, Concurrency: 2, Scorer: &score.Scorer{Default: "numeric"}}
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrNothingToCheck) {
		t.Errorf("every item unchecked: %v, want ErrNothingToCheck", err)
	}
	if r.calls[0].Load()+r.calls[1].Load() != 0 {
		t.Error("a dataset with nothing to check was sent")
	}
	o.Source, o.DryRun = strings.NewReader(`{"prompt": "What is 1+1?"}`+"\n"), true
	if _, err := Run(context.Background(), o); !errors.Is(err, ErrNothingToCheck) {
		t.Errorf("dry run, every item unchecked: %v, want ErrNothingToCheck", err)
	}
}

// TestAnyCheckableStopsAtTheFirst: the survey before a run finds a
// checkable item wherever it is, within the limit, and counts lines.
func TestAnyCheckableStopsAtTheFirst(t *testing.T) {
	open := `{"prompt": "a"}` + "\n"
	sc := &score.Scorer{Default: "numeric"}
	for _, tt := range []struct {
		data  string
		limit int
		want  bool
	}{
		{open + open + sums(1), 0, true},
		{open + open + sums(1), 2, false},
		{open + open, 0, false},
		{open + "not json\n" + sums(1), 0, true},
	} {
		got, err := AnyCheckable(context.Background(), strings.NewReader(tt.data), dataset.Options{Name: "d.jsonl"}, tt.limit, sc)
		if err != nil || got != tt.want {
			t.Errorf("AnyCheckable(%q, limit %d) = %v, %v; want %v", tt.data, tt.limit, got, err, tt.want)
		}
	}
	if got, _ := AnyCheckable(context.Background(), strings.NewReader(open), dataset.Options{}, 0, &score.Scorer{Default: "json"}); !got {
		t.Error("--assert json needs no expected answer, yet the item reads as unchecked")
	}
	for data, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\n\nb\n": 3} {
		if got, err := CountLines(strings.NewReader(data)); got != want || err != nil {
			t.Errorf("CountLines(%q) = %d, %v; want %d", data, got, err, want)
		}
	}
}

// scripted answers item qN right the first right[N] times it is asked,
// wrong after: the repeats of one item disagree as the script says.
func scripted(right []int) provider.Provider {
	var mu sync.Mutex
	asked := map[int]int{}
	return provider.Func(func(_ context.Context, req provider.Request) (provider.Response, error) {
		var a, b int
		fmt.Sscanf(req.Messages[len(req.Messages)-1].Content, "What is %d+%d?", &a, &b)
		mu.Lock()
		n := asked[a]
		asked[a]++
		mu.Unlock()
		sum := a + b
		if n >= right[a] {
			sum++
		}
		return provider.Response{Text: fmt.Sprint(sum), Usage: provider.Usage{InputTokens: 5, OutputTokens: 1}}, nil
	})
}

// TestRepeatsAreReportedPerItem: with --repeat 4, an item passes when
// more than half of its repeats pass (2 of 4 fails), and the accuracy, its
// interval and the pair use items; per-result figures stay beside them.
// Every figure is worked out by hand from the script.
func TestRepeatsAreReportedPerItem(t *testing.T) {
	r := newTestRun(t)
	// A: q0 4/4, q1 3/4, q2 2/4 (a tie), q3 0/4. B: q0 4/4, q1 1/4, q2 2/4, q3 1/4.
	r.models[0].Provider = scripted([]int{4, 3, 2, 0})
	r.models[1].Provider = scripted([]int{4, 1, 2, 1})
	_, e := r.run(t, sums(4), Options{Params: Params{Repeat: 4}})
	a, b := e.Models[0], e.Models[1]
	if e.Repeat != 4 || a.PerItem == nil || b.PerItem == nil {
		t.Fatalf("repeat %d, per item %v %v", e.Repeat, a.PerItem, b.PerItem)
	}
	// A passes q0 and q1: 2 of 4 items; 9 of 16 results; item means 1, .75, .5, 0.
	want := evalreport.ItemStats{Items: 4, Passed: 2, MeanScore: 0.5625, Disagree: 2, DisagreeShare: 0.5}
	if *a.PerItem != want || a.Accuracy != 0.5 || a.ResultAccuracy != 9.0/16 || a.Items != 16 || a.Passed != 9 {
		t.Errorf("A: %+v %+v, want %+v, accuracy 0.5 of items, 9/16 of results", a, *a.PerItem, want)
	}
	// B passes q0 only; 8 of 16 results; item means 1, .25, .5, .25.
	want = evalreport.ItemStats{Items: 4, Passed: 1, MeanScore: 0.5, Disagree: 3, DisagreeShare: 0.75}
	if *b.PerItem != want || b.Accuracy != 0.25 || b.ResultAccuracy != 0.5 {
		t.Errorf("B: %+v %+v, want %+v, accuracy 0.25", b, *b.PerItem, want)
	}
	// The interval is Wilson's over 4 items, not 16 results.
	if lo, hi := stats.Wilson(2, 4); a.CILow != lo || a.CIHigh != hi {
		t.Errorf("A's interval [%v, %v], want Wilson(2, 4) = [%v, %v]", a.CILow, a.CIHigh, lo, hi)
	}
	// Items: both pass q0, A alone q1, neither q2 (a tie each) nor q3.
	if p := e.Pairs[0]; p.Both != 1 || p.AOnly != 1 || p.BOnly != 0 || p.None != 2 || p.P != 1 {
		t.Errorf("pair %+v, want both 1, A only 1, neither 2, p 1", p)
	}
}

// counting is a Progress whose total grows as the run finds items.
type counting struct {
	mu          sync.Mutex
	found, done int
}

func (c *counting) Found(n int)               { c.mu.Lock(); c.found += n; c.mu.Unlock() }
func (c *counting) Done(n int)                { c.mu.Lock(); c.done += n; c.mu.Unlock() }
func (c *counting) Spent(int, float64, int64) {}

// TestProgressGrowsWithTheItemsRead: a dataset read as it streams adds
// models x repeats results to the progress per item, and every one of
// them, unchecked ones included, is done by the end.
func TestProgressGrowsWithTheItemsRead(t *testing.T) {
	r := newTestRun(t)
	c := &counting{}
	r.run(t, sums(5)+`{"prompt": "What is 1+1?"}`+"\n", Options{Progress: c, Params: Params{Repeat: 2}})
	if c.found != 6*2*2 || c.done != c.found {
		t.Errorf("found %d, done %d; want 24 each", c.found, c.done)
	}
}

// TestUncheckableAssertionsAreNotSent: an assertion that cannot be checked
// (no value and no expected answer) is not worth an answer: its item is
// not sent, and its error says why. promptfoo test cases with no assertion
// at all are never sent either: a run of them only is ErrNothingToCheck.
func TestUncheckableAssertionsAreNotSent(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	data := `{"id": "q", "prompt": "What is 3+3?", "expected": "6"}` + "\n" + `{"id": "b", "prompt": "Say hi", "assert": [{"type": "exact"}]}` + "\n"
	_, e := r.run(t, data, Options{})
	if n := r.calls[0].Load(); n != 1 {
		t.Errorf("%d calls, want the checkable item's alone", n)
	}
	res := results(e, "openai:careful")
	if b := res["b"]; b.Pass || !strings.Contains(b.Error, "no value, and the item has no expected answer") {
		t.Errorf("the uncheckable item: %+v", b)
	}
	if q := res["q"]; !q.Pass {
		t.Errorf("the checkable item: %+v", q)
	}

	_, err := Run(context.Background(), Options{Dataset: "tests.jsonl", Source: strings.NewReader(`{"vars": {"city": "Paris"}}` + "\n" + `{"vars": {"city": "Rome"}}` + "\n"),
		Read: dataset.Options{Name: "tests.jsonl", Template: "Describe {{city}}"}, Models: r.models, Tokenizer: r.tok, Store: r.st,
		Concurrency: 2, Scorer: &score.Scorer{}})
	if !errors.Is(err, ErrNothingToCheck) || r.calls[0].Load() != 1 {
		t.Errorf("promptfoo tests without assertions: %v, %d calls; want ErrNothingToCheck and none sent", err, r.calls[0].Load()-1)
	}
}

// TestDryRunCountsTokensAsTheModelDoes: Sonnet 5's tokenizer counts 1.42
// tokens for each o200k one, so a dry run counts its input at that factor,
// rounded up per request, where Sonnet 4.5, which counts as o200k does,
// gets the tokenizer's count. Its output caps are its own tokens already.
func TestDryRunCountsTokensAsTheModelDoes(t *testing.T) {
	r := newTestRun(t)
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	r.tok = tok
	r.models = nil
	for _, s := range []string{"anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-5"} {
		spec, _ := provider.ParseSpec(s)
		r.models = append(r.models, target.Target{Spec: spec, Rules: provider.ProviderRules(spec), Provider: adder(false, &r.calls[0], tok.Count)})
	}
	out, _ := r.run(t, `{"id": "q", "prompt": "What is 2 + 2? Answer with the number alone.", "expected": "4"}`+"\n", Options{DryRun: true, Params: Params{MaxTokens: 512}})
	base, scaled := out.Estimate[0], out.Estimate[1]
	if base.Requests != 1 || scaled.Requests != 1 || base.InputTokens < 10 {
		t.Fatalf("estimate %+v", out.Estimate)
	}
	if want := (base.InputTokens*142 + 99) / 100; scaled.InputTokens != want {
		t.Errorf("Sonnet 5 counts %d input tokens, want ceil(1.42 × %d) = %d", scaled.InputTokens, base.InputTokens, want)
	}
	if scaled.MaxOutputTokens != base.MaxOutputTokens || base.MaxOutputTokens != 512 {
		t.Errorf("output caps %d and %d: the cap is the model's own tokens, not scaled", scaled.MaxOutputTokens, base.MaxOutputTokens)
	}
}
