// Package offline is the provider that needs no key and no network: it
// reads the same prompt a hosted model would and writes a deterministic,
// extractive summary of each commit from its message and diff.
package offline

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/mergemsg"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// Provider summarizes without a model.
type Provider struct {
	count func(string) int
}

// New returns the offline provider; count measures usage in the same
// tokens the rest of digest counts in.
func New(count func(string) int) *Provider {
	return &Provider{count: count}
}

var _ provider.Provider = (*Provider)(nil)

// Complete answers a commit-summary request, a release's highlights, or
// digest eval's judge (see grade).
func (p *Provider) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return provider.Response{}, err
	}
	var input strings.Builder
	input.WriteString(req.System)
	for _, m := range req.Messages {
		input.WriteString(m.Content)
	}
	if text, ok := grade(req); ok {
		return provider.Response{Text: text, Usage: provider.Usage{InputTokens: p.count(input.String()), OutputTokens: p.count(text)}}, nil
	}
	if changes, ok := prompt.ReadHighlights(req.System, req.Messages); ok {
		text := prompt.FormatHighlights(Highlights(changes))
		return provider.Response{Text: text, Usage: provider.Usage{InputTokens: p.count(input.String()), OutputTokens: p.count(text)}}, nil
	}
	commits := prompt.Parse(input.String())
	if len(commits) == 0 {
		// Any other prompt (an eval item) gets its own last line back: a
		// free, deterministic baseline that exercises the whole pipeline.
		text, ok := echo(req)
		if !ok {
			return provider.Response{}, fmt.Errorf("offline: the request has no user message to answer")
		}
		return provider.Response{Text: text, Usage: provider.Usage{InputTokens: p.count(input.String()), OutputTokens: p.count(text)}}, nil
	}
	answers := make([]prompt.Answer, len(commits))
	for i, c := range commits {
		paths := make([]string, len(c.Files))
		for j, f := range c.Files {
			paths[j] = f.Path
		}
		kind := committype.Classify(c.Message, paths)
		answers[i] = prompt.Answer{Commit: c.Hash, Summary: Summarize(c), Type: kind.Type, Scope: kind.Scope, Breaking: &kind.Breaking}
	}
	text := prompt.FormatAnswer(answers)
	return provider.Response{
		Text:  text,
		Usage: provider.Usage{InputTokens: p.count(input.String()), OutputTokens: p.count(text)},
	}, nil
}

// echo is the last non-empty line of the last user message.
func echo(req provider.Request) (string, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "user" {
			continue
		}
		lines := strings.Split(strings.TrimSpace(req.Messages[i].Content), "\n")
		return strings.TrimSpace(lines[len(lines)-1]), true
	}
	return "", false
}

