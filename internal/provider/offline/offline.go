// Package offline is the provider that needs no key and no network: it
// reads the same prompt a hosted model would and writes a deterministic,
// extractive summary of each commit from its message and diff.
package offline

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

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

// Complete answers a commit-summary request.
func (p *Provider) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return provider.Response{}, err
	}
	var input strings.Builder
	input.WriteString(req.System)
	for _, m := range req.Messages {
		input.WriteString(m.Content)
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
		answers[i] = prompt.Answer{Commit: c.Hash, Summary: Summarize(c)}
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

// Summarize writes one commit's summary: the message's subject and first
// sentence of its body, then what changed where.
func Summarize(c prompt.Commit) string {
	var parts []string
	subject, body, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
	if s := sentence(subject); s != "" {
		parts = append(parts, s)
	} else {
		parts = append(parts, "Commit without a message.")
	}
	if s := firstSentence(body); s != "" {
		parts = append(parts, s)
	}
	if s := changes(c); s != "" {
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

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

// firstSentence takes the body's first paragraph up to its first full stop,
// skipping trailers such as Signed-off-by.
func firstSentence(body string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(body), "\n\n")
	// Trailers can follow the text without a blank line; they name people
	// and addresses, not changes.
	lines := strings.Split(para, "\n")
	for i, l := range lines {
		if trailer.MatchString(strings.TrimSpace(l)) {
			lines = lines[:i]
			break
		}
	}
	para = strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	if para == "" {
		return ""
	}
	if i := strings.Index(para, ". "); i >= 0 {
		para = para[:i+1]
	}
	if len(para) > 200 {
		cut := strings.LastIndexByte(para[:200], ' ')
		if cut < 100 {
			cut = 200
		}
		para = strings.ToValidUTF8(para[:cut], "") + "..."
	}
	return sentence(para)
}

// trailer matches git trailer lines: hyphenated keys such as Signed-off-by
// or Co-authored-by, and the common one-word ones. "Note: ..." is prose.
var trailer = regexp.MustCompile(`^(?:[A-Za-z]+(?:-[A-Za-z]+)+|Fixes|Closes|Resolves|Refs|Cc|Link|Bug|Issue|Change-Id):\s`)

func changes(c prompt.Commit) string {
	// The request lists a long commit's files only in part; its totals
	// count them all.
	var kept, skipped []prompt.File
	for _, f := range c.Files {
		if f.Skip != "" {
			skipped = append(skipped, f)
		} else {
			kept = append(kept, f)
		}
	}
	t := c.Totals
	if t == (prompt.Totals{}) {
		t = prompt.TotalsOf(c.Files) // a commit built in code, not read from a request
	}
	keptTotal := max(t.Files-t.Skipped, len(kept))
	var out []string
	if keptTotal > 0 {
		s := fmt.Sprintf("Changes %s in %s (+%d/-%d)", plural(keptTotal, "file"), directories(kept), t.Added, t.Removed)
		funcs := touched(c.Diff)
		var acts []string
		for _, verb := range []struct {
			status byte
			word   string
		}{{'A', "adds"}, {'M', "modifies"}, {'R', "renames"}, {'D', "deletes"}} {
			var names []string
			for _, f := range kept {
				if f.Status != verb.status {
					continue
				}
				name := f.Path
				if fs := funcs[f.Path]; len(fs) > 0 {
					name += " (" + list(fs, 3) + ")"
				}
				names = append(names, name)
			}
			if len(names) > 0 {
				acts = append(acts, verb.word+" "+list(names, 4))
			}
		}
		if unlisted := keptTotal - len(kept); unlisted > 0 {
			acts = append(acts, fmt.Sprintf("changes %s more", plural(unlisted, "file")))
		}
		if len(acts) > 0 {
			s += ": " + strings.Join(acts, "; ")
		}
		out = append(out, s+".")
	}
	if len(skipped) > 0 {
		names := make([]string, len(skipped))
		for i, f := range skipped {
			names[i] = fmt.Sprintf("%s (%s)", f.Path, f.Skip)
		}
		out = append(out, "Leaves out "+listOf(names, max(t.Skipped, len(names)), 4)+".")
	}
	return strings.Join(out, " ")
}

// directories names where the change happened, most touched first.
func directories(files []prompt.File) string {
	count := map[string]int{}
	for _, f := range files {
		d := path.Dir(f.Path)
		if d == "." {
			d = "the repository root"
		}
		count[d]++
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

var (
	diffFile   = regexp.MustCompile(`(?m)^diff --git a/.* b/(.*)$`)
	hunkHeader = regexp.MustCompile(`^@@ [^@]* @@ (.+)$`)
	// A definition's name: after a keyword, or before an opening parenthesis.
	defKeyword = regexp.MustCompile(`\b(?:func|def|fn|class|struct|interface|type|enum|trait|impl|module|function|sub|procedure)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)`)
	callName   = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*\(`)
)

var notNames = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "catch": true, "func": true, "function": true, "sizeof": true, "import": true}

// touched reads the function names git put in each file's hunk headers.
func touched(diff string) map[string][]string {
	out := map[string][]string{}
	file := ""
	for _, line := range strings.Split(diff, "\n") {
		if m := diffFile.FindStringSubmatch(line); m != nil {
			file = m[1]
			continue
		}
		m := hunkHeader.FindStringSubmatch(line)
		if m == nil || file == "" {
			continue
		}
		name := defName(m[1])
		if name == "" {
			continue
		}
		seen := false
		for _, n := range out[file] {
			seen = seen || n == name
		}
		if !seen {
			out[file] = append(out[file], name)
		}
	}
	return out
}

func defName(header string) string {
	if m := defKeyword.FindStringSubmatch(header); m != nil {
		return m[1]
	}
	for _, m := range callName.FindAllStringSubmatch(header, -1) {
		if !notNames[m[1]] {
			return m[1]
		}
	}
	return ""
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
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
