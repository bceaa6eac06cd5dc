package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Markdown writes a changelog grouped by repository and day, newest first,
// one bullet per commit. What came from a repository or a model shows as
// text: a summary is one paragraph of its bullet, and nothing in it or in a
// repository's name can open a heading, a code block or HTML, or load an
// image (see textsafe.MarkdownSummary).
type Markdown struct{}

// shortHash is git's shortest abbreviation, for entries that come
// without their repository's.
const shortHash = 7

// Write implements Reporter.
func (Markdown) Write(w io.Writer, c *Changelog) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# Changelog")
	if len(c.Entries) == 0 {
		fmt.Fprintln(bw, "\nNo commits to summarize.")
		return bw.Flush()
	}
	repos := groupBy(c.Entries, func(e Entry) string { return e.Repo + "\x00" + e.RepoID })
	named := map[string]int{}
	for _, repo := range repos {
		named[repo.entries[0].Repo]++
	}
	for _, repo := range repos {
		title := textsafe.MarkdownInline(repo.entries[0].Repo)
		if named[repo.entries[0].Repo] > 1 { // two different repositories in directories of the same name
			title += " (" + textsafe.MarkdownInline(repo.entries[0].RepoID) + ")"
		}
		fmt.Fprintf(bw, "\n## %s\n", title)
		days := groupBy(repo.entries, func(e Entry) string { return e.Date.Format("2006-01-02") })
		// Author dates can disagree with the commit order the walk followed;
		// days still read newest first.
		sort.SliceStable(days, func(i, j int) bool { return days[i].key > days[j].key })
		for _, day := range days {
			fmt.Fprintf(bw, "\n### %s\n\n", day.key)
			for _, e := range day.entries {
				short := e.Short
				if short == "" {
					short = e.Commit[:min(shortHash, len(e.Commit))]
				}
				fmt.Fprintf(bw, "- %s %s\n", textsafe.MarkdownCode(short), textsafe.MarkdownSummary(e.Summary))
			}
		}
	}
	fmt.Fprintf(bw, "\n_Summarized by %s with digest._\n", textsafe.MarkdownCode(c.Model))
	return bw.Flush()
}

type group struct {
	key     string
	entries []Entry
}

// groupBy groups entries by key in order of first appearance.
func groupBy(entries []Entry, key func(Entry) string) []group {
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
