package evalreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/digest-cli/digest/internal/jsonout"
	"github.com/digest-cli/digest/internal/textsafe"
)

// EvalJSON writes the run as one document: run_id, dataset, started_at, the
// models array, the pairs and every result. The results stream into the
// document as e.Results yields them, one at a time, so a run of any size
// is written in constant memory.
type EvalJSON struct{}

// WriteEval implements EvalReporter.
func (EvalJSON) WriteEval(w io.Writer, e *Eval) error {
	doc := *e // Results is tagged out: it is written below
	if doc.Models == nil {
		doc.Models = []ModelStats{}
	}
	if doc.Pairs == nil {
		doc.Pairs = []Pair{}
	}
	var head bytes.Buffer
	if err := jsonout.Document(&head, doc); err != nil {
		return err
	}
	// The document without its closing brace, then "results".
	bw := bufio.NewWriter(w)
	bw.Write(bytes.TrimRight(bytes.TrimSuffix(bytes.TrimRight(head.Bytes(), "\n"), []byte("}")), "\n"))
	bw.WriteString(",\n  \"results\": [")
	var one bytes.Buffer
	enc := json.NewEncoder(&one)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	var safe []byte
	sep := "\n    "
	for r := range e.results() {
		one.Reset()
		if err := enc.Encode(r); err != nil {
			return err
		}
		bw.WriteString(sep)
		safe = textsafe.AppendJSON(safe[:0], bytes.TrimRight(one.Bytes(), "\n"))
		if _, err := bw.Write(safe); err != nil {
			return err
		}
		sep = ",\n    "
	}
	if sep != "\n    " {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}
