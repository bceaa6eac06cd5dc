package report

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Markdown writes a changelog grouped by repository and day, newest first,
// one bullet per commit.
type Markdown struct{}

// shortHash is git's default abbreviation length.
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
		title := repo.entries[0].Repo
		if named[title] > 1 { // two different repositories in directories of the same name
			title += " (" + repo.entries[0].RepoID + ")"
		}
		fmt.Fprintf(bw, "\n## %s\n", title)
		days := groupBy(repo.entries, func(e Entry) string { return e.Date.Format("2006-01-02") })
		// Author dates can disagree with the commit order the walk followed;
		// days still read newest first.
		sort.SliceStable(days, func(i, j int) bool { return days[i].key > days[j].key })
		for _, day := range days {
			fmt.Fprintf(bw, "\n### %s\n\n", day.key)
			for _, e := range day.entries {
				fmt.Fprintf(bw, "- `%s` %s\n", e.Commit[:min(shortHash, len(e.Commit))], bullet(e.Summary))
			}
		}
	}
	fmt.Fprintf(bw, "\n_Summarized by `%s` with digest._\n", c.Model)
	return bw.Flush()
}

// bullet keeps a multi-line summary inside its list item.
func bullet(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "" {
			lines[i] = ""
			continue
		}
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n")
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
