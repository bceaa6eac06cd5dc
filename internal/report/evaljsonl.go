package report

import "io"

// EvalJSONL writes one JSON object per result, streamed as e.Results yields
// them, for jq and line-oriented tools.
type EvalJSONL struct{}

// WriteEval implements EvalReporter.
func (EvalJSONL) WriteEval(w io.Writer, e *Eval) error {
	return writeLines(w, e.results())
}
