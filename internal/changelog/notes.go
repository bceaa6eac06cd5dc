package changelog

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
	// EntryText says what an entry shows: "title" (its title), "summary"
	// (its summary), or "" for the layout's own choice (the github
	// template's is the title, the others' the summary). See EntryTexts.
	EntryText string
}

// The values of Notes.EntryText.
const (
	EntryTitle   = "title"
	EntrySummary = "summary"
)

// EntryTexts lists the values an entry's text may be set to.
var EntryTexts = []string{EntryTitle, EntrySummary}

// checkEntryText refuses a value EntryTexts does not list.
func checkEntryText(text string) error {
	if text == "" || slices.Contains(EntryTexts, text) {
		return nil
	}
	return fmt.Errorf("unknown entry text %q. Try: one of %s", text, strings.Join(EntryTexts, ", "))
}

// RepoNotes is one repository's part.
type RepoNotes struct {
	Name string // its directory's name
	ID   string // digest's id for it, from its first commit
	// Title is the name, with the id when another repository of this run
	// has the same name.
	Title string
	// URL is the repository's page on its forge, "" when its origin
	// remote names none.
	URL      string
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
	// PreviousTag, CompareURL and NewContributors are the pipeline's (see
	// VersionInfo): the release before this one, the forge's page
	// comparing them, and the people whose first commit in the
	// repository is in this section.
	PreviousTag     string
	CompareURL      string
	NewContributors []Person
	// Contributors are the distinct authors of the entries, in the order
	// the entries first name them (newest first), bots included and
	// flagged; people are the same when their logins, else their
	// addresses, else their names are.
	Contributors []Person
	// categories is VersionInfo.Categories: the order of WhatsChanged's
	// groups.
	categories []string
}

// Version is the section's version as Keep a Changelog writes it: the tag
// without the v before a digit ("v1.2.0" -> "1.2.0", "release-2" as it
// is), or "Unreleased".
func (v VersionNotes) Version() string {
	if v.Tag == "" {
		return "Unreleased"
	}
	if len(v.Tag) > 1 && (v.Tag[0] == 'v' || v.Tag[0] == 'V') && v.Tag[1] >= '0' && v.Tag[1] <= '9' {
		return v.Tag[1:]
	}
	return v.Tag
}

// OtherChanges is the heading GitHub gives the changes no category of
// .github/release.yml takes.
const OtherChanges = "Other Changes"

