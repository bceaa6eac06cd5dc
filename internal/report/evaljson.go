package report

import "io"

// EvalJSON writes the run as one document: run_id, dataset, started_at, the
// models array and the pairs. Results are left out; they stream in jsonl.
type EvalJSON struct{}

// WriteEval implements EvalReporter.
func (EvalJSON) WriteEval(w io.Writer, e *Eval) error {
	doc := *e // Results is tagged out
	if doc.Models == nil {
		doc.Models = []ModelStats{}
	}
	if doc.Pairs == nil {
		doc.Pairs = []Pair{}
	}
	return writeDocument(w, doc)
}
