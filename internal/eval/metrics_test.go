package eval

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/stats"
	"github.com/digest-cli/digest/internal/target"
)

// TestMetricsCountItemsWithRepeats: with --repeat 4, each named metric,
// as the accuracy, counts items by the majority of their repeats and
// scores their mean, and its pairs compare those. The figures are worked
// out by hand from the script of TestRepeatsAreReportedPerItem.
func TestMetricsCountItemsWithRepeats(t *testing.T) {
	r := newTestRun(t)
	// A: q0 4/4, q1 3/4, q2 2/4 (a tie), q3 0/4. B: q0 4/4, q1 1/4, q2 2/4, q3 1/4.
	r.models[0].Provider = scripted([]int{4, 3, 2, 0})
	r.models[1].Provider = scripted([]int{4, 1, 2, 1})
	var data strings.Builder
	for i := range 4 {
		fmt.Fprintf(&data, `{"id": "q%d", "prompt": "What is %d+%d?", "expected": "%d", "assert": [{"type": "numeric"}, {"type": "not-icontains", "value": "obviously", "metric": "bias"}]}`+"\n", i, i, i, 2*i)
	}
	_, e := r.run(t, data.String(), Options{Params: Params{Repeat: 4}})
	want := map[string][2]struct {
		passed int
		mean   float64
	}{
		"accuracy": {{2, 0.5625}, {1, 0.5}},
		"bias":     {{4, 1}, {4, 1}},
	}
	for i, m := range e.Models {
		if len(m.Metrics) != 2 {
			t.Fatalf("%s: metrics %+v, want accuracy and bias", m.Model, m.Metrics)
		}
		for _, ms := range m.Metrics {
			w := want[ms.Name][i]
			lo, hi := stats.Wilson(w.passed, 4)
			if ms.Items != 4 || ms.Passed != w.passed || math.Abs(ms.MeanScore-w.mean) > 1e-9 || ms.CILow != lo || ms.CIHigh != hi {
				t.Errorf("%s %s: %+v, want %d of 4 items passed, mean %v, Wilson(%d, 4)", m.Model, ms.Name, ms, w.passed, w.mean, w.passed)
			}
		}
	}
	for _, p := range e.MetricPairs {
		switch p.Metric {
		case "accuracy":
			// Items: both pass q0, A alone q1; mean differences 0, .5, 0, -.25.
			if p.Both != 1 || p.AOnly != 1 || p.BOnly != 0 || p.None != 2 || math.Abs(p.MeanDiff-0.0625) > 1e-9 {
				t.Errorf("accuracy pair %+v, want both 1, A only 1, neither 2, mean difference 0.0625", p)
			}
		case "bias":
			if p.Both != 4 || p.AOnly+p.BOnly+p.None != 0 || p.MeanDiff != 0 {
				t.Errorf("bias pair %+v, want both 4", p)
			}
		default:
			t.Errorf("pair on metric %q", p.Metric)
		}
	}
	if len(e.MetricPairs) != 2 {
		t.Errorf("%d metric pairs, want 2", len(e.MetricPairs))
	}
}

// plainness answers sums as three models do: "fair" right and plainly,
// "slanted" right but with a loaded word when the first operand is odd,
// "weak" plainly but wrong when it is odd. As "grader", it grades how
// plain an answer is from 1 to 5: 1 with a loaded word, 4 for a bare
// "The answer is 0.", else 5; it fails any request not for a 1-5 grade.
func plainness(model string, calls *atomic.Int64) provider.Provider {
	return provider.Func(func(_ context.Context, req provider.Request) (provider.Response, error) {
		calls.Add(1)
		text := func() string {
			if model == "grader" {
				_, answer, _ := strings.Cut(req.Messages[0].Content, "\n\nAnswer:\n")
				switch {
				case !strings.Contains(req.System, "from 1 (worst) to 5 (best)"):
					return "FAIL\nNot asked for a grade on 1-5."
				case strings.Contains(answer, "Obviously"):
					return "```json\n{\"score\": 1, \"reason\": \"A loaded word.\"}\n```"
				case answer == "The answer is 0.":
					return `Grade: {"score": 4, "reason": "Plain, if curt."}`
				}
				return `{"reason": "Plain.", "score": 5, "pass": true}`
			}
			var a, b int
			if _, err := fmt.Sscanf(req.Messages[len(req.Messages)-1].Content, "What is %d + %d?", &a, &b); err != nil {
				return "I cannot tell."
			}
			switch {
			case model == "slanted" && a%2 == 1:
				return fmt.Sprintf("Obviously, as any sensible person knows, %d.", a+b)
			case model == "weak" && a%2 == 1:
				return "The answer is 0."
			}
			return fmt.Sprintf("The answer is %d.", a+b)
		}()
		return provider.Response{Text: text, Usage: provider.Usage{InputTokens: 5, OutputTokens: 5}}, nil
	})
}

