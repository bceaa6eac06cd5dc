package report

import (
	"bufio"
	"encoding/json"
	"io"
)

// EvalJSONL writes one JSON object per result, streamed as e.Results yields
// them, for jq and line-oriented tools.
type EvalJSONL struct{}

// WriteEval implements EvalReporter.
func (EvalJSONL) WriteEval(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for r := range e.results() {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bw.Flush()
}
