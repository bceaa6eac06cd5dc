package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Notes is a changelog arranged as release notes: per repository, a
// section per version newest first (Unreleased on top), and in each the
// entries grouped. The Markdown format writes it, and a --template reads
// it: its fields are the documented data model.
type Notes struct {
	Model string
	Repos []RepoNotes
}

// RepoNotes is one repository's part.
type RepoNotes struct {
	Name string // its directory's name
	ID   string // digest's id for it, from its first commit
	// Title is the name, with the id when another repository of this run
	// has the same name.
	Title    string
	Versions []VersionNotes
}

// VersionNotes is one release, or the commits no tag has released yet.
type VersionNotes struct {
	Tag  string    // "" for Unreleased
	Date time.Time // the tag's; zero for Unreleased
	// Highlights are a model's bullets about the section, as it wrote
	// them (--highlights); MarkdownHighlights gives them as Markdown.
	Highlights []string
	// Groups holds the entries by kind of change, in GroupOrder; Entries
	// holds them all, newest first, as the walk met them.
	Groups  []GroupNotes
	Entries []Entry
}

// Title is the section's heading: "v1.2.0 (2026-11-30)" or "Unreleased".
func (v VersionNotes) Title() string {
	if v.Tag == "" {
		return "Unreleased"
	}
	return fmt.Sprintf("%s (%s)", v.Tag, v.Date.Format(time.DateOnly))
}

// MarkdownHighlights are the highlights as the Markdown format writes
// them: each one paragraph of plain text, references linked to the forge
// of the section's commits.
func (v VersionNotes) MarkdownHighlights() []string {
	out := make([]string, len(v.Highlights))
	for i, h := range v.Highlights {
		text := textsafe.MarkdownSummary(h)
		if len(v.Entries) > 0 {
			text = v.Entries[0].Forge.Link(text)
		}
		out[i] = text
	}
	return out
}

// GroupNotes is the entries of one kind of change, or of one day.
type GroupNotes struct {
	Title   string
	Entries []Entry
}

// GroupBy names how a version's entries are grouped.
const (
	GroupByType = "type" // Breaking changes, Features, Fixes, ...
	GroupByDate = "date" // one group per author day, newest first
	GroupByNone = "none" // one list
)

// GroupBys lists the groupings --group-by accepts.
var GroupBys = []string{GroupByType, GroupByDate, GroupByNone}

// GroupOrder is the order of the groups by type; a breaking change goes
// first whatever its type.
var GroupOrder = []string{"Breaking changes", "Features", "Fixes", "Performance", "Refactoring",
	"Documentation", "Tests", "Build and dependencies", "CI", "Other"}

// groupOf is the group of an entry's type.
func groupOf(e Entry) string {
	if e.Breaking {
		return "Breaking changes"
	}
	switch e.Type {
	case "feat":
		return "Features"
	case "fix":
		return "Fixes"
	case "perf":
		return "Performance"
	case "refactor":
		return "Refactoring"
	case "docs":
		return "Documentation"
	case "test":
		return "Tests"
	case "build":
		return "Build and dependencies"
	case "ci":
		return "CI"
	}
	return "Other"
}

