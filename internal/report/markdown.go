package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Markdown writes release notes: a section per version (Unreleased first,
// then each tag newest first), its highlights when it has any, the
// entries of each grouped (GroupBy: by
// type, by day, or not at all), each with its scope, summary, hash (a link
// to the commit where the forge is known) and author; references such as
// #123 link to their pull request. What came from a repository or a model
// shows as text: a summary is one paragraph of its bullet, and nothing in
// it or in a name can open a heading, a code block or HTML, or load an
// image (see textsafe.MarkdownSummary).
type Markdown struct {
	GroupBy string // GroupByType when empty
}

// shortHash is git's shortest abbreviation, for entries that come
// without their repository's.
const shortHash = 7

// Write implements Reporter.
func (m Markdown) Write(w io.Writer, c *Changelog) error {
	notes, err := BuildNotes(c, m.GroupBy)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# Changelog")
	if len(c.Entries) == 0 {
		fmt.Fprintln(bw, "\nNo commits to summarize.")
		return bw.Flush()
	}
	level := "##"
	if len(notes.Repos) > 1 {
		level = "###"
	}
	for _, repo := range notes.Repos {
		if len(notes.Repos) > 1 {
			fmt.Fprintf(bw, "\n## %s\n", textsafe.MarkdownInline(repo.Title))
		}
		for _, v := range repo.Versions {
			fmt.Fprintf(bw, "\n%s %s\n", level, textsafe.MarkdownInline(v.Title()))
			if len(v.Highlights) > 0 {
				bw.WriteString("\n**Highlights**\n\n")
				for _, h := range v.MarkdownHighlights() {
					bw.WriteString("- " + h + "\n")
				}
			}
			for _, g := range v.Groups {
				switch {
				case g.Title != "":
					fmt.Fprintf(bw, "\n%s# %s\n", level, textsafe.MarkdownInline(g.Title))
				case len(v.Highlights) > 0:
					// Without a heading between them, the entries' list would
					// run on from the highlights' as one list.
					bw.WriteString("\n**Changes**\n")
				}
				bw.WriteString("\n")
				for _, e := range g.Entries {
					bw.WriteString("- " + MarkdownEntry(e) + "\n")
				}
			}
		}
	}
	fmt.Fprintf(bw, "\n_Summarized by %s with digest._\n", textsafe.MarkdownCode(c.Model))
	return bw.Flush()
}

// MarkdownEntry is one entry as a line of release notes, without the list
// marker: "**scope:** Summary. ([`abc1234`](URL), Author)".
func MarkdownEntry(e Entry) string {
	var b strings.Builder
	if e.Scope != "" {
		b.WriteString("**" + textsafe.MarkdownInline(e.Scope) + ":** ")
	}
	b.WriteString(e.Forge.Link(textsafe.MarkdownSummary(e.Summary)))
	short := e.Short
	if short == "" {
		short = e.Commit[:min(shortHash, len(e.Commit))]
	}
	hash := textsafe.MarkdownCode(short)
	if e.URL != "" {
		hash = "[" + hash + "](" + e.URL + ")"
	}
	b.WriteString(" (" + hash)
	if e.Author != "" {
		b.WriteString(", " + textsafe.MarkdownInline(e.Author))
	}
	b.WriteString(")")
	return b.String()
}
