package changelog

import (
	"io"

	"github.com/digest-cli/digest/internal/jsonout"
)

// JSON writes the whole changelog as one document: the entries, the
// totals and, when they were asked for, the sections' highlights, in the
// order of the release notes; when the pipeline gave them, what the
// history tells of each section (previous tag, compare page, new
// contributors: VersionInfo).
type JSON struct{}

type jsonChangelog struct {
	Model      string        `json:"model"`
	Commits    []Entry       `json:"commits"`
	Stats      Stats         `json:"stats"`
	Highlights *[]Highlights `json:"highlights,omitempty"`
	Versions   []VersionInfo `json:"versions,omitempty"`
}

// Write implements Reporter.
func (JSON) Write(w io.Writer, c *Changelog) error {
	doc := jsonChangelog{Model: c.Model, Commits: make([]Entry, len(c.Entries)), Stats: c.Stats, Versions: make([]VersionInfo, len(c.Versions))}
	for i, v := range c.Versions {
		if v.NewContributors == nil {
			v.NewContributors = []Person{}
		}
		doc.Versions[i] = v
	}
	for i, e := range c.Entries {
		doc.Commits[i] = withSkipped(e)
	}
	if c.Highlights != nil {
		notes, err := BuildNotes(c, GroupByNone)
		if err != nil {
			return err
		}
		hs := []Highlights{}
		for _, r := range notes.Repos {
			for _, v := range r.Versions {
				if len(v.Highlights) > 0 {
					hs = append(hs, Highlights{Repo: r.Name, RepoID: r.ID, Version: v.Tag, Bullets: v.Highlights})
				}
			}
		}
		doc.Highlights = &hs
	}
	return jsonout.Document(w, doc)
}
