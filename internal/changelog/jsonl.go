package changelog

import (
	"io"

	"github.com/digest-cli/digest/internal/jsonout"
)

// JSONL writes one JSON object per commit, for jq and line-oriented tools.
type JSONL struct{}

// Write implements Reporter.
func (JSONL) Write(w io.Writer, c *Changelog) error {
	return jsonout.Lines(w, func(yield func(Entry) bool) {
		for _, e := range c.Entries {
			if !yield(withSkipped(e)) {
				return
			}
		}
	})
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
