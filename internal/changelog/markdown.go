package changelog

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Markdown writes release notes: a section per version (Unreleased first,
// then each tag newest first), its highlights when it has any, the
// entries of each grouped (GroupBy: by type, by day, or not at all;
// several bumps of one dependency are one entry), each with its scope,
// summary (or title: EntryText), hash (a link to the commit where the
// forge is known), pull request when the text does not name it, and
// author; references such as #123 link to their pull request. The
// built-in template "default" writes the same bytes. What came from a
// repository or a model
// shows as text: a summary is one paragraph of its bullet, and nothing in
// it or in a name can open a heading, a code block or HTML, or load an
// image (see textsafe.MarkdownSummary).
type Markdown struct {
	GroupBy string // GroupByType when empty
	// EntryText is EntryTitle to show each entry's title rather than its
	// summary (EntrySummary, or "").
	EntryText string
}

// shortHash is git's shortest abbreviation, for entries that come
// without their repository's.
const shortHash = 7

// Write implements Reporter.
func (m Markdown) Write(w io.Writer, c *Changelog) error {
	if err := checkEntryText(m.EntryText); err != nil {
		return err
	}
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
					bw.WriteString("- " + MarkdownEntryText(e, m.EntryText) + "\n")
				}
			}
		}
	}
	fmt.Fprintf(bw, "\n_Summarized by %s with digest._\n", textsafe.MarkdownCode(c.Model))
	return bw.Flush()
}

// MarkdownEntry is one entry as a line of release notes, without the list
// marker: "**scope:** Summary. ([`abc1234`](URL), Author)", with the pull
// request's link after the hash when the summary does not name it.
func MarkdownEntry(e Entry) string {
	return MarkdownEntryText(e, EntrySummary)
}

// MarkdownEntryText is MarkdownEntry showing, for text EntryTitle, the
// entry's title without its Conventional prefix (the scope is shown
// apart) rather than its summary.
func MarkdownEntryText(e Entry, text string) string {
	var b strings.Builder
	if e.Scope != "" {
		b.WriteString("**" + textsafe.MarkdownInline(e.Scope) + ":** ")
	}
	body := markdownSummary(e)
	if text == EntryTitle {
		body = markdownDescription(e)
	}
	b.WriteString(body)
	hash := textsafe.MarkdownCode(shortOf(e))
	if e.URL != "" {
		hash = "[" + hash + "](" + e.URL + ")"
	}
	b.WriteString(" (" + hash)
	if pr := markdownPR(e); pr != "" && !citesPR(e, body) {
		b.WriteString(", " + pr)
	}
	if e.Author != "" {
		b.WriteString(", " + textsafe.MarkdownInline(e.Author))
	}
	b.WriteString(")")
	return b.String()
}

// shortOf is the entry's abbreviated hash, git's shortest when it came
// without its repository's.
func shortOf(e Entry) string {
	if e.Short != "" {
		return e.Short
	}
	return e.Commit[:min(shortHash, len(e.Commit))]
}

// markdownSummary is the entry's summary as one Markdown paragraph, its
// references linked.
func markdownSummary(e Entry) string {
	return e.Forge.Link(textsafe.MarkdownSummary(e.Summary))
}

// titleOf is the entry's title, its subject when it has none, without a
// trailing "(#N)" that names its own pull request: the layouts link that
// apart.
func titleOf(e Entry) string {
	t := e.Title
	if t == "" {
		t = e.Subject
	}
	if e.PR != "" {
		for _, own := range []string{" (#" + e.PR + ")", " (!" + e.PR + ")"} {
			if trimmed, ok := strings.CutSuffix(strings.TrimRight(t, " "), own); ok {
				return trimmed
			}
		}
	}
	return t
}

// MarkdownTitle is the entry's title as GitHub's notes show a pull
// request's ("feat(api): add x"), as Markdown inline text with its
// references linked; a trailing "(#N)" naming its own pull request is
// left to the layout's link.
func MarkdownTitle(e Entry) string {
	return e.Forge.Link(textsafe.MarkdownInline(titleOf(e)))
}

// markdownDescription is MarkdownTitle without the Conventional prefix
// ("feat(api): add x" -> "Add x"), for layouts that show the kind and
// the scope apart.
func markdownDescription(e Entry) string {
	return e.Forge.Link(textsafe.MarkdownInline(committype.Description(titleOf(e))))
}

// PRRef is how the forge names the entry's pull request: "#12", "!12" for
// a GitLab merge request, "" when there is none.
func (e Entry) PRRef() string {
	switch {
	case e.PR == "":
		return ""
	case e.Forge.Kind == forge.GitLab:
		return "!" + e.PR
	}
	return "#" + e.PR
}

// markdownPR is the entry's pull request as a Markdown link ("[#12](URL)"),
// as text without a page, or "".
func markdownPR(e Entry) string {
	ref := e.PRRef()
	if ref == "" {
		return ""
	}
	text := ref // a sigil and digits: nothing to escape but GitLab's !
	if ref[0] == '!' {
		text = `\` + ref // ! before [ would start an image
	}
	if e.PRURL == "" {
		return text
	}
	return "[" + text + "](" + e.PRURL + ")"
}

// citesPR tells whether text, as a layout writes it, already names the
// entry's pull request as a reference: "#12" (escaped or linked too) not
// within a word or a longer number.
func citesPR(e Entry, text string) bool {
	ref := e.PRRef()
	if ref == "" {
		return false
	}
	sigil, number := ref[0], ref[1:]
	for i := 0; i < len(text); i++ {
		end := i + 1 + len(number)
		switch {
		case text[i] != sigil, !strings.HasPrefix(text[i+1:], number),
			end < len(text) && isDigit(text[end]),
			i > 0 && isWordByte(text[i-1]):
			continue
		}
		return true
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'z' || c == '_' }

// withPR is text followed by the entry's pull request's link in
// parentheses, unless text names it already or there is none.
func withPR(e Entry, text string) string {
	if pr := markdownPR(e); pr != "" && !citesPR(e, text) {
		return text + " (" + pr + ")"
	}
	return text
}

// markdownAuthor names the entry's author as GitHub's notes do: "@login",
// a bot's without "[bot]", else the name, as Markdown inline text.
func markdownAuthor(e Entry) string {
	return textsafe.MarkdownInline(handle(e.Login, e.Author))
}

// markdownPerson is Person.Handle as Markdown inline text.
func markdownPerson(p Person) string {
	return textsafe.MarkdownInline(p.Handle())
}
