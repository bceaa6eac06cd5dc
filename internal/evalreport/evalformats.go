package evalreport

import (
	"fmt"
	"io"
	"iter"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// EvalReporter writes an evaluation report in one format.
//
// Reports that list results read e.Results once, in the order it yields
// them: model by model (every result of one model before the next
// model's), item by item. WriteJUnit relies on that order; the others
// only keep it.
type EvalReporter interface {
	WriteEval(w io.Writer, e *Eval) error
}

// EvalFormats lists the names ForEvalFormat accepts. JUnit and HTML are
// files of their own (--junit, --html): see WriteJUnit and WriteHTML.
var EvalFormats = []string{"table", "json", "jsonl", "csv", "markdown"}

// ForEvalFormat returns the reporter for an eval --format value.
func ForEvalFormat(name string) (EvalReporter, error) {
	switch name {
	case "table":
		return EvalTable{}, nil
	case "json":
		return EvalJSON{}, nil
	case "jsonl":
		return EvalJSONL{}, nil
	case "csv":
		return EvalCSV{}, nil
	case "markdown", "md":
		return EvalMarkdown{}, nil
	}
	return nil, fmt.Errorf("unknown format %q. Try: one of %s", name, strings.Join(EvalFormats, ", "))
}

// Failures counts the results that were answered and failed; errors and
// unchecked results are counted apart. Refused and cut answers that failed
// are among them: they are answers, scored as any.
func (m ModelStats) Failures() int { return m.Items - m.Passed - m.Errors - m.Unchecked }

// ID names a result in every report: "ITEM", or "ITEM#REPEAT" when the
// run asked each item several times.
func (r Result) ID() string {
	if !r.Repeated {
		return r.Item
	}
	return r.Item + "#" + strconv.Itoa(r.Repeat)
}

// perItemCells are the per-item cells of a repeated run: the share of
// results passed, the mean score per item, and the share of items whose
// repeats disagree.
func perItemCells(m ModelStats) (results, meanScore, disagree string) {
	if m.PerItem == nil {
		return "–", "–", "–"
	}
	return percent(m.ResultAccuracy), fmt.Sprintf("%.3f", m.PerItem.MeanScore),
		fmt.Sprintf("%s (%d)", percent(m.PerItem.DisagreeShare), m.PerItem.Disagree)
}

// results is e.Results, or nothing when there are none.
func (e *Eval) results() iter.Seq[Result] {
	if e.Results == nil {
		return func(func(Result) bool) {}
	}
	return e.Results
}

// anyGate tells whether any model has a --min-accuracy gate.
func (e *Eval) anyGate() bool {
	for _, m := range e.Models {
		if m.MinAccuracy != nil {
			return true
		}
	}
	return false
}

// percent is a share as "81.0%".
func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// accuracyCI is the accuracy with its interval: "81.0% [74.9–86.0]".
func accuracyCI(m ModelStats) string {
	if m.Items > 0 && m.Items == m.Unchecked {
		return "– (nothing checked)" // not 0%: no answer was graded, none failed
	}
	return fmt.Sprintf("%.1f%% [%.1f–%.1f]", 100*m.Accuracy, 100*m.CILow, 100*m.CIHigh)
}

// millis is a latency for people: "812 ms", "1.9 s".
func millis(ms float64) string {
	if ms < 999.5 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}

// latencies are a model's percentiles for people; "–" when it answered
// nothing and there is no latency to speak of.
func latencies(m ModelStats) (p50, p95, p99 string) {
	if m.Items-m.Errors-m.Unchecked <= 0 {
		return "–", "–", "–"
	}
	return millis(m.Latency.P50), millis(m.Latency.P95), millis(m.Latency.P99)
}

// dollars is a cost for people: "$0.0123", with two significant digits
// when that needs more decimals ("$0.000027"), so that the cheap models of a
// small run do not all read $0.0000.
func dollars(usd float64) string {
	d := 4
	for usd != 0 && math.Abs(usd)*math.Pow10(d) < 9.95 && d < 8 {
		d++
	}
	return "$" + strconv.FormatFloat(usd, 'f', d, 64)
}

// thousands writes n with thousands separators: 1,234,567.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// decimal is a number for machines: the shortest text that reads back the same.
func decimal(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// shorten cuts s to at most n runes, ending a cut text with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return strings.TrimSpace(string(runes[:n-1])) + "…"
}

// gateText is a model's gate in words, "–" when it has none.
func gateText(m ModelStats) string {
	switch {
	case m.MinAccuracy == nil:
		return "–"
	case m.BelowGate:
		return "below " + percent(*m.MinAccuracy)
	}
	return "≥ " + percent(*m.MinAccuracy)
}