// BuildNotes arranges a changelog's entries as release notes.
func BuildNotes(c *Changelog, groupBy string) (Notes, error) {
	switch groupBy {
	case "":
		groupBy = GroupByType
	case GroupByType, GroupByDate, GroupByNone:
	default:
		return Notes{}, fmt.Errorf("unknown grouping %q. Try: one of %s", groupBy, strings.Join(GroupBys, ", "))
	}
	n := Notes{Model: c.Model}
	highlights := map[string][]string{}
	for _, h := range c.Highlights {
		highlights[h.Repo+"\x00"+h.RepoID+"\x00"+h.Version] = h.Bullets
	}
	repos := groupEntries(c.Entries, func(e Entry) string { return e.Repo + "\x00" + e.RepoID })
	named := map[string]int{}
	for _, repo := range repos {
		named[repo.entries[0].Repo]++
	}
	for _, repo := range repos {
		first := repo.entries[0]
		rn := RepoNotes{Name: first.Repo, ID: first.RepoID, Title: first.Repo}
		if named[first.Repo] > 1 { // two different repositories in directories of the same name
			rn.Title += " (" + first.RepoID + ")"
		}
		versions := groupEntries(repo.entries, func(e Entry) string { return e.Version })
		// Unreleased first, then releases newest first: a walk meets a
		// backport's commits after newer ones, so order by the tags' dates.
		sortGroups(versions, func(a, b group) bool {
			if a.key == "" || b.key == "" {
				return a.key == ""
			}
			return a.entries[0].VersionDate.After(b.entries[0].VersionDate)
		})
		for _, v := range versions {
			vn := VersionNotes{Tag: v.key, Date: v.entries[0].VersionDate, Entries: v.entries,
				Highlights: highlights[first.Repo+"\x00"+first.RepoID+"\x00"+v.key]}
			vn.Groups = groups(v.entries, groupBy)
			rn.Versions = append(rn.Versions, vn)
		}
		n.Repos = append(n.Repos, rn)
	}
	return n, nil
}

func groups(entries []Entry, groupBy string) []GroupNotes {
	var out []GroupNotes
	switch groupBy {
	case GroupByNone:
		return []GroupNotes{{Entries: entries}}
	case GroupByDate:
		days := groupEntries(entries, func(e Entry) string { return e.Date.Format(time.DateOnly) })
		// Author dates can disagree with the commit order the walk
		// followed; days still read newest first.
		sortGroups(days, func(a, b group) bool { return a.key > b.key })
		for _, d := range days {
			out = append(out, GroupNotes{Title: d.key, Entries: d.entries})
		}
		return out
	}
	byGroup := groupEntries(entries, groupOf)
	for _, title := range GroupOrder {
		for _, g := range byGroup {
			if g.key == title {
				es := g.entries
				if title == "Build and dependencies" {
					es = collapseBumps(es)
				}
				out = append(out, GroupNotes{Title: title, Entries: es})
			}
		}
	}
	return out
}

// collapseBumps tells several bumps of one dependency (Dependabot's
// "Bump x from 1.2 to 1.3", Renovate's "update module x to v2") as one
// entry, the newest one's, saying where the dependency went from and to.
func collapseBumps(entries []Entry) []Entry {
	type bump struct {
		at       int // index in out of the newest bump
		from, to string
		n        int
	}
	bumps := map[string]*bump{}
	var out []Entry
	for _, e := range entries { // newest first
		name, from, to, ok := committype.Dependency(e.Subject)
		if !ok {
			out = append(out, e)
			continue
		}
		if b, seen := bumps[name]; seen {
			b.n++
			if from != "" {
				b.from = from // older bumps come later: the earliest from wins
			}
			continue
		}
		bumps[name] = &bump{at: len(out), from: from, to: to, n: 1}
		out = append(out, e)
	}
	for name, b := range bumps {
		if b.n < 2 {
			continue
		}
		e := &out[b.at]
		e.Summary = "Bumps " + name
		if b.from != "" {
			e.Summary += " from " + b.from
		}
		e.Summary += fmt.Sprintf(" to %s (%d updates).", b.to, b.n)
	}
	return out
}

type group struct {
	key     string
	entries []Entry
}

// groupBy2 groups entries by key in order of first appearance.
func groupEntries(entries []Entry, key func(Entry) string) []group {
	var groups []group
	index := map[string]int{}
	for _, e := range entries {
		k := key(e)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, group{key: k})
		}
		groups[i].entries = append(groups[i].entries, e)
	}
	return groups
}

// sortGroups sorts groups stably, those less than others first.
func sortGroups(gs []group, less func(a, b group) bool) {
	slices.SortStableFunc(gs, func(a, b group) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}