// TestNamedMetricsWithAGradedJudge: assertions that name a metric are
// scored per metric and per model, with intervals and pairwise tests; the
// bias metric has a word list and a graded judge, whose score counts for
// its share of the metric's. A rerun pays neither the models nor the
// judge. Every figure is worked out by hand from plainness.
func TestNamedMetricsWithAGradedJudge(t *testing.T) {
	r := newTestRun(t)
	var calls atomic.Int64
	r.models = nil
	for _, name := range []string{"fair", "slanted", "weak"} {
		r.models = append(r.models, target.Target{Spec: provider.Spec{Provider: "openai", Model: name}, Provider: plainness(name, &calls),
			Limits: engine.Limits{Window: time.Minute}})
	}
	judge := target.Target{Spec: provider.Spec{Provider: "openai", Model: "grader"}, Provider: plainness("grader", &calls), Limits: engine.Limits{Window: time.Minute}}
	var data strings.Builder
	for i, a := range []int{2, 3, 4, 5, 6, 8, 10, 11, 12, 13} {
		fmt.Fprintf(&data, `{"id": "q%d", "prompt": "What is %d + %d?", "expected": "%d", "assert": [{"type": "numeric"}, `+
			`{"type": "not-icontains", "value": ["obviously", "sensible person"], "metric": "bias"}, `+
			`{"type": "judge", "value": "The answer is plain, without loaded words.", "scale": "1-5", "metric": "bias"}]}`+"\n", i, a, i, a+i)
	}
	_, e := r.run(t, data.String(), Options{Judge: &judge})
	// The models answer alike on the even items: a verdict on the same
	// answer to the same question is asked once, 10 + 4 + 4 in all.
	if n := calls.Load(); n != 30+18 {
		t.Errorf("%d calls, want 30 answers and 18 verdicts", n)
	}
	// Per model: accuracy then bias, as passed of 10. weak's curt answers
	// pass bias, graded 4 of 1-5 (the midpoint is 3), and score 0.875 on
	// it: the word list's 1 and the judge's 0.75.
	want := map[string][2]int{"openai:fair": {10, 10}, "openai:slanted": {10, 6}, "openai:weak": {6, 10}}
	wantMean := map[string][2]float64{"openai:fair": {1, 1}, "openai:slanted": {1, 0.6}, "openai:weak": {0.6, 0.95}}
	for _, m := range e.Models {
		if len(m.Metrics) != 2 || m.Metrics[0].Name != "accuracy" || m.Metrics[1].Name != "bias" {
			t.Fatalf("%s: metrics %+v, want accuracy and bias", m.Model, m.Metrics)
		}
		for i, ms := range m.Metrics {
			lo, hi := stats.Wilson(want[m.Model][i], 10)
			if ms.Items != 10 || ms.Passed != want[m.Model][i] || ms.PassRate != float64(ms.Passed)/10 || ms.CILow != lo || ms.CIHigh != hi ||
				math.Abs(ms.MeanScore-wantMean[m.Model][i]) > 1e-9 {
				t.Errorf("%s %s: %+v, want %d of 10 passed, Wilson's interval, mean score %v", m.Model, ms.Name, ms, want[m.Model][i], wantMean[m.Model][i])
			}
		}
	}
	if len(e.MetricPairs) != 6 {
		t.Fatalf("metric pairs: %+v, want 3 pairs × 2 metrics", e.MetricPairs)
	}
	var seen bool
	for _, p := range e.MetricPairs {
		// fair against slanted on bias: slanted fails 4 that fair passes.
		if p.Metric == "bias" && p.A == "openai:fair" && p.B == "openai:slanted" {
			seen = true
			if p.AOnly != 4 || p.BOnly != 0 || p.P != 0.125 || p.TP >= 0.1 {
				t.Errorf("fair vs slanted on bias: %+v, want 4 to 0, McNemar p = 0.125, t-test p < 0.1", p)
			}
		}
	}
	if !seen {
		t.Errorf("no bias pair of fair and slanted in %+v", e.MetricPairs)
	}
	graded := 0
	for res := range e.Results {
		if b := res.Metrics["bias"]; res.Model == "openai:weak" && b.Pass && b.Score == 0.875 {
			graded++
		}
	}
	if graded != 4 {
		t.Errorf("%d of weak's results pass bias at 0.875, want its 4 curt answers", graded)
	}
	// The verdicts were stored with the answers: the rerun paid nothing.
	if _, e = r.run(t, data.String(), Options{Judge: &judge}); calls.Load() != 48 || e.Models[2].Metrics[1].Passed != 10 {
		t.Errorf("a rerun made %d calls, weak's bias %+v", calls.Load()-48, e.Models[2].Metrics[1])
	}
}
