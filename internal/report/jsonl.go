package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"iter"

	"github.com/digest-cli/digest/internal/textsafe"
)

// JSONL writes one JSON object per commit, for jq and line-oriented tools.
type JSONL struct{}

// Write implements Reporter.
func (JSONL) Write(w io.Writer, c *Changelog) error {
	return writeLines(w, func(yield func(Entry) bool) {
		for _, e := range c.Entries {
			if !yield(withSkipped(e)) {
				return
			}
		}
	})
}

// writeLines writes each value as one line of JSON, as it comes, leaving
// HTML characters in model text alone and escaping those a terminal would
// act on (textsafe.AppendJSON).
func writeLines[T any](w io.Writer, values iter.Seq[T]) error {
	bw := bufio.NewWriter(w)
	var line bytes.Buffer
	var safe []byte
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	for v := range values {
		line.Reset()
		if err := enc.Encode(v); err != nil {
			return err
		}
		safe = textsafe.AppendJSON(safe[:0], line.Bytes())
		if _, err := bw.Write(safe); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// withSkipped prints "no skipped files" and "no labels" as [] rather
// than null.
func withSkipped(e Entry) Entry {
	if e.SkippedFiles == nil {
		e.SkippedFiles = []SkippedFile{}
	}
	if e.Labels == nil {
		e.Labels = []string{}
	}
	return e
}
