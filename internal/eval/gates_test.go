package eval

import (
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
)

// --min reads metrics for every model and for one, the model being what
// precedes the last colon.
func TestParseMin(t *testing.T) {
	got, err := ParseMin(" bias=0.9, openai:gpt-4o-mini:accuracy=0.8,,x:tone=1 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []MinGate{{Gate{"", "bias"}, 0.9}, {Gate{"openai:gpt-4o-mini", "accuracy"}, 0.8}, {Gate{"x", "tone"}, 1}}
	if len(got) != len(want) {
		t.Fatalf("ParseMin = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("gate %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for bad, msg := range map[string]string{
		"bias":        "has no =VALUE",
		"bias=1.5":    "is not a pass rate between 0 and 1",
		"bias=NaN":    "is not a pass rate between 0 and 1",
		"Bias=0.5":    `metric "Bias" is not a lower-case identifier`,
		":bias=0.5":   "names no model before the colon",
		"openai:=0.5": `metric "" is not a lower-case identifier`,
	} {
		if _, err := ParseMin(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseMin(%q) = %v, want %q", bad, err, msg)
		}
	}
}

// Gates.For prefers a model's own gate to the one for every model.
func TestGatesFor(t *testing.T) {
	g := Gates{{"", "bias"}: 0.9, {"m", "bias"}: 0.5}
	if v, ok := g.For("m", "bias"); !ok || v != 0.5 {
		t.Errorf("m: %v %v", v, ok)
	}
	if v, ok := g.For("n", "bias"); !ok || v != 0.9 {
		t.Errorf("n: %v %v", v, ok)
	}
	if _, ok := g.For("m", "accuracy"); ok {
		t.Error("accuracy has no gate")
	}
}

// FuzzParseMin checks that --min's parser never panics and that every
// gate it accepts has a valid metric and a pass rate from 0 to 1.
func FuzzParseMin(f *testing.F) {
	for _, s := range []string{"bias=0.9", "openai:gpt-4o-mini:bias=0.9,accuracy=1", ":x=1", "a=b=c", "x:=0", "bias=1e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gates, err := ParseMin(s)
		if err != nil {
			return
		}
		for _, g := range gates {
			if dataset.ValidMetric(g.Metric) != nil || !(g.Value >= 0 && g.Value <= 1) || strings.Contains(g.Metric, ":") {
				t.Errorf("ParseMin(%q) gave %+v", s, g)
			}
		}
	})
}
