// Package dataset reads evaluation datasets: JSON Lines in the formats of
// digest itself, openai/evals, inspect_ai and promptfoo, one item at a time,
// so that a dataset of any size streams through in constant memory.
package dataset

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// Formats an item can come in, detected line by line.
const (
	Native      = "native"       // {"id"?, "system"?, "prompt" | "messages", "expected"?, "assert"?, "metadata"?}
	OpenAIEvals = "openai-evals" // {"input": string | [messages], "ideal": string | [strings]}
	Inspect     = "inspect"      // {"input", "target", "choices"?, "id"?, "metadata"?}
	Promptfoo   = "promptfoo"    // {"vars": {...}, "assert": [...]} with a --prompt template
)

// Item is one dataset entry, ready to send and to score.
type Item struct {
	ID       string // the item's own id, or "line-N"
	Line     int    // 1-based line in the source
	Format   string // one of the format constants
	System   string
	Messages []provider.Message
	// Expected holds the acceptable answers (expected, ideal, target).
	Expected []string
	// Choices are the options of a multiple-choice item, in order: A, B, ...
	Choices  []string
	Asserts  []Assertion
	Metadata map[string]any
}

// Assertion is one check on a model's answer, as written in a dataset's
// "assert" list or given with --assert.
type Assertion struct {
	// Type is exact, includes, icontains, starts-with, regex, numeric,
	// choice, json, json-schema or judge, optionally prefixed with "not-".
	// promptfoo's names (equals, contains, is-json, llm-rubric, ...) are
	// read as their digest equivalents.
	Type string `json:"type"`
	// Value is what the assertion compares against: a string, a number, a
	// list of strings (any may match), a JSON schema object, or a rubric.
	// Empty means the item's Expected answers.
	Value any `json:"value,omitempty"`
	// Weight is the assertion's share of the item's score; 0 means 1.
	Weight float64 `json:"weight,omitempty"`
	// Threshold is the score at or above which the item passes; nil means
	// every assertion must pass. On a graded judge (Scale) it is instead
	// the judge's own pass mark, on 0-1.
	Threshold *float64 `json:"threshold,omitempty"`
	// Metric is the name the assertion's result counts under, such as
	// "bias" or "accuracy" (see ValidMetric); "" means DefaultMetric.
	// An item scores once per metric over that metric's assertions.
	Metric string `json:"metric,omitempty"`
	// Scale makes a judge assertion graded: "LO-HI", such as "1-5" (see
	// ParseScale). The judge scores the answer on it; the assertion adds
	// the score normalised to 0-1 to the item's score, and passes when
	// that reaches Threshold, or, with no Threshold, when the score
	// reaches the scale's midpoint. A graded judge's Threshold is its own
	// pass mark, not the item's. "" is the PASS or FAIL judge.
	Scale string `json:"scale,omitempty"`
}

// DefaultMetric is the metric of an assertion that names none: a dataset
// without metric names is scored, and reported, as one metric.
const DefaultMetric = "accuracy"

// metricName is what a metric name may be: a lower-case identifier, short
// enough for a column heading.
var metricName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// ValidMetric checks a metric name: a lower-case letter, then up to 39
// lower-case letters, digits or underscores, such as bias or
// factual_accuracy. Names are compared as written, so the rule keeps
// "Bias" and "bias" from being two metrics.
func ValidMetric(name string) error {
	if !metricName.MatchString(name) {
		return fmt.Errorf("metric %q is not a lower-case identifier (a-z, then a-z, 0-9 or _, at most 40); try: %s", clip(name), suggestMetric(name))
	}
	return nil
}

// suggestMetric is name made into a valid metric name, for a message.
func suggestMetric(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
		case b.Len() > 0 && (r == '_' || r == '-' || r == ' '):
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if s := strings.TrimRight(b.String(), "_"); s != "" {
		return s
	}
	return DefaultMetric
}

// MetricOf is the metric an assertion counts under: its own, or
// DefaultMetric.
func MetricOf(a Assertion) string {
	if a.Metric == "" {
		return DefaultMetric
	}
	return a.Metric
}

// LineError is a dataset line that cannot be read.
type LineError struct {
	File string
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// SplitAssertFlag reads --assert's value, TYPE or TYPE@METRIC, such as
// "icontains@accuracy" or "judge@bias": the default assertion and the
// metric it counts under ("" for DefaultMetric). The type is checked by
// the scorer; the metric here.
func SplitAssertFlag(s string) (typ, metric string, err error) {
	typ, metric, named := strings.Cut(s, "@")
	typ = strings.TrimSpace(typ)
	if !named {
		return typ, "", nil
	}
	metric = strings.TrimSpace(metric)
	if err := ValidMetric(metric); err != nil {
		return typ, "", fmt.Errorf("--assert %s: %w", clip(s), err)
	}
	return typ, metric, nil
}
