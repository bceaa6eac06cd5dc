package eval

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/stats"
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
