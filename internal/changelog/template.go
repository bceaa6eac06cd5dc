package changelog

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Template writes the changelog through a text/template: one of the
// built-in layouts (ParseTemplateOrBuiltin: default, github,
// keepachangelog) or the user's, for layouts those do not cover. The
// template reads a Notes:
//
//	.Model           the model that wrote the summaries
//	.EntryText       "title", "summary" or "" (the layout's choice; --entry-text)
//	.Repos           per repository:
//	  .Name .ID .Title  its directory's name, digest's id, the heading
//	  .URL              its page on the forge, "" without one
//	  .Versions         per section, Unreleased first, then newest first:
//	    .Tag .Date .Title    "" and zero for Unreleased; "v1.2.0 (2026-11-30)"
//	    .Version             the tag without the v before a digit, or "Unreleased"
//	    .PreviousTag         the release before it in history, "" for the first
//	    .CompareURL          the forge's page of its changes (PREV...TAG, PREV...HEAD,
//	                         a first release's history), "" without a forge
//	    .Contributors        the entries' distinct authors, in order (Persons)
//	    .NewContributors     those whose first commit in the repository is here
//	    .Highlights          a model's bullets with --highlights, as it wrote them
//	    .MarkdownHighlights  the same escaped and linked as the Markdown format writes them
//	    .Groups              by --group-by: each .Title and .Entries
//	    .WhatsChanged        grouped as GitHub's notes: by .Category, else one group
//	    .KeepAChangelog      grouped as Keep a Changelog: Added, Changed, ...
//	    .Entries             all of them, newest first
//
// An entry has the jsonl fields in Go's names: .Commit, .Short (the hash
// as git abbreviates it), .URL, .Author, .AuthorEmail, .Login, .Bot,
// .Date, .Subject, .Title (the subject, or a merged pull request's
// title), .Summary (a sentence or two), .Details (the machine's account
// of the diff), .Type, .Scope, .Breaking, .Labels, .Category, .Merge,
// .Version, .PR (the number, "" for none), .PRURL, and .PRRef ("#12", or
// "!12" on GitLab). A Person has .Name, .Email, .Login, .Bot, .Handle
// ("@login", else the name), and for a new contributor .FirstPR,
// .FirstPRURL, .FirstCommit, .FirstURL and .FirstContribution (the pull
// request's page, else the commit's). Functions:
//
//	md        text as literal Markdown inline text
//	code      text as a Markdown code span
//	summary   an entry's summary as one Markdown paragraph, references linked
//	title     an entry's title as GitHub's notes show it, references linked
//	describe  the title without its Conventional prefix ("feat(x): add y" -> "Add y")
//	entry     an entry as the Markdown format writes it, without the "- ";
//	          entry . "title" shows its described title instead of its summary
//	pr        an entry's pull request as a Markdown link, "" for none
//	withpr    text, then the entry's pull request in parentheses unless text names it
//	author    an entry's author as GitHub's notes name people: @login, else the name
//	person    a Person the same way
//	keepachangelog  an entry's Keep a Changelog kind of change, "" if left out
//	date      a time as 2006-01-02
//	line      text as one line safe on a terminal, for plain-text layouts
//
// URLs (.URL, .PRURL, .CompareURL, .Repos' .URL) are made by digest from
// the forge's page and escaped for a link's destination; write them as
// they are.
//
// A template is the user's program, and text/template lets it loop
// ({{range 1000000000}}): it runs under Limits, of time and of output.
type Template struct {
	T       *template.Template
	GroupBy string
	// EntryText is Notes.EntryText: "title", "summary", or "" for the
	// layout's choice.
	EntryText string
	Limits    TemplateLimits
}

// TemplateLimits bound one run of a template. A run over either is
// stopped with a *BudgetError.
type TemplateLimits struct {
	// Timeout is the time the template may run, not counting the time
	// its output waits on the reader (a pager, a slow pipe); 0: no limit.
	Timeout time.Duration
	// MaxBytes is the most it may write; 0: no limit. It bounds, too,
	// each string the template's functions build (printf, print, md...),
	// so that a template cannot fill the memory with text it never writes.
	MaxBytes int64
}

// DefaultTemplateLimits are far above what a real changelog takes: over
// git.git's whole history (60,751 commits in 958 sections) the README's
// template writes 10.4 MiB in 0.4 s, the Markdown layout through entry
// 12.2 MiB in 0.5 s, on a shared 2-core machine.
var DefaultTemplateLimits = TemplateLimits{Timeout: 10 * time.Second, MaxBytes: 64 << 20}

// The flags that set the limits, named in the errors.
const (
	TemplateTimeoutFlag  = "--template-timeout"
	TemplateMaxBytesFlag = "--template-max-bytes"
)

