// Package prompt writes the commit-summary request and reads its answer.
// Commits are delimited by their full hashes and answered as a JSON array
// keyed by hash, so several commits can share one request and every answer
// is matched back to its commit, never by position.
package prompt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/provider"
)

// Version names this prompt in the cache: change the wording, bump it, and
// summaries written for the old wording are no longer served.
const Version = "summarize-v2"

// Earlier are the versions before Version whose summaries are served as
// they are: their text answers the same question, and what v2 added (the
// kind of change) comes from the rules for them. A commit is paid once.
var Earlier = []string{"summarize-v1"}

// MaxOutputTokens bounds one commit's answer.
const MaxOutputTokens = 300

var system = `You write changelog entries for git commits.
For each commit you are given, write a summary of one to three sentences for a
developer skimming a changelog: what changed and why, in the present tense,
naming the parts of the code touched. Use the commit message and the diff; do
not invent details the diff does not show. Some files may be listed as skipped
(lockfiles, vendored, generated or binary files) and a diff may be cut: say
nothing about what you cannot see.

Also classify each commit for release notes: "type" is one of ` + strings.Join(committype.Types, ", ") + `;
"scope" is the area it changes in a word or a path ("" when there is none);
"breaking" is true only when users of the code must change something.

Answer with only a JSON array, one object per commit, using each commit's full
hash (40 or 64 hex digits) exactly as given:
[{"commit": "<full hash>", "summary": "<summary>", "type": "<type>", "scope": "<scope>", "breaking": false}]`

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

	// Totals is what the request states about all of Files. Request
	// computes it; Parse reads it back, since long lists are shortened.
	Totals Totals
}

// Totals sums up a commit's changed files.
type Totals struct {
	Files, Added, Removed, Skipped int
}

// TotalsOf sums up files; lines count in the files that are diffed.
func TotalsOf(files []File) Totals {
	t := Totals{Files: len(files)}
	for _, f := range files {
		if f.Skip != "" {
			t.Skipped++
			continue // never diffed: its lines are not counted
		}
		t.Added += f.Added
		t.Removed += f.Removed
	}
	return t
}

// The lists are capped so that a 10,000-file commit cannot crowd out its
// diff; every skipped path is named up to a generous cap, then counted by reason.
const (
	maxListedFiles   = 60
	maxListedSkipped = 200
)

// MaxMessageBytes bounds the commit message sent. A message is a few lines;
// one of megabytes (a pasted log, a generated changelog) would crowd out the
// diff and could not fit in any request.
const MaxMessageBytes = 8 << 10

// CutMessage keeps at most MaxMessageBytes of a message, ending at a line
// break when one is near, and ends with a note of what was cut.
func CutMessage(msg string) string {
	if len(msg) <= MaxMessageBytes {
		return msg
	}
	end := MaxMessageBytes
	if i := strings.LastIndexByte(msg[:end], '\n'); i >= end/2 {
		end = i
	}
	for end > 0 && !utf8.RuneStart(msg[end]) {
		end--
	}
	return msg[:end] + fmt.Sprintf("\n[digest: message cut to %d of %d bytes]", end, len(msg))
}

// Request builds the request for commits.
func Request(model string, commits []Commit) provider.Request {
	var b strings.Builder
	b.WriteString(Header(len(commits)))
	for _, c := range commits {
		writeCommit(&b, c)
	}
	return provider.Request{
		Model:     model,
		System:    system,
		Messages:  []provider.Message{{Role: "user", Content: b.String()}},
		MaxTokens: MaxOutputTokens * len(commits),
		// The system prompt is every request's: worth caching where the
		// provider caches only on request and it is long enough.
		CachePrefix: true,
		Schema:      AnswerSchema,
	}
}

// AnswerSchema holds a model whose API takes a JSON schema to the answer
// the system prompt asks for, wrapped in an object (OpenAI's strict mode
// takes an object at the root): {"commits": [...]}. ParseAnswer reads the
// array inside it as it reads a bare one.
var AnswerSchema = &provider.Schema{Name: "commit_summaries", JSON: answerSchema()}

