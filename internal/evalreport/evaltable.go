package evalreport

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/digest-cli/digest/internal/textsafe"
)

// EvalTable writes the models side by side as an aligned plain-text table
// for a terminal, then one line per pair of models. Refused and cut answers
// have columns of their own beside the errors, and the input tokens say
// how many were read from the provider's prompt cache ("80 (48 cached)").
// A run with named metrics has a second table, metric by metric, and the
// pairs compared on each.
type EvalTable struct{}

// WriteEval implements EvalReporter.
func (EvalTable) WriteEval(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	if len(e.Models) == 0 {
		fmt.Fprintln(bw, "No models evaluated.")
		return bw.Flush()
	}
	gated := e.anyGate()
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	repeated := e.Repeat > 1
	header := []string{"MODEL", "ITEMS", "PASSED", "ACCURACY (95% CI)"}
	if repeated {
		// ITEMS and PASSED count results; the accuracy is of items.
		header = []string{"MODEL", "RESULTS", "PASSED", "ITEM ACCURACY (95% CI)", "RESULT ACCURACY", "MEAN SCORE/ITEM", "DISAGREE"}
	}
	header = append(header, "ERRORS", "REFUSED", "CUT", "UNCHECKED", "CACHED", "P50", "P95", "TOKENS IN", "TOKENS OUT", "COST")
	if gated {
		header = append(header, "GATE")
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, m := range e.Models {
		p50, p95, _ := latencies(m)
		row := []string{textsafe.Line(m.Model), strconv.Itoa(m.Items), strconv.Itoa(m.Passed), accuracyCI(m)}
		if repeated {
			results, meanScore, disagree := perItemCells(m)
			row = append(row, results, meanScore, disagree)
		}
		row = append(row,
			strconv.Itoa(m.Errors),
			strconv.Itoa(m.Refused),
			strconv.Itoa(m.Cut),
			strconv.Itoa(m.Unchecked),
			strconv.Itoa(m.Cached),
			p50,
			p95,
			tokensIn(m),
			thousands(m.OutputTokens),
			dollars(m.CostUSD),
		)
		if gated {
			row = append(row, gateText(m))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if e.Judge != nil {
		fmt.Fprintln(bw, textsafe.Line(e.Judge.String()))
	}
	if len(e.Pairs) > 0 {
		fmt.Fprintln(bw)
		for _, p := range e.Pairs {
			fmt.Fprintln(bw, textsafe.Line(p.String()))
		}
	}
	if err := writeMetricsTable(bw, e); err != nil {
		return err
	}
	return bw.Flush()
}