// BudgetError is a template run stopped by one of its limits.
type BudgetError struct {
	Flag  string // TemplateTimeoutFlag or TemplateMaxBytesFlag
	Limit string // "10s", "64 MiB"
	// Func, when the limit on output stopped a function, names it.
	Func string
	// Sample is set when the run was the check on sample notes.
	Sample bool
}

func (e *BudgetError) Error() string {
	what := "wrote more than " + e.Limit
	switch {
	case e.Flag == TemplateTimeoutFlag:
		what = "ran longer than " + e.Limit
	case e.Func != "":
		what = fmt.Sprintf("built a string of more than %s in %s", e.Limit, e.Func)
	}
	if e.Sample {
		// Notes of one commit: no real changelog is smaller.
		return fmt.Sprintf("--template %s (%s) on sample notes of one commit, before anything was sent. Try: a template whose loops range over the notes, or a higher %s", what, e.Flag, e.Flag)
	}
	return fmt.Sprintf("--template %s (%s)", what, e.Flag)
}

// TemplateFuncs are the functions a --template can call.
var TemplateFuncs = template.FuncMap{
	"md":             textsafe.MarkdownInline,
	"code":           textsafe.MarkdownCode,
	"summary":        markdownSummary,
	"title":          MarkdownTitle,
	"describe":       markdownDescription,
	"entry":          entryFunc,
	"pr":             markdownPR,
	"withpr":         withPR,
	"author":         markdownAuthor,
	"person":         markdownPerson,
	"keepachangelog": KeepAChangelogSection,
	"date":           func(t time.Time) string { return t.Format(time.DateOnly) },
	"line":           textsafe.Line,
}

// entryFunc is the template's entry: MarkdownEntryText, the summary
// unless told "title".
func entryFunc(e Entry, text ...string) (string, error) {
	switch {
	case len(text) > 1:
		return "", fmt.Errorf("entry takes an entry and at most one of %s, not %d arguments", strings.Join(EntryTexts, ", "), 1+len(text))
	case len(text) == 1:
		if err := checkEntryText(text[0]); err != nil {
			return "", err
		}
		return MarkdownEntryText(e, text[0]), nil
	}
	return MarkdownEntry(e), nil
}

// The layouts ParseTemplateOrBuiltin knows by name.
const (
	TemplateDefault        = "default"        // what --format markdown writes
	TemplateGitHub         = "github"         // GitHub's generated release notes
	TemplateKeepAChangelog = "keepachangelog" // https://keepachangelog.com/en/1.1.0/
)

// BuiltinTemplates lists the names of the built-in layouts.
var BuiltinTemplates = []string{TemplateDefault, TemplateGitHub, TemplateKeepAChangelog}

//go:embed templates/*.tmpl
var builtinTemplates embed.FS

// BuiltinTemplate is the text of a built-in layout, to start a template
// of one's own from; ok is false for a name BuiltinTemplates does not
// list.
func BuiltinTemplate(name string) (text []byte, ok bool) {
	if !slices.Contains(BuiltinTemplates, name) {
		return nil, false
	}
	b, err := builtinTemplates.ReadFile("templates/" + name + ".tmpl")
	if err != nil {
		panic(err) // embedded above: cannot be missing
	}
	return b, true
}

// ParseTemplateOrBuiltin reads --template's value: a name BuiltinTemplates
// lists is that layout, anything else the path of a template file
// (ParseTemplate). A file that happens to be named like a layout is read
// through a path that says so: ./github.
func ParseTemplateOrBuiltin(nameOrPath string) (*template.Template, error) {
	text, ok := BuiltinTemplate(nameOrPath)
	if !ok {
		return ParseTemplate(nameOrPath)
	}
	return template.New(nameOrPath).Funcs(TemplateFuncs).Option("missingkey=error").Parse(string(text))
}

// ParseTemplate reads a template file, failing on what text/template
// cannot parse with the file's name and line. A field that does not
// exist shows only when the template runs: Template.Check runs it once on
// sample notes, before anything is paid for.
func ParseTemplate(path string) (*template.Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--template: %w. Try: the path of a text/template file, or one of %s", err, strings.Join(BuiltinTemplates, ", "))
	}
	t, err := template.New(path).Funcs(TemplateFuncs).Option("missingkey=error").Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("--template: %w. Try: the fields and functions listed under Release notes in the README", err)
	}
	return t, nil
}

