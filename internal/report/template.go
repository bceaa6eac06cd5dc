package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"text/template"
	"time"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Template writes the changelog through a text/template of the user's,
// for layouts the Markdown format does not cover. The template reads a
// Notes (see its fields: .Model, .Repos, each with .Title and .Versions,
// each with .Title, .Tag, .Date, .Highlights (a model's bullets about the
// section with --highlights, as it wrote them: pass each through md, or
// range over .MarkdownHighlights for them escaped and linked as the
// Markdown format writes them), .Groups and .Entries; an entry has
// .Commit, .Short, .URL, .Author, .Date, .Subject, .Summary, .Type,
// .Scope, .Breaking, .Version), and these functions:
//
//	md       text as literal Markdown inline text
//	code     text as a Markdown code span
//	summary  an entry's summary as one Markdown paragraph, references linked
//	entry    an entry as the Markdown format writes it, without the "- "
//	date     a time as 2006-01-02
//	line     text as one line safe on a terminal, for plain-text layouts
type Template struct {
	T       *template.Template
	GroupBy string
}

// TemplateFuncs are the functions a --template can call.
var TemplateFuncs = template.FuncMap{
	"md":      textsafe.MarkdownInline,
	"code":    textsafe.MarkdownCode,
	"summary": func(e Entry) string { return e.Forge.Link(textsafe.MarkdownSummary(e.Summary)) },
	"entry":   MarkdownEntry,
	"date":    func(t time.Time) string { return t.Format(time.DateOnly) },
	"line":    textsafe.Line,
}

// ParseTemplate reads a template file, failing on what text/template
// cannot parse with the file's name and line.
func ParseTemplate(path string) (*template.Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--template: %w. Try: the path of a text/template file", err)
	}
	t, err := template.New(path).Funcs(TemplateFuncs).Option("missingkey=error").Parse(string(b))
	if err == nil {
		// A field that does not exist shows only when the template runs:
		// run it once now on a sample, before anything is paid for.
		err = t.Execute(io.Discard, sampleNotes())
	}
	if err != nil {
		return nil, fmt.Errorf("--template: %w. Try: the fields and functions listed under Release notes in the README", err)
	}
	return t, nil
}

// sampleNotes has one of everything a template can range over.
func sampleNotes() Notes {
	e := Entry{Repo: "repo", RepoID: "0", Commit: "0000000000000000000000000000000000000000", Short: "0000000", Author: "A",
		Subject: "feat: x", Summary: "X.", Type: "feat", Version: "v1.0.0"}
	return Notes{Model: "offline", Repos: []RepoNotes{{Name: "repo", ID: "0", Title: "repo", Versions: []VersionNotes{
		{Tag: "v1.0.0", Highlights: []string{"X."}, Groups: []GroupNotes{{Title: "Features", Entries: []Entry{e}}}, Entries: []Entry{e}},
	}}}}
}

// Write implements Reporter.
func (t Template) Write(w io.Writer, c *Changelog) error {
	notes, err := BuildNotes(c, t.GroupBy)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if err := t.T.Execute(bw, notes); err != nil {
		return fmt.Errorf("--template: %w", err)
	}
	return bw.Flush()
}
