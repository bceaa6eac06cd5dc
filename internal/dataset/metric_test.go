package dataset

import (
	"strings"
	"testing"
)

// Metric names are lower-case identifiers; a bad one's message offers a
// valid name.
func TestValidMetric(t *testing.T) {
	for _, ok := range []string{"accuracy", "bias", "factual_accuracy", "b2", strings.Repeat("a", 40)} {
		if err := ValidMetric(ok); err != nil {
			t.Errorf("ValidMetric(%q) = %v", ok, err)
		}
	}
	for bad, try := range map[string]string{"Bias": "try: bias", "": "try: accuracy", "2x": "try: x", "tone-of-voice": "try: tone_of_voice",
		"bias ": "try: bias", strings.Repeat("a", 41): "try: " + strings.Repeat("a", 40), "é": "try: accuracy"} {
		err := ValidMetric(bad)
		if err == nil || !strings.HasSuffix(err.Error(), try) {
			t.Errorf("ValidMetric(%q) = %v, want an error ending %q", bad, err, try)
		}
	}
}

// An assertion's metric is read from a dataset line, kept through
// promptfoo's list assertions, and checked.
func TestAssertionMetric(t *testing.T) {
	as, err := parseAsserts([]byte(`[{"type": "exact", "metric": "accuracy"}, {"type": "contains-all", "value": ["a", "b"], "metric": "bias"}, {"type": "regex", "value": "x"}]`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range as {
		got = append(got, a.Metric+"="+MetricOf(a))
	}
	if want := "accuracy=accuracy bias=bias bias=bias =accuracy"; strings.Join(got, " ") != want {
		t.Errorf("metrics %q, want %q", strings.Join(got, " "), want)
	}
	for raw, want := range map[string]string{
		`[{"type": "exact", "metric": "Bias"}]`: `"assert"[0]: "metric": metric "Bias" is not a lower-case identifier`,
		`[{"type": "exact", "metric": 3}]`:      `"assert"[0]: "metric" must be a string such as "bias"; got a number`,
	} {
		if _, err := parseAsserts([]byte(raw), nil); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// --assert TYPE@METRIC splits at the @, and checks the metric.
func TestSplitAssertFlag(t *testing.T) {
	for in, want := range map[string][2]string{"icontains": {"icontains", ""}, "judge@bias": {"judge", "bias"}, " exact @ accuracy ": {"exact", "accuracy"}, "": {"", ""}} {
		typ, metric, err := SplitAssertFlag(in)
		if err != nil || typ != want[0] || metric != want[1] {
			t.Errorf("SplitAssertFlag(%q) = %q, %q, %v; want %q", in, typ, metric, err, want)
		}
	}
	for _, bad := range []string{"exact@", "exact@Bias", "exact@a@b"} {
		if _, _, err := SplitAssertFlag(bad); err == nil {
			t.Errorf("SplitAssertFlag(%q) took it", bad)
		}
	}
}

// FuzzSplitAssertFlag checks that --assert's parser never panics, and
// that what it accepts is a valid metric and the text before the @.
func FuzzSplitAssertFlag(f *testing.F) {
	for _, s := range []string{"exact", "judge@bias", "a@b@c", "@", "x@Bias", " exact @ accuracy "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, metric, err := SplitAssertFlag(s)
		if err != nil {
			return
		}
		if metric != "" && ValidMetric(metric) != nil {
			t.Errorf("SplitAssertFlag(%q) gave metric %q", s, metric)
		}
		if before, _, _ := strings.Cut(s, "@"); typ != strings.TrimSpace(before) {
			t.Errorf("SplitAssertFlag(%q) gave type %q", s, typ)
		}
	})
}
