package report

import (
	"encoding/json"
	"io"
)

// JSON writes the whole changelog as one document: the entries and the totals.
type JSON struct{}

type jsonChangelog struct {
	Model   string  `json:"model"`
	Commits []Entry `json:"commits"`
	Stats   Stats   `json:"stats"`
}

// Write implements Reporter.
func (JSON) Write(w io.Writer, c *Changelog) error {
	doc := jsonChangelog{Model: c.Model, Commits: make([]Entry, len(c.Entries)), Stats: c.Stats}
	for i, e := range c.Entries {
		doc.Commits[i] = withSkipped(e)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
