package evalreport

import (
	"io"

	"github.com/digest-cli/digest/internal/jsonout"
)

// EvalJSONL writes one JSON object per result, streamed as e.Results yields
// them, for jq and line-oriented tools.
type EvalJSONL struct{}

// WriteEval implements EvalReporter.
func (EvalJSONL) WriteEval(w io.Writer, e *Eval) error {
	return jsonout.Lines(w, e.results())
}