func answerSchema() json.RawMessage {
	str := map[string]any{"type": "string"}
	commit := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"commit":   str,
			"summary":  str,
			"type":     map[string]any{"type": "string", "enum": committype.Types},
			"scope":    str,
			"breaking": map[string]any{"type": "boolean"},
		},
		"required":             []string{"commit", "summary", "type", "scope", "breaking"},
		"additionalProperties": false,
	}
	b, err := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"commits": map[string]any{"type": "array", "items": commit}},
		"required":             []string{"commits"},
		"additionalProperties": false,
	})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}

// Header and Block are the parts Request joins: its opening line for n
// commits, and one commit's part. Every part ends with a blank line and the
// next begins a line with "=", so no BPE token of the joined text spans two
// parts: a request counts the sum of its parts' tokens, and each part can
// be counted on its own, by the worker that prepared its commit.
func Header(n int) string {
	if n == 1 {
		return "Summarize this commit.\n\n"
	}
	return fmt.Sprintf("Summarize these %d commits.\n\n", n)
}

// Block is one commit's part of a request; see Header.
func Block(c Commit) string {
	var b strings.Builder
	writeCommit(&b, c)
	return b.String()
}

func writeCommit(b *strings.Builder, c Commit) {
	fmt.Fprintf(b, "=== commit %s ===\n", c.Hash)
	fmt.Fprintf(b, "Author: %s\nDate: %s\n\n", c.Author, c.Date)
	for _, line := range strings.Split(c.Message, "\n") {
		b.WriteString("    " + line + "\n")
	}
	t := TotalsOf(c.Files)
	fmt.Fprintf(b, "\nFiles: %d changed, +%d -%d, %d skipped\n", t.Files, t.Added, t.Removed, t.Skipped)
	listed := 0
	for _, f := range c.Files {
		if f.Skip != "" {
			continue
		}
		if listed == maxListedFiles {
			fmt.Fprintf(b, "  ... and %d more files\n", t.Files-t.Skipped-listed)
			break
		}
		fmt.Fprintf(b, "  %c %s +%d -%d\n", f.Status, f.Path, f.Added, f.Removed)
		listed++
	}
	if t.Skipped > 0 {
		b.WriteString("Skipped, not in the diff:\n")
		listed = 0
		unlisted := map[string]int{}
		for _, f := range c.Files {
			if f.Skip == "" {
				continue
			}
			if listed < maxListedSkipped {
				fmt.Fprintf(b, "  %c %s (%s)\n", f.Status, f.Path, f.Skip)
				listed++
			} else {
				unlisted[f.Skip]++
			}
		}
		if len(unlisted) > 0 {
			reasons := make([]string, 0, len(unlisted))
			for r, n := range unlisted {
				reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
			}
			sort.Strings(reasons)
			fmt.Fprintf(b, "  ... and %d more: %s\n", t.Skipped-listed, strings.Join(reasons, ", "))
		}
	}
	b.WriteString("\n--- diff ---\n")
	b.WriteString(c.Diff)
	fmt.Fprintf(b, "=== end %s ===\n\n", c.Hash)
}

