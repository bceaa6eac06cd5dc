package report

import (
	"bufio"
	"encoding/json"
	"io"
)

// JSONL writes one JSON object per commit, for jq and line-oriented tools.
type JSONL struct{}

// Write implements Reporter.
func (JSONL) Write(w io.Writer, c *Changelog) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, e := range c.Entries {
		if err := enc.Encode(withSkipped(e)); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// withSkipped prints "no skipped files" as [] rather than null.
func withSkipped(e Entry) Entry {
	if e.SkippedFiles == nil {
		e.SkippedFiles = []SkippedFile{}
	}
	return e
}