// Summarize writes one commit's summary: the message's subject (without a
// Conventional Commits or area prefix), one whole
// sentence of its body that says what the change does, then what changed
// where.
func Summarize(c prompt.Commit) string {
	var parts []string
	subject, body, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
	subject, body = mendSubject(subject, body)
	// A merged pull request says what it does in its title, not in the
	// forge's "Merge pull request #12 from ...".
	if pr, ok := mergemsg.Parse(c.Message); ok && !pr.Squash && pr.Title != "" {
		if _, rest, found := strings.Cut(body, pr.Title); found {
			body = rest
		}
		subject = pr.Title
	}
	// The type and scope a prefix gives are shown apart in release notes.
	if s := sentence(committype.Description(subject)); s != "" {
		parts = append(parts, s)
	} else {
		parts = append(parts, noMessage)
	}
	if s := bodySentence(body, strings.TrimSpace(subject)); s != "" {
		parts = append(parts, s)
	}
	if s := changes(c); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// mendSubject joins a subject that a web UI cut with "…" to its rest,
// which it moved to the body's first line, also starting with "…".
func mendSubject(subject, body string) (string, string) {
	head, ok := strings.CutSuffix(strings.TrimSpace(subject), "…")
	if !ok {
		return subject, body
	}
	first, rest, _ := strings.Cut(strings.TrimLeft(body, "\n"), "\n")
	tail, ok := strings.CutPrefix(strings.TrimSpace(first), "…")
	if !ok {
		return subject, body
	}
	return head + tail, rest
}

// noMessage stands for the subject of a commit without a message.
const noMessage = "Commit without a message."

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

func changes(c prompt.Commit) string {
	// The request lists a long commit's files only in part; its totals
	// count them all.
	var diffed, skipped []prompt.File
	for _, f := range c.Files {
		if f.Skip != "" {
			skipped = append(skipped, f)
		} else {
			diffed = append(diffed, f)
		}
	}
	t := c.Totals
	if t == (prompt.Totals{}) {
		t = prompt.TotalsOf(c.Files) // a commit built in code, not read from a request
	}
	leftOut := max(t.Skipped, len(skipped))
	diffedTotal := max(t.Files-t.Skipped, len(diffed))
	if diffedTotal == 0 {
		if leftOut == 0 {
			return ""
		}
		// Nothing was diffed: naming what was left out says it all.
		names := make([]string, len(skipped))
		for i, f := range skipped {
			names[i] = fmt.Sprintf("%s (%s)", f.Path, f.Skip)
		}
		return "Leaves out " + listOf(names, leftOut, maxSkippedNamed) + "."
	}

	// Files the request only counted could be anywhere.
	dir, single := sharedDir(c.Files)
	single = single && diffedTotal == len(diffed) && leftOut == len(skipped)
	name := func(f prompt.File) string {
		if single {
			return path.Base(f.Path)
		}
		return f.Path
	}
	defs := definitions(c.Diff)
	var acts []string
	hidden := false // some file is counted, not named
	for _, verb := range []struct {
		status byte
		word   string
	}{{'A', "adds"}, {'M', "modifies"}, {'R', "renames"}, {'D', "deletes"}} {
		// Beside code, tests are counted rather than named: their paths
		// are long, and their function names restate the test.
		var code, tests []string
		for _, f := range diffed {
			if f.Status != verb.status {
				continue
			}
			if isTest(f.Path) {
				tests = append(tests, name(f))
				continue
			}
			n := name(f)
			if ds := defs[f.Path]; len(ds) > 0 {
				n += " (" + list(ds, maxNamesPerFile) + ")"
			}
			code = append(code, n)
		}
		switch {
		case len(code) == 0 && len(tests) == 0:
		case len(code) == 0:
			acts = append(acts, verb.word+" "+list(tests, maxFilesPerVerb))
			hidden = hidden || len(tests) > maxFilesPerVerb
		case len(tests) == 0:
			acts = append(acts, verb.word+" "+list(code, maxFilesPerVerb))
			hidden = hidden || len(code) > maxFilesPerVerb
		default:
			hidden = true
			shown := maxFilesPerVerb - 1 // room for the tests' count
			if len(code) > shown {
				code = append(code[:shown-1:shown-1], fmt.Sprintf("%d more", len(code)-(shown-1)))
			}
			acts = append(acts, verb.word+" "+join(append(code, plural(len(tests), "test file"))))
		}
	}
	if unlisted := diffedTotal - len(diffed); unlisted > 0 {
		hidden = true
		acts = append(acts, fmt.Sprintf("changes %d more %s", unlisted, pluralWord(unlisted, "file")))
	}
	if leftOut > 0 {
		names := make([]string, len(skipped))
		for i, f := range skipped {
			names[i] = fmt.Sprintf("%s (%s)", name(f), f.Skip)
		}
		acts = append(acts, "leaves out "+listOf(names, leftOut, maxSkippedNamed))
		hidden = hidden || leftOut > maxSkippedNamed
	}

	// Where the change is: the one directory, or the most touched ones
	// when the paths named do not show them all.
	where := ""
	switch {
	case single:
		where = " in " + dirName(dir)
	case hidden:
		where = " in " + directories(c.Files)
	}
	lines := fmt.Sprintf("+%d/-%d", t.Added, t.Removed)
	var s string
	switch {
	case leftOut == 0:
		s = fmt.Sprintf("Changes %s%s (%s)", plural(diffedTotal, "file"), where, lines)
	default:
		// Lines are counted only in the files diffed: the others were
		// never read, so their size is not known.
		rest := "the other"
		if diffedTotal > 1 {
			rest = "the rest"
		}
		s = fmt.Sprintf("Changes %s%s, %d left out of the diff (%s in %s)",
			plural(diffedTotal+leftOut, "file"), where, leftOut, lines, rest)
	}

	if len(acts) > 0 {
		s += ": " + strings.Join(acts, "; ")
	}
	return s + "."
}

// How much of a long commit is named: past these, "and N more".
const (
	maxNamesPerFile = 2
	maxFilesPerVerb = 4
	maxSkippedNamed = 3
)

// isTest reports whether a path holds tests, by the conventions of the
// languages the summary names definitions in.
func isTest(p string) bool {
	base := path.Base(p)
	stem := strings.TrimSuffix(base, path.Ext(base))
	if strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") {
		return true
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch d {
		case "test", "tests", "t", "testdata", "__tests__", "spec", "testing":
			return true
		}
	}
	return false
}

// sharedDir is the one directory every file is in, if there is one: the
// files are then named by their base names after it.
func sharedDir(files []prompt.File) (string, bool) {
	if len(files) == 0 {
		return "", false
	}
	dir := path.Dir(files[0].Path)
	for _, f := range files[1:] {
		if path.Dir(f.Path) != dir {
			return "", false
		}
	}
	return dir, true
}

func dirName(d string) string {
	if d == "." {
		return "the repository root"
	}
	return d
}

// directories names where the change happened, most touched first.
func directories(files []prompt.File) string {
	count := map[string]int{}
	for _, f := range files {
		count[dirName(path.Dir(f.Path))]++
	}
	dirs := make([]string, 0, len(count))
	for d := range count {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool {
		if count[dirs[i]] != count[dirs[j]] {
			return count[dirs[i]] > count[dirs[j]]
		}
		return dirs[i] < dirs[j]
	})
	return list(dirs, 3)
}

func plural(n int, word string) string {
	return fmt.Sprintf("%d %s", n, pluralWord(n, word))
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// list joins up to max items in English, summarising the rest.
func list(items []string, max int) string {
	return listOf(items, len(items), max)
}

// listOf is list for items that are the first of total.
func listOf(items []string, total, max int) string {
	if total > max {
		items = items[:min(len(items), max-1)] // room for "N more"
	}
	if rest := total - len(items); rest > 0 {
		items = append(items[:len(items):len(items)], fmt.Sprintf("%d more", rest))
	}
	return join(items)
}

// join lists items in English.
func join(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	case 2:
		return items[0] + " and " + items[1]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