// WhatsChanged is the section's entries as GitHub's generated notes list
// them under "What's Changed": one group without a title when no entry
// has a Category, else a group per category (in .github/release.yml's
// order as the pipeline gives it, else in order of first appearance)
// and OtherChanges last for the rest. Bumps of one dependency are one
// entry, as in every layout. Within a group the entries come as GitHub
// lists pull requests, in the order they were merged: oldest first.
func (v VersionNotes) WhatsChanged() []GroupNotes {
	oldestFirst := func(es []Entry) []Entry {
		es = collapseBumps(es)
		slices.Reverse(es)
		return es
	}
	if !slices.ContainsFunc(v.Entries, func(e Entry) bool { return e.Category != "" }) {
		return []GroupNotes{{Entries: oldestFirst(v.Entries)}}
	}
	byCategory := groupEntries(v.Entries, func(e Entry) string {
		if e.Category == "" {
			return OtherChanges
		}
		return e.Category
	})
	rank := func(title string) int {
		if title == OtherChanges {
			return len(v.categories) + 1
		}
		if i := slices.Index(v.categories, title); i >= 0 {
			return i
		}
		return len(v.categories) // first-seen order among those not listed
	}
	sortGroups(byCategory, func(a, b group) bool { return rank(a.key) < rank(b.key) })
	out := make([]GroupNotes, len(byCategory))
	for i, g := range byCategory {
		out[i] = GroupNotes{Title: g.key, Entries: oldestFirst(g.entries)}
	}
	return out
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

// BuildNotes arranges a changelog's entries as release notes: the
// sections are those the entries' versions name, each given what
// c.Versions holds for it, its Contributors found from its entries, and
// its entries grouped by groupBy, several bumps of one dependency told as
// one entry in every grouping. Every entry gets its Short hash.
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
	infos := map[string]VersionInfo{}
	for _, vi := range c.Versions {
		infos[vi.Repo+"\x00"+vi.RepoID+"\x00"+vi.Tag] = vi
	}
	repos := groupEntries(c.Entries, func(e Entry) string { return e.Repo + "\x00" + e.RepoID })
	for _, repo := range repos {
		for i := range repo.entries { // copies: the changelog's entries stay as they are
			repo.entries[i].Short = shortOf(repo.entries[i])
		}
	}
	named := map[string]int{}
	for _, repo := range repos {
		named[repo.entries[0].Repo]++
	}
	for _, repo := range repos {
		first := repo.entries[0]
		rn := RepoNotes{Name: first.Repo, ID: first.RepoID, Title: first.Repo}
		for _, e := range repo.entries {
			if e.Forge.Kind != "" {
				rn.URL = e.Forge.Base
				break
			}
		}
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
			key := first.Repo + "\x00" + first.RepoID + "\x00" + v.key
			info := infos[key]
			vn := VersionNotes{Tag: v.key, Date: v.entries[0].VersionDate, Entries: v.entries,
				Highlights: highlights[key], PreviousTag: info.PreviousTag, CompareURL: info.CompareURL,
				NewContributors: info.NewContributors, Contributors: contributors(v.entries), categories: info.Categories}
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
		return []GroupNotes{{Entries: collapseBumps(entries)}}
	case GroupByDate:
		days := groupEntries(entries, func(e Entry) string { return e.Date.Format(time.DateOnly) })
		// Author dates can disagree with the commit order the walk
		// followed; days still read newest first.
		sortGroups(days, func(a, b group) bool { return a.key > b.key })
		for _, d := range days {
			out = append(out, GroupNotes{Title: d.key, Entries: collapseBumps(d.entries)})
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

// contributors are the distinct authors of entries, in order of first
// appearance.
func contributors(entries []Entry) []Person {
	var out []Person
	seen := map[string]bool{}
	for _, e := range entries {
		key := "name\x00" + e.Author
		switch {
		case e.Login != "":
			key = "login\x00" + strings.ToLower(strings.TrimSuffix(e.Login, "[bot]"))
		case e.AuthorEmail != "":
			key = "email\x00" + strings.ToLower(e.AuthorEmail)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, Person{Name: e.Author, Email: e.AuthorEmail, Login: e.Login, Bot: e.Bot})
	}
	return out
}

// collapseBumps tells several bumps of one dependency (Dependabot's
// "Bump x from 1.2 to 1.3", Renovate's "update module x to v2", read from
// the title, so that merged pull requests fold too) as one entry, the
// newest one's, its summary and title saying where the dependency went
// from and to.
func collapseBumps(entries []Entry) []Entry {
	type bump struct {
		at       int // index in out of the newest bump
		from, to string
		n        int
	}
	bumps := map[string]*bump{}
	var out []Entry
	for _, e := range entries { // newest first
		subject := e.Title // a merged pull request's: the merge commit's subject names a branch
		if subject == "" {
			subject = e.Subject
		}
		name, from, to, ok := "", "", "", mayBeBump(subject)
		if ok {
			name, from, to, ok = committype.Dependency(subject)
		}
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
		moved := name
		if b.from != "" {
			moved += " from " + b.from
		}
		moved += fmt.Sprintf(" to %s (%d updates)", b.to, b.n)
		e.Summary = "Bumps " + moved + "."
		e.Title = "Bump " + moved
	}
	return out
}

// mayBeBump tells, cheaply, whether a subject could be a dependency bot's:
// committype.Dependency reads only subjects that bump, update or upgrade
// something to a version.
func mayBeBump(subject string) bool {
	l := strings.ToLower(subject)
	return (strings.Contains(l, "bump") || strings.Contains(l, "updat") || strings.Contains(l, "upgrad")) && strings.Contains(l, "to")
}

type group struct {
	key     string
	entries []Entry
}

// groupEntries groups entries by key in order of first appearance. Each
// group's slice is sized once: entries are large, and a changelog has
// tens of thousands.
func groupEntries(entries []Entry, key func(Entry) string) []group {
	var groups []group
	index := map[string]int{}
	keys := make([]int, len(entries))
	var sizes []int
	for n, e := range entries {
		k := key(e)
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			groups = append(groups, group{key: k})
			sizes = append(sizes, 0)
		}
		keys[n] = i
		sizes[i]++
	}
	for i := range groups {
		groups[i].entries = make([]Entry, 0, sizes[i])
	}
	for n, e := range entries {
		groups[keys[n]].entries = append(groups[keys[n]].entries, e)
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
