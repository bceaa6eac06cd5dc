package evalreport

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/digest-cli/digest/internal/textsafe"
)

// metricRow is one model's figures on one metric, for the reports that
// list them metric by metric.
type metricRow struct {
	model string
	MetricStats
}

// metricRows are the models' figures, metric by metric in the run's
// order, model by model within each; nil when the run has one metric.
func (e *Eval) metricRows() []metricRow {
	var rows []metricRow
	for _, name := range e.MetricNames() {
		for _, m := range e.Models {
			for _, ms := range m.Metrics {
				if ms.Name == name {
					rows = append(rows, metricRow{m.Model, ms})
				}
			}
		}
	}
	return rows
}

// anyMetricGate tells whether any model has a --min gate on a metric.
func (e *Eval) anyMetricGate() bool {
	for _, m := range e.Models {
		for _, ms := range m.Metrics {
			if ms.Min != nil {
				return true
			}
		}
	}
	return false
}

// passRateCI is a metric's pass rate with its interval, as accuracyCI:
// "81.0% [74.9–86.0]".
func passRateCI(ms MetricStats) string {
	if ms.Items == 0 {
		return "– (nothing graded)"
	}
	return fmt.Sprintf("%.1f%% [%.1f–%.1f]", 100*ms.PassRate, 100*ms.CILow, 100*ms.CIHigh)
}

// metricGateText is a metric's gate in words, "–" when it has none.
func metricGateText(ms MetricStats) string {
	switch {
	case ms.Min == nil:
		return "–"
	case ms.Below:
		return "below " + percent(*ms.Min)
	}
	return "≥ " + percent(*ms.Min)
}

// score3 is a mean score for people: "0.812".
func score3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// writeMetricsTable writes the per-metric table and pairs of the table
// report: nothing when the run has one metric.
func writeMetricsTable(bw *bufio.Writer, e *Eval) error {
	rows := e.metricRows()
	if rows == nil {
		return nil
	}
	gated := e.anyMetricGate()
	fmt.Fprintln(bw)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	header := "METRIC\tMODEL\tITEMS\tPASSED\tPASS RATE (95% CI)\tMEAN SCORE"
	if gated {
		header += "\tGATE"
	}
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		row := []string{r.Name, textsafe.Line(r.model), strconv.Itoa(r.Items), strconv.Itoa(r.Passed), passRateCI(r.MetricStats), score3(r.MeanScore)}
		if gated {
			row = append(row, metricGateText(r.MetricStats))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.MetricPairs) > 0 {
		fmt.Fprintln(bw)
		for _, p := range e.MetricPairs {
			fmt.Fprintln(bw, textsafe.Line(p.String()))
		}
	}
	return nil
}

// writeMetricsMarkdown writes the per-metric table and pairs of the
// Markdown report: nothing when the run has one metric.
func writeMetricsMarkdown(bw *bufio.Writer, e *Eval) {
	rows := e.metricRows()
	if rows == nil {
		return
	}
	gated := e.anyMetricGate()
	fmt.Fprint(bw, "\n### Metrics\n\n| Metric | Model | Items | Passed | Pass rate (95% CI) | Mean score |")
	if gated {
		fmt.Fprint(bw, " Gate |")
	}
	fmt.Fprint(bw, "\n|:--|:--|--:|--:|--:|--:|")
	if gated {
		fmt.Fprint(bw, ":-:|")
	}
	fmt.Fprintln(bw)
	for _, r := range rows {
		fmt.Fprintf(bw, "| %s | %s | %d | %d | %s | %s |", r.Name, textsafe.MarkdownInline(r.model), r.Items, r.Passed,
			textsafe.MarkdownInline(passRateCI(r.MetricStats)), score3(r.MeanScore))
		if gated {
			mark := "✅ "
			switch {
			case r.Min == nil:
				mark = ""
			case r.Below:
				mark = "❌ "
			}
			fmt.Fprintf(bw, " %s%s |", mark, metricGateText(r.MetricStats))
		}
		fmt.Fprintln(bw)
	}
	if len(e.MetricPairs) > 0 {
		fmt.Fprintln(bw)
		for _, p := range e.MetricPairs {
			fmt.Fprintf(bw, "- %s\n", textsafe.MarkdownInline(p.String()))
		}
	}
}

// metricProperties are a model's per-metric JUnit properties,
// metric.NAME.pass_rate and the like; none when the run has one metric.
func metricProperties(m ModelStats) []junitProperty {
	var p []junitProperty
	for _, ms := range m.Metrics {
		pre := "metric." + ms.Name + "."
		p = append(p,
			junitProperty{Name: pre + "items", Value: strconv.Itoa(ms.Items)},
			junitProperty{Name: pre + "passed", Value: strconv.Itoa(ms.Passed)},
			junitProperty{Name: pre + "pass_rate", Value: decimal(ms.PassRate)},
			junitProperty{Name: pre + "ci_low", Value: decimal(ms.CILow)},
			junitProperty{Name: pre + "ci_high", Value: decimal(ms.CIHigh)},
			junitProperty{Name: pre + "mean_score", Value: decimal(ms.MeanScore)})
		if ms.Min != nil {
			p = append(p, junitProperty{Name: pre + "min", Value: decimal(*ms.Min)},
				junitProperty{Name: pre + "below_gate", Value: strconv.FormatBool(ms.Below)})
		}
	}
	return p
}

// metricCSVHeader are the CSV columns of a run's metrics, after every
// other: pass and score per metric, such as pass_bias and score_bias.
func metricCSVHeader(names []string) []string {
	var h []string
	for _, n := range names {
		h = append(h, "pass_"+n, "score_"+n)
	}
	return h
}

// metricCSVCells are a result's cells under metricCSVHeader: empty for a
// metric its item does not have. A result whose item names no metric in
// a run that has several is graded on accuracy, its pass and score.
func metricCSVCells(r Result, names []string) []string {
	var c []string
	for _, n := range names {
		ms, ok := r.Metrics[n]
		if r.Metrics == nil && n == "accuracy" && r.Error != NothingToCheck {
			ms, ok = MetricScore{Pass: r.Pass, Score: r.Score}, true
		}
		if !ok {
			c = append(c, "", "")
			continue
		}
		c = append(c, strconv.FormatBool(ms.Pass), decimal(ms.Score))
	}
	return c
}
