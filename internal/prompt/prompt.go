// Package prompt writes the commit-summary request and reads its answer.
// Commits are delimited by their full hashes and answered as a JSON array
// keyed by hash, so several commits can share one request and every answer
// is matched back to its commit, never by position.
package prompt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// Version names this prompt in the cache: change the wording, bump it, and
// summaries written for the old wording are no longer served.
const Version = "summarize-v1"

// MaxOutputTokens bounds one commit's answer.
const MaxOutputTokens = 300

const system = `You write changelog entries for git commits.
For each commit you are given, write a summary of one to three sentences for a
developer skimming a changelog: what changed and why, in the present tense,
naming the parts of the code touched. Use the commit message and the diff; do
not invent details the diff does not show. Some files may be listed as skipped
(lockfiles, vendored, generated or binary files) and a diff may be cut: say
nothing about what you cannot see.

Answer with only a JSON array, one object per commit, using each commit's full
40-character hash exactly as given:
[{"commit": "<full hash>", "summary": "<summary>"}]`

// File is one changed file as listed in the prompt.
type File struct {
	Status  byte // A, M, D or R
	Path    string
	Added   int
	Removed int
	Skip    string // why its diff is not included, or ""
}

// Commit is everything the model is told about one commit.
type Commit struct {
	Hash    string
	Author  string
	Date    string
	Message string
	Files   []File
	Diff    string // unified diff, already cut to the budget
}

// maxListedFiles keeps a 10,000-file commit's file list from crowding out its diff.
const maxListedFiles = 60

// Request builds the request for commits.
func Request(model string, commits []Commit) provider.Request {
	var b strings.Builder
	if len(commits) == 1 {
		b.WriteString("Summarize this commit.\n\n")
	} else {
		fmt.Fprintf(&b, "Summarize these %d commits.\n\n", len(commits))
	}
	for _, c := range commits {
		writeCommit(&b, c)
	}
	return provider.Request{
		Model:     model,
		System:    system,
		Messages:  []provider.Message{{Role: "user", Content: b.String()}},
		MaxTokens: MaxOutputTokens * len(commits),
	}
}

func writeCommit(b *strings.Builder, c Commit) {
	fmt.Fprintf(b, "=== commit %s ===\n", c.Hash)
	fmt.Fprintf(b, "Author: %s\nDate: %s\n\n", c.Author, c.Date)
	for _, line := range strings.Split(c.Message, "\n") {
		b.WriteString("    " + line + "\n")
	}
	added, removed := 0, 0
	for _, f := range c.Files {
		added += f.Added
		removed += f.Removed
	}
	fmt.Fprintf(b, "\nFiles: %d changed, +%d -%d\n", len(c.Files), added, removed)
	for i, f := range c.Files {
		if i == maxListedFiles {
			fmt.Fprintf(b, "  ... and %d more files\n", len(c.Files)-i)
			break
		}
		fmt.Fprintf(b, "  %c %s +%d -%d", f.Status, f.Path, f.Added, f.Removed)
		if f.Skip != "" {
			fmt.Fprintf(b, " (skipped: %s)", f.Skip)
		}
		b.WriteByte('\n')
	}
	b.WriteString("\n--- diff ---\n")
	b.WriteString(c.Diff)
	fmt.Fprintf(b, "=== end %s ===\n\n", c.Hash)
}

var commitHeader = regexp.MustCompile(`(?m)^=== commit ([0-9a-f]{40}) ===\n`)
var fileLine = regexp.MustCompile(`^  ([AMDR]) (.+) \+(\d+) -(\d+)(?: \(skipped: ([^)]*)\))?$`)

// Parse reads the commits back out of a request's text. The offline provider
// answers from it, exactly as a hosted model reads the same text.
func Parse(text string) []Commit {
	var out []Commit
	for _, loc := range commitHeader.FindAllStringSubmatchIndex(text, -1) {
		hash := text[loc[2]:loc[3]]
		body := text[loc[1]:]
		end := strings.Index(body, "=== end "+hash+" ===")
		if end < 0 {
			continue
		}
		body = body[:end]
		c := Commit{Hash: hash}
		head, diff, _ := strings.Cut(body, "\n--- diff ---\n")
		c.Diff = diff
		lines := strings.Split(head, "\n")
		var msg []string
		inFiles := false
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "Author: ") && c.Author == "" && len(msg) == 0:
				c.Author = strings.TrimPrefix(l, "Author: ")
			case strings.HasPrefix(l, "Date: ") && c.Date == "" && len(msg) == 0:
				c.Date = strings.TrimPrefix(l, "Date: ")
			case strings.HasPrefix(l, "    ") && !inFiles:
				msg = append(msg, l[4:])
			case strings.HasPrefix(l, "Files: "):
				inFiles = true
			case inFiles:
				if m := fileLine.FindStringSubmatch(l); m != nil {
					f := File{Status: m[1][0], Path: m[2], Skip: m[5]}
					fmt.Sscan(m[3], &f.Added)
					fmt.Sscan(m[4], &f.Removed)
					c.Files = append(c.Files, f)
				}
			}
		}
		c.Message = strings.Join(msg, "\n")
		out = append(out, c)
	}
	return out
}

// Answer is one commit's summary as the model gave it.
type Answer struct {
	Commit  string `json:"commit"`
	Summary string `json:"summary"`
}

// FormatAnswer writes answers in the form the prompt asks for.
func FormatAnswer(answers []Answer) string {
	b, _ := json.Marshal(answers)
	return string(b)
}

// ParseAnswer matches a model's answer to the commits asked about. Only full
// hashes that were asked for are accepted; anything else is reported in
// missing so it can be asked again, never guessed.
func ParseAnswer(text string, asked []string) (summaries map[string]string, missing []string) {
	summaries = make(map[string]string)
	want := make(map[string]bool, len(asked))
	for _, h := range asked {
		want[h] = true
	}
	if answers, ok := jsonAnswers(text); ok {
		for _, a := range answers {
			h := strings.ToLower(strings.TrimSpace(a.Commit))
			s := strings.TrimSpace(a.Summary)
			if want[h] && s != "" {
				if _, dup := summaries[h]; !dup {
					summaries[h] = s
				}
			}
		}
	} else if len(asked) == 1 && !strings.ContainsAny(text, "[{`") {
		// A model asked about one commit sometimes answers in plain prose:
		// with a single commit there is nobody else it could be about. Text
		// with JSON or a code fence in it is a garbled answer, not prose.
		if s := strings.TrimSpace(text); s != "" {
			summaries[asked[0]] = s
		}
	}
	for _, h := range asked {
		if _, ok := summaries[h]; !ok {
			missing = append(missing, h)
		}
	}
	return summaries, missing
}

// jsonAnswers finds the answer array among whatever models wrap it in
// (code fences, chatter, bracketed asides): the first '[' from which a JSON
// array of answers decodes.
func jsonAnswers(text string) ([]Answer, bool) {
	for i := 0; i < len(text); i++ {
		j := strings.IndexByte(text[i:], '[')
		if j < 0 {
			break
		}
		i += j
		var answers []Answer
		if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&answers); err == nil {
			return answers, true
		}
	}
	return nil, false
}
