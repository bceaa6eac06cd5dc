// Package jsonout writes the JSON of digest's machine formats, release
// notes' and eval reports' alike: a document or one value a line, with
// model text's HTML characters left as they are and the characters a
// terminal would act on written as \u escapes (textsafe.AppendJSON), so
// that the output decodes to the same values and is safe to cat.
package jsonout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"iter"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Document writes v as one JSON document indented by two spaces.
func Document(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(textsafe.AppendJSON(nil, b.Bytes()))
	return err
}

// Lines writes each value as one line of JSON as values yields it, so
// that a long run streams rather than waiting for its last value.
func Lines[T any](w io.Writer, values iter.Seq[T]) error {
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