var commitHeader = regexp.MustCompile(`(?m)^=== commit ([0-9a-f]{40}(?:[0-9a-f]{24})?) ===\n`)
var (
	totalsLine  = regexp.MustCompile(`^Files: (\d+) changed, \+(\d+) -(\d+), (\d+) skipped$`)
	fileLine    = regexp.MustCompile(`^  ([AMDR]) (.+) \+(\d+) -(\d+)$`)
	skippedLine = regexp.MustCompile(`^  ([AMDR]) (.+) \(([^()]+)\)$`)
)

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
		inFiles, inSkipped := false, false
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "Author: ") && c.Author == "" && len(msg) == 0:
				c.Author = strings.TrimPrefix(l, "Author: ")
			case strings.HasPrefix(l, "Date: ") && c.Date == "" && len(msg) == 0:
				c.Date = strings.TrimPrefix(l, "Date: ")
			case strings.HasPrefix(l, "    ") && !inFiles:
				msg = append(msg, l[4:])
			case !inFiles && totalsLine.MatchString(l):
				m := totalsLine.FindStringSubmatch(l)
				c.Totals = Totals{Files: atoi(m[1]), Added: atoi(m[2]), Removed: atoi(m[3]), Skipped: atoi(m[4])}
				inFiles = true
			case inFiles && l == "Skipped, not in the diff:":
				inSkipped = true
			case inSkipped:
				if m := skippedLine.FindStringSubmatch(l); m != nil {
					c.Files = append(c.Files, File{Status: m[1][0], Path: m[2], Skip: m[3]})
				}
			case inFiles:
				if m := fileLine.FindStringSubmatch(l); m != nil {
					c.Files = append(c.Files, File{Status: m[1][0], Path: m[2], Added: atoi(m[3]), Removed: atoi(m[4])})
				}
			}
		}
		c.Message = strings.Join(msg, "\n")
		out = append(out, c)
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// Answer is one commit's summary as the model gave it, with the kind of
// change: Type as given (checked by the caller), Breaking nil when the
// model did not say or said something else than true or false.
type Answer struct {
	Commit   string `json:"commit"`
	Summary  string `json:"summary"`
	Type     string `json:"type,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Breaking *bool  `json:"breaking,omitempty"`
}

// wireAnswer reads an answer leniently: a classification field of the
// wrong JSON type is left out rather than failing the whole answer.
type wireAnswer struct {
	Commit   string          `json:"commit"`
	Summary  string          `json:"summary"`
	Type     json.RawMessage `json:"type"`
	Scope    json.RawMessage `json:"scope"`
	Breaking json.RawMessage `json:"breaking"`
}

func (w wireAnswer) answer() Answer {
	a := Answer{Commit: w.Commit, Summary: w.Summary}
	var s string
	if json.Unmarshal(w.Type, &s) == nil {
		a.Type = strings.TrimSpace(s)
	}
	s = ""
	if json.Unmarshal(w.Scope, &s) == nil {
		a.Scope = strings.TrimSpace(s)
	}
	var b bool
	if json.Unmarshal(w.Breaking, &b) == nil {
		a.Breaking = &b
	}
	return a
}

// FormatAnswer writes answers in the form the prompt asks for.
func FormatAnswer(answers []Answer) string {
	b, _ := json.Marshal(answers)
	return string(b)
}

// ParseAnswer matches a model's answer to the commits asked about, each
// with its summary trimmed. Only full hashes that were asked for are
// accepted; anything else is reported in missing so it can be asked
// again, never guessed.
func ParseAnswer(text string, asked []string) (answers map[string]Answer, missing []string) {
	answers = make(map[string]Answer)
	want := make(map[string]bool, len(asked))
	for _, h := range asked {
		want[h] = true
	}
	if found, ok := jsonAnswers(text); ok {
		for _, w := range found {
			a := w.answer()
			h := strings.ToLower(strings.TrimSpace(a.Commit))
			a.Commit, a.Summary = h, strings.TrimSpace(a.Summary)
			if want[h] && a.Summary != "" {
				if _, dup := answers[h]; !dup {
					answers[h] = a
				}
			}
		}
	} else if len(asked) == 1 && !strings.ContainsAny(text, "[{`") {
		// A model asked about one commit sometimes answers in plain prose:
		// with a single commit there is nobody else it could be about. Text
		// with JSON or a code fence in it is a garbled answer, not prose.
		if s := strings.TrimSpace(text); s != "" {
			answers[asked[0]] = Answer{Commit: asked[0], Summary: s}
		}
	}
	for _, h := range asked {
		if _, ok := answers[h]; !ok {
			missing = append(missing, h)
		}
	}
	return answers, missing
}

// jsonAnswers finds the answer array among whatever models wrap it in
// (code fences, chatter, bracketed asides): the first '[' from which a JSON
// array of answers decodes.
func jsonAnswers(text string) ([]wireAnswer, bool) {
	for i := 0; i < len(text); i++ {
		j := strings.IndexByte(text[i:], '[')
		if j < 0 {
			break
		}
		i += j
		var answers []wireAnswer
		if err := json.NewDecoder(strings.NewReader(text[i:])).Decode(&answers); err == nil {
			return answers, true
		}
	}
	return nil, false
}