// Check runs the template once on sample notes, output discarded, under
// its limits, to find before the run what only running shows: a field
// or a function's argument that is wrong, a loop that does not end. It
// returns a *BudgetError past a limit, and ctx's error once ctx is done
// (a signal), at once, whatever the template is doing.
func (t Template) Check(ctx context.Context) error {
	if err := checkEntryText(t.EntryText); err != nil {
		return err
	}
	notes := sampleNotes()
	notes.EntryText = t.EntryText
	err := t.run(ctx, io.Discard, notes)
	var budget *BudgetError
	switch {
	case errors.As(err, &budget):
		budget.Sample = true
		return budget
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	case err != nil:
		return fmt.Errorf("--template: %w. Try: the fields and functions listed under Release notes in the README", err)
	}
	return nil
}

// sampleNotes has one of everything a template can range over.
func sampleNotes() Notes {
	f := forge.Forge{Kind: forge.GitHub, Base: "https://github.com/o/repo"}
	prURL, _ := f.Ref('#', "1")
	e := Entry{Repo: "repo", RepoID: "0", Commit: "0000000000000000000000000000000000000000", Short: "0000000", Author: "A",
		AuthorEmail: "a@example.com", Login: "a", Subject: "feat: x (#1)", Title: "feat: x (#1)", Summary: "X.", Details: "Changes 1 file.",
		Type: "feat", Labels: []string{"enhancement"}, Category: "Features", Version: "v1.0.0", URL: f.Commit("0000000000000000000000000000000000000000"),
		PR: "1", PRURL: prURL, Forge: f}
	p := Person{Name: "A", Email: "a@example.com", Login: "a", FirstPR: "1", FirstPRURL: e.PRURL, FirstCommit: e.Commit, FirstURL: e.URL}
	return Notes{Model: "offline", Repos: []RepoNotes{{Name: "repo", ID: "0", Title: "repo", URL: f.Base, Versions: []VersionNotes{
		{Tag: "v1.0.0", Highlights: []string{"X."}, Groups: []GroupNotes{{Title: "Features", Entries: []Entry{e}}}, Entries: []Entry{e},
			PreviousTag: "v0.9.0", CompareURL: f.Compare("v0.9.0", "v1.0.0"), Contributors: []Person{{Name: "A", Email: "a@example.com", Login: "a"}},
			NewContributors: []Person{p}},
	}}}}
}

// Write implements Reporter: WriteContext with no way to stop it but
// the limits.
func (t Template) Write(w io.Writer, c *Changelog) error {
	return t.WriteContext(context.Background(), w, c)
}

// WriteContext writes the changelog through the template, under its
// limits, returning at once when ctx is done (a signal). Past a limit it
// returns a *BudgetError. Either way w holds the output up to that point
// (and a write to it may still be under way), which a caller writing a
// file must not keep: cmdutil.WriteFile renames a file into place only
// once it is whole.
func (t Template) WriteContext(ctx context.Context, w io.Writer, c *Changelog) error {
	if err := checkEntryText(t.EntryText); err != nil {
		return err
	}
	notes, err := BuildNotes(c, t.GroupBy)
	if err != nil {
		return err
	}
	notes.EntryText = t.EntryText
	err = t.run(ctx, w, notes)
	var budget *BudgetError
	if err == nil || errors.As(err, &budget) || ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("--template: %w", err)
}

// run executes the template on data into w under the limits. Go's
// text/template cannot be stopped from outside, and a {{range}} that
// writes nothing never reaches a writer that could fail; so the template
// runs in a goroutine of its own, and past the time limit, or once ctx is
// done, run stops waiting for it and returns. The goroutine fails at its
// next write; one that writes nothing spins on until the process exits,
// which digest does at once after such an error.
func (t Template) run(ctx context.Context, w io.Writer, data any) error {
	tmpl := t.T
	if t.Limits.MaxBytes > 0 {
		var err error
		if tmpl, err = t.T.Clone(); err != nil {
			return err
		}
		tmpl.Funcs(boundedFuncs(t.Limits.MaxBytes))
	}
	start := time.Now()
	out := &budgetWriter{w: w, max: t.Limits.MaxBytes, clock: func() time.Duration { return time.Since(start) }}
	done := make(chan error, 1) // the goroutine never waits to hand over its result
	go func() {
		b := bufio.NewWriter(out)
		err := tmpl.Execute(b, data)
		if err == nil {
			err = b.Flush()
		}
		done <- err
	}()
	var expired <-chan time.Time
	if t.Limits.Timeout > 0 {
		timer := time.NewTimer(t.Limits.Timeout)
		defer timer.Stop()
		expired = timer.C
	}
	for {
		select {
		case err := <-done:
			return unwrapBudget(err)
		case <-ctx.Done():
			out.stop()
			return ctx.Err()
		case <-expired:
			select {
			case err := <-done: // it ended as the time did
				return unwrapBudget(err)
			default:
			}
			if used := out.used(); used < t.Limits.Timeout {
				// Some of the time went waiting on the reader.
				expired = time.After(t.Limits.Timeout - used)
				continue
			}
			out.stop()
			return &BudgetError{Flag: TemplateTimeoutFlag, Limit: t.Limits.Timeout.String()}
		}
	}
}

