package report

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
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
//
// A template is the user's program, and text/template lets it loop
// ({{range 1000000000}}): it runs under Limits, of time and of output.
type Template struct {
	T       *template.Template
	GroupBy string
	Limits  TemplateLimits
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
	"md":      textsafe.MarkdownInline,
	"code":    textsafe.MarkdownCode,
	"summary": func(e Entry) string { return e.Forge.Link(textsafe.MarkdownSummary(e.Summary)) },
	"entry":   MarkdownEntry,
	"date":    func(t time.Time) string { return t.Format(time.DateOnly) },
	"line":    textsafe.Line,
}

// ParseTemplate reads a template file, failing on what text/template
// cannot parse with the file's name and line. A field that does not
// exist shows only when the template runs: Template.Check runs it once on
// sample notes, before anything is paid for.
func ParseTemplate(path string) (*template.Template, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--template: %w. Try: the path of a text/template file", err)
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
	err := t.run(ctx, io.Discard, sampleNotes())
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
	e := Entry{Repo: "repo", RepoID: "0", Commit: "0000000000000000000000000000000000000000", Short: "0000000", Author: "A",
		Subject: "feat: x", Summary: "X.", Type: "feat", Version: "v1.0.0"}
	return Notes{Model: "offline", Repos: []RepoNotes{{Name: "repo", ID: "0", Title: "repo", Versions: []VersionNotes{
		{Tag: "v1.0.0", Highlights: []string{"X."}, Groups: []GroupNotes{{Title: "Features", Entries: []Entry{e}}}, Entries: []Entry{e}},
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
	notes, err := BuildNotes(c, t.GroupBy)
	if err != nil {
		return err
	}
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
