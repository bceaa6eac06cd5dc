package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/dataset"
)

// MinGate is one threshold of --min: a metric's pass rate below which a
// model fails the run.
type MinGate struct {
	Gate
	Value float64
}

// ParseMin reads one --min value: comma-separated METRIC=VALUE, for every
// model, or MODEL:METRIC=VALUE, for one, such as
// "bias=0.9,openai:gpt-4o-mini:accuracy=0.8". The model is what precedes
// the last colon (model specs have colons of their own, metric names
// none) and is returned as written, for the caller to check against the
// models run. VALUE is a pass rate from 0 to 1: the share of a model's
// graded results that passed the metric, as --min-accuracy's accuracy is.
func ParseMin(s string) ([]MinGate, error) {
	var out []MinGate
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, value, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--min %q: %q has no =VALUE. Try: --min bias=0.9 or --min openai:gpt-4o-mini:bias=0.9", s, part)
		}
		var g MinGate
		g.Metric = strings.TrimSpace(key)
		if i := strings.LastIndex(g.Metric, ":"); i >= 0 {
			g.Model, g.Metric = strings.TrimSpace(g.Metric[:i]), strings.TrimSpace(g.Metric[i+1:])
			if g.Model == "" {
				return nil, fmt.Errorf("--min %q: %q names no model before the colon. Try: --min %s=%s for every model", s, part, g.Metric, strings.TrimSpace(value))
			}
		}
		if err := dataset.ValidMetric(g.Metric); err != nil {
			return nil, fmt.Errorf("--min %q: %w", s, err)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("--min %q: %q is not a pass rate between 0 and 1. Try: --min %s=0.9", s, strings.TrimSpace(value), g.Metric)
		}
		g.Value = v
		out = append(out, g)
	}
	return out, nil
}
