package evalreport

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
)

// EvalCSV writes one row per result under a header row, for spreadsheets
// and data frames. Several expected answers, and several reasons, are
// joined with " | ". The last column, finish, says why an answer ended when
// not by itself (refusal, length, content_filter; empty for a whole
// answer): columns are only ever added at the end, so that a program
// reading them by position keeps working. A run with named metrics has,
// after finish, pass_NAME and score_NAME for each.
//
// Cells hold the text exactly, escape sequences and leading =, +, - and @
// included. The usual guard against formulas, a ' before such a cell,
// would change the data for every program that reads it (an answer of -1
// would no longer be a number, a grader re-run on the file would see
// other answers); a spreadsheet should import the text columns as text.
// On a terminal, standard output shows control characters as text
// (iostreams).
type EvalCSV struct{}

var evalCSVHeader = []string{"model", "item", "line", "repeat", "pass", "score", "cached", "latency_ms",
	"input_tokens", "output_tokens", "cost_usd", "error", "answer", "expected", "prompt", "reasons", "finish"}

// WriteEval implements EvalReporter.
func (EvalCSV) WriteEval(w io.Writer, e *Eval) error {
	cw := csv.NewWriter(w) // buffered
	names := e.MetricNames()
	if err := cw.Write(append(slices.Clip(evalCSVHeader), metricCSVHeader(names)...)); err != nil {
		return err
	}
	for r := range e.results() {
		err := cw.Write(append([]string{
			r.Model,
			r.Item,
			strconv.Itoa(r.Line),
			strconv.Itoa(r.Repeat),
			strconv.FormatBool(r.Pass),
			decimal(r.Score),
			strconv.FormatBool(r.Cached),
			decimal(r.LatencyMS),
			strconv.Itoa(r.InputTokens),
			strconv.Itoa(r.OutputTokens),
			decimal(r.CostUSD),
			r.Error,
			r.Answer,
			strings.Join(r.Expected, " | "),
			r.Prompt,
			strings.Join(r.Reasons, " | "),
			r.Finish,
		}, metricCSVCells(r, names)...))
		if err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