// unwrapBudget returns the *BudgetError in err, if any, rather than
// text/template's "error calling printf: ..." around it.
func unwrapBudget(err error) error {
	if budget := (*BudgetError)(nil); errors.As(err, &budget) {
		return budget
	}
	return err
}

// errAbandoned fails the writes of a run its caller stopped waiting for.
var errAbandoned = errors.New("the template's run was stopped")

// budgetWriter passes at most max bytes to w (0: any number), failing the
// write that would pass more with a *BudgetError. It keeps the time its
// writes wait on w, which the time limit does not count, and fails every
// write once stopped.
type budgetWriter struct {
	w     io.Writer
	max   int64
	n     int64                // bytes passed on; only the writing goroutine touches it
	clock func() time.Duration // monotonic time since the run began

	stopped atomic.Bool
	waited  atomic.Int64 // nanoseconds spent in w.Write, those finished
	since   atomic.Int64 // clock()+1 when the write in progress began; 0: none
}

func (b *budgetWriter) Write(p []byte) (int, error) {
	if b.stopped.Load() {
		return 0, errAbandoned
	}
	if b.max > 0 && int64(len(p)) > b.max-b.n {
		return 0, &BudgetError{Flag: TemplateMaxBytesFlag, Limit: FormatSize(b.max)}
	}
	b.n += int64(len(p))
	began := b.clock()
	b.since.Store(int64(began) + 1)
	n, err := b.w.Write(p)
	b.waited.Add(int64(b.clock() - began))
	b.since.Store(0)
	return n, err
}

// used is the time the run has taken, less the time its writes waited.
// Between the end of a write and its clearing of since, a write's time
// may be taken off twice: used errs on the side of the template.
func (b *budgetWriter) used() time.Duration {
	now := b.clock()
	used := now - time.Duration(b.waited.Load())
	if since := b.since.Load(); since != 0 {
		used -= now - time.Duration(since-1)
	}
	return used
}

// stop fails every later write.
func (b *budgetWriter) stop() { b.stopped.Store(true) }

// boundedFuncs are the functions that build text from text, text/template's
// own print, printf, println, html, js and urlquery included, each failing
// on a result longer than max: a template's text is bounded by the output
// limit even where it is kept in a variable and never written
// ({{$s = printf "%s%s" $s $s}} doubles it at each turn of a loop).
func boundedFuncs(max int64) template.FuncMap {
	over := func(name string) error {
		return &BudgetError{Flag: TemplateMaxBytesFlag, Limit: FormatSize(max), Func: name}
	}
	check := func(name, s string) (string, error) {
		if int64(len(s)) > max {
			return "", over(name)
		}
		return s, nil
	}
	// What a call is given is a floor of what it returns: past the limit,
	// the call is refused before a longer copy is built.
	given := func(args []any) int64 {
		var n int64
		for _, a := range args {
			switch a := a.(type) {
			case string:
				n += int64(len(a))
			case []byte:
				n += int64(len(a))
			}
		}
		return n
	}
	variadic := func(name string, f func(...any) string) func(...any) (string, error) {
		return func(args ...any) (string, error) {
			if given(args) > max {
				return "", over(name)
			}
			return check(name, f(args...))
		}
	}
	unary := func(name string, f func(string) string) func(string) (string, error) {
		return func(s string) (string, error) { return check(name, f(s)) }
	}
	return template.FuncMap{
		"print":    variadic("print", fmt.Sprint),
		"println":  variadic("println", fmt.Sprintln),
		"html":     variadic("html", template.HTMLEscaper),
		"js":       variadic("js", template.JSEscaper),
		"urlquery": variadic("urlquery", template.URLQueryEscaper),
		"printf": func(format string, args ...any) (string, error) {
			if given(args) > max {
				return "", over("printf")
			}
			return check("printf", fmt.Sprintf(format, args...))
		},
		"withpr": func(e Entry, s string) (string, error) {
			if int64(len(s)) > max {
				return "", over("withpr")
			}
			return check("withpr", withPR(e, s))
		},
		"md":   unary("md", textsafe.MarkdownInline),
		"code": unary("code", textsafe.MarkdownCode),
		"line": unary("line", textsafe.Line),
	}
}

// FormatSize writes a number of bytes as people read it: "64 MiB" when it
// is a whole number of KiB, MiB or GiB, else "1000 bytes".
func FormatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
