package prompt_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/tokenizer"
)

const (
	h1 = "1111111111111111111111111111111111111111"
	h2 = "2b7e151628aed2a6abf7158809cf4f3c762e7160"
	h3 = "3c6e0b8a9c15224a8228b9a98ca1531d3e3b7e4f"
	h4 = "4444444444444444444444444444444444444444"
)

func commit1() prompt.Commit {
	return prompt.Commit{
		Hash:   h1,
		Author: "Ada Lovelace",
		Date:   "2024-03-01T12:00:00Z",
		Message: "server: handle empty requests\n\nAn empty body used to panic. Now it is a 400.\n\n" +
			"  indented line kept as is\n\nSigned-off-by: Ada Lovelace <ada@example.com>",
		Files: []prompt.File{
			{Status: 'M', Path: "server/server.go", Added: 12, Removed: 3},
			{Status: 'A', Path: "server/server_test.go", Added: 40},
			{Status: 'D', Path: "old/legacy.go", Removed: 99},
			{Status: 'R', Path: "docs/new name.md", Added: 1, Removed: 1},
			{Status: 'M', Path: "go.sum", Added: 4, Removed: 2, Skip: "lockfile"},
			{Status: 'A', Path: "vendor/x/y.go", Added: 7, Skip: "vendored"},
		},
		Diff: "diff --git a/server/server.go b/server/server.go\n--- a/server/server.go\n+++ b/server/server.go\n" +
			"@@ -10,6 +10,7 @@ func (s *Server) Handle(w http.ResponseWriter) {\n+\tif r.Body == nil {\n-\tpanic(x)\n \treturn\n",
	}
}

func commit2() prompt.Commit {
	return prompt.Commit{
		Hash:    h2,
		Author:  "Grace Hopper <grace@example.com>",
		Date:    "2024-03-02T08:30:00+02:00",
		Message: "one line, ending in a newline as git writes it\n",
		Files:   []prompt.File{{Status: 'M', Path: "a.py", Added: 1, Removed: 1}},
		// The diff mentions another commit's end marker; only its own ends it.
		Diff: "diff --git a/a.py b/a.py\n+# see === end " + h1 + " ===\n=== end " + h3 + " ===\n-x\n",
	}
}

func commit3() prompt.Commit {
	return prompt.Commit{
		Hash:    h3,
		Author:  "Édouard Lucas",
		Date:    "2024-03-03T00:00:00Z",
		Message: "Files: not the file list\n\n--- diff ---\nstill the message\n\n\nAuthor: not the author",
		Files:   nil,
		Diff:    "",
	}
}

func TestRequestParseRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		commits []prompt.Commit
	}{
		{"one commit", []prompt.Commit{commit1()}},
		{"three commits", []prompt.Commit{commit1(), commit2(), commit3()}},
		{"three commits, other order", []prompt.Commit{commit3(), commit2(), commit1()}},
		{"diff without trailing newline", []prompt.Commit{{Hash: h4, Author: "a", Date: "d", Message: "m", Diff: "+no newline"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := prompt.Request("some-model", tt.commits)
			if req.Model != "some-model" {
				t.Errorf("Model = %q", req.Model)
			}
			if req.System == "" || !strings.Contains(req.System, "JSON array") {
				t.Errorf("System prompt does not ask for a JSON array: %q", req.System)
			}
			if want := prompt.MaxOutputTokens * len(tt.commits); req.MaxTokens != want {
				t.Errorf("MaxTokens = %d, want %d", req.MaxTokens, want)
			}
			if len(req.Messages) != 1 || req.Messages[0].Role != "user" {
				t.Fatalf("Messages = %+v, want one user message", req.Messages)
			}
			text := req.Messages[0].Content
			for _, c := range tt.commits {
				if !strings.Contains(text, "=== commit "+c.Hash+" ===\n") || !strings.Contains(text, "=== end "+c.Hash+" ===\n") {
					t.Errorf("commit %s is not delimited by its full hash", c.Hash)
				}
			}
			got := prompt.Parse(text)
			if len(got) != len(tt.commits) {
				t.Fatalf("Parse found %d commits, want %d", len(got), len(tt.commits))
			}
			for i, c := range tt.commits {
				if want := asParsed(c); !reflect.DeepEqual(got[i], want) {
					t.Errorf("commit %d:\n got %#v\nwant %#v", i, got[i], want)
				}
			}
		})
	}
}

// asParsed is what Parse gives back for c: the files it lists (kept ones,
// then skipped ones without line counts, which are never diffed) and the
// totals the request states.
func asParsed(c prompt.Commit) prompt.Commit {
	var kept, skipped []prompt.File
	c.Totals = prompt.Totals{Files: len(c.Files)}
	for _, f := range c.Files {
		if f.Skip == "" {
			c.Totals.Added += f.Added
			c.Totals.Removed += f.Removed
			kept = append(kept, f)
			continue
		}
		c.Totals.Skipped++
		f.Added, f.Removed = 0, 0
		skipped = append(skipped, f)
	}
	c.Files = append(kept, skipped...)
	return c
}

func TestRequestSaysHowMany(t *testing.T) {
	one := prompt.Request("m", []prompt.Commit{commit1()}).Messages[0].Content
	if !strings.HasPrefix(one, "Summarize this commit.") {
		t.Errorf("one commit: %q", one[:40])
	}
	three := prompt.Request("m", []prompt.Commit{commit1(), commit2(), commit3()}).Messages[0].Content
	if !strings.HasPrefix(three, "Summarize these 3 commits.") {
		t.Errorf("three commits: %q", three[:40])
	}
	// The totals count every file; lines only in the files that are diffed.
	if !strings.Contains(one, "Files: 6 changed, +53 -103, 2 skipped\n") {
		t.Errorf("no file totals in %q", one)
	}
	if !strings.Contains(one, "Skipped, not in the diff:\n  M go.sum (lockfile)\n") {
		t.Errorf("skipped file not listed with its reason")
	}
}

func TestRequestListsAtMostSixtyFiles(t *testing.T) {
	c := prompt.Commit{Hash: h4, Author: "a", Date: "d", Message: "many files", Diff: "+x\n"}
	for i := range 100 {
		c.Files = append(c.Files, prompt.File{Status: 'A', Path: fmt.Sprintf("f%03d.txt", i), Added: 1})
	}
	text := prompt.Request("m", []prompt.Commit{c}).Messages[0].Content
	if !strings.Contains(text, "Files: 100 changed, +100 -0, 0 skipped\n") || !strings.Contains(text, "  ... and 40 more files\n") {
		t.Errorf("the long file list is not summarized:\n%s", text)
	}
	got := prompt.Parse(text)
	if len(got) != 1 || len(got[0].Files) != 60 || got[0].Files[59].Path != "f059.txt" || got[0].Diff != "+x\n" ||
		got[0].Totals != (prompt.Totals{Files: 100, Added: 100}) {
		t.Errorf("Parse = %+v", got)
	}
}

func TestRequestNamesSkippedFilesBeyondTheFileList(t *testing.T) {
	c := prompt.Commit{Hash: h4, Author: "a", Date: "d", Message: "vendor a library", Diff: "+x\n"}
	for i := range 300 {
		c.Files = append(c.Files, prompt.File{Status: 'A', Path: fmt.Sprintf("vendor/lib/f%03d.go", i), Skip: "vendored"})
	}
	c.Files = append(c.Files, prompt.File{Status: 'A', Path: "yarn.lock", Skip: "lockfile"}, prompt.File{Status: 'M', Path: "main.go", Added: 2})
	text := prompt.Request("m", []prompt.Commit{c}).Messages[0].Content
	for _, want := range []string{
		"Files: 302 changed, +2 -0, 301 skipped\n  M main.go +2 -0\nSkipped, not in the diff:\n",
		"  A vendor/lib/f199.go (vendored)\n  ... and 101 more: 1 lockfile, 100 vendored\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("request lacks %q:\n%s", want, text[:min(len(text), 600)])
		}
	}
	got := prompt.Parse(text)[0]
	if got.Totals != (prompt.Totals{Files: 302, Added: 2, Skipped: 301}) || len(got.Files) != 201 || got.Files[0].Path != "main.go" {
		t.Errorf("Parse: totals %+v, %d files listed", got.Totals, len(got.Files))
	}
}

func TestParseIgnoresIncompleteCommits(t *testing.T) {
	full := prompt.Request("m", []prompt.Commit{commit1(), commit2()}).Messages[0].Content
	// Cut before the second commit's end marker: only the first is whole.
	cut := full[:strings.Index(full, "=== end "+h2)]
	got := prompt.Parse(cut)
	if len(got) != 1 || got[0].Hash != h1 {
		t.Errorf("Parse of a cut request = %v commits", len(got))
	}
	// A short or uppercase hash is not a commit header.
	for _, text := range []string{
		"=== commit 1111111 ===\n=== end 1111111 ===\n",
		"=== commit " + strings.ToUpper(h2) + " ===\n=== end " + strings.ToUpper(h2) + " ===\n",
		"",
		"no commits here",
	} {
		if got := prompt.Parse(text); len(got) != 0 {
			t.Errorf("Parse(%q) = %+v, want none", text, got)
		}
	}
}

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		asked   []string
		want    map[string]string
		missing []string
	}{
		{
			name:  "plain array",
			text:  `[{"commit": "` + h1 + `", "summary": "Adds a thing."}, {"commit": "` + h2 + `", "summary": "Fixes a bug."}]`,
			asked: []string{h1, h2},
			want:  map[string]string{h1: "Adds a thing.", h2: "Fixes a bug."},
		},
		{
			name:  "order does not matter",
			text:  `[{"commit": "` + h2 + `", "summary": "Two."}, {"commit": "` + h1 + `", "summary": "One."}]`,
			asked: []string{h1, h2},
			want:  map[string]string{h1: "One.", h2: "Two."},
		},
		{
			name:  "fences and chatter",
			text:  "Sure! Here are the summaries:\n\n```json\n[\n  {\"commit\": \"" + h1 + "\", \"summary\": \"Adds a thing.\"}\n]\n```\nLet me know if you need more.",
			asked: []string{h1},
			want:  map[string]string{h1: "Adds a thing."},
		},
		{
			name:  "uppercase and padded hash",
			text:  `[{"commit": "  ` + strings.ToUpper(h2) + ` ", "summary": "  Fixes a bug.  "}]`,
			asked: []string{h2},
			want:  map[string]string{h2: "Fixes a bug."},
		},
		{
			name:    "unknown hash ignored, asked one missing",
			text:    `[{"commit": "` + h3 + `", "summary": "Not asked."}]`,
			asked:   []string{h1},
			want:    map[string]string{},
			missing: []string{h1},
		},
		{
			name:    "short hash is not matched",
			text:    `[{"commit": "` + h1[:12] + `", "summary": "Close, but no."}, {"commit": "` + h2 + `", "summary": "Yes."}]`,
			asked:   []string{h1, h2},
			want:    map[string]string{h2: "Yes."},
			missing: []string{h1},
		},
		{
			name:  "duplicate entries: first wins",
			text:  `[{"commit": "` + h1 + `", "summary": "First."}, {"commit": "` + h1 + `", "summary": "Second."}]`,
			asked: []string{h1},
			want:  map[string]string{h1: "First."},
		},
		{
			name:  "empty duplicate does not hide a later one",
			text:  `[{"commit": "` + h1 + `", "summary": " "}, {"commit": "` + h1 + `", "summary": "Real."}]`,
			asked: []string{h1},
			want:  map[string]string{h1: "Real."},
		},
		{
			name:    "empty summary counts as missing",
			text:    `[{"commit": "` + h1 + `", "summary": ""}, {"commit": "` + h2 + `", "summary": "   "}]`,
			asked:   []string{h1, h2},
			want:    map[string]string{},
			missing: []string{h1, h2},
		},
		{
			name:    "partial answer",
			text:    `[{"commit": "` + h2 + `", "summary": "Two."}]`,
			asked:   []string{h1, h2, h3},
			want:    map[string]string{h2: "Two."},
			missing: []string{h1, h3},
		},
		{
			name:  "prose for one commit",
			text:  "  Adds retries to the HTTP client.\n",
			asked: []string{h1},
			want:  map[string]string{h1: "Adds retries to the HTTP client."},
		},
		{
			name:    "prose for several commits",
			text:    "Adds retries to the HTTP client.",
			asked:   []string{h1, h2},
			want:    map[string]string{},
			missing: []string{h1, h2},
		},
		{
			name:    "garbage for several commits",
			text:    "[{\"commit\": oops",
			asked:   []string{h1, h2, h3},
			want:    map[string]string{},
			missing: []string{h1, h2, h3},
		},
		{
			name:    "broken JSON for one commit is not prose",
			text:    `[{"commit": "` + h1 + `", "summary": "Adds`,
			asked:   []string{h1},
			want:    map[string]string{},
			missing: []string{h1},
		},
		{
			name:    "an object instead of an array",
			text:    `{"commit": "` + h1 + `", "summary": "Adds."}`,
			asked:   []string{h1},
			want:    map[string]string{},
			missing: []string{h1},
		},
		{
			name:    "bare fence for one commit",
			text:    "```\nnot json\n```",
			asked:   []string{h1},
			want:    map[string]string{},
			missing: []string{h1},
		},
		{
			name:    "empty answer",
			text:    "   ",
			asked:   []string{h1},
			want:    map[string]string{},
			missing: []string{h1},
		},
		{
			name:  "nothing asked",
			text:  `[{"commit": "` + h1 + `", "summary": "Unasked."}]`,
			asked: nil,
			want:  map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers, missing := prompt.ParseAnswer(tt.text, tt.asked)
			got := summariesOf(answers)
			if !maps.Equal(got, tt.want) {
				t.Errorf("summaries = %v, want %v", got, tt.want)
			}
			if !slices.Equal(missing, tt.missing) {
				t.Errorf("missing = %v, want %v", missing, tt.missing)
			}
			checkAnswer(t, got, missing, tt.asked)
		})
	}
}

// TestParseAnswerJSONAfterChatter: when a model asked about one commit wraps
// its JSON in chatter that defeats jsonArray, the JSON must not be stored as
// a prose summary.
func TestParseAnswerJSONAfterChatter(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // "" for missing
	}{
		{"bracket in trailing chatter", "Here you go:\n```json\n[{\"commit\": \"" + h1 + "\", \"summary\": \"Adds retries.\"}]\n```\nHope this helps [1].", "Adds retries."},
		{"bracket in leading chatter", "Summary [v2]:\n[{\"commit\": \"" + h1 + "\", \"summary\": \"Adds retries.\"}]", "Adds retries."},
		{"cut off by the output limit", "Here is the summary:\n```json\n[{\"commit\": \"" + h1 + "\", \"summary\": \"Adds retries to", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers, missing := prompt.ParseAnswer(tt.text, []string{h1})
			got := summariesOf(answers)
			checkAnswer(t, got, missing, []string{h1})
			if s := got[h1]; s != tt.want {
				t.Errorf("summary = %q, want %q", s, tt.want)
			}
		})
	}
}

func TestFormatAnswerParsesBack(t *testing.T) {
	answers := []prompt.Answer{{Commit: h1, Summary: "One \"quoted\" [bracketed] summary."}, {Commit: h2, Summary: "Two\nlines."}}
	got, missing := prompt.ParseAnswer(prompt.FormatAnswer(answers), []string{h1, h2})
	if len(missing) != 0 || got[h1] != answers[0] || got[h2] != answers[1] {
		t.Errorf("round trip: %v, missing %v", got, missing)
	}
}

// TestParseAnswerKinds: the kind of change comes back as given, and a
// field of the wrong JSON type is left out without losing the summary.
func TestParseAnswerKinds(t *testing.T) {
	yes := true
	text := `[{"commit": "` + h1 + `", "summary": "Adds X.", "type": "feat", "scope": " api ", "breaking": true},
		{"commit": "` + h2 + `", "summary": "Fixes Y.", "type": 7, "scope": ["x"], "breaking": "yes"}]`
	got, missing := prompt.ParseAnswer(text, []string{h1, h2})
	if len(missing) != 0 {
		t.Fatalf("missing %v", missing)
	}
	if a := got[h1]; a.Type != "feat" || a.Scope != "api" || a.Breaking == nil || *a.Breaking != yes {
		t.Errorf("a full answer: %+v", a)
	}
	if a := got[h2]; a.Summary != "Fixes Y." || a.Type != "" || a.Scope != "" || a.Breaking != nil {
		t.Errorf("fields of the wrong type: %+v, want the summary alone", a)
	}
}

func summariesOf(answers map[string]prompt.Answer) map[string]string {
	out := make(map[string]string, len(answers))
	for h, a := range answers {
		out[h] = a.Summary
		if a.Commit != h {
			panic("an answer filed under another hash")
		}
	}
	return out
}

// checkAnswer checks ParseAnswer's promises: nothing is assigned to a hash
// that was not asked, and every asked hash is either answered or missing.
func checkAnswer(t *testing.T, got map[string]string, missing, asked []string) {
	t.Helper()
	want := map[string]bool{}
	for _, h := range asked {
		want[h] = true
	}
	for h, s := range got {
		if !want[h] {
			t.Errorf("summary assigned to %q, which was not asked", h)
		}
		if strings.TrimSpace(s) == "" {
			t.Errorf("empty summary for %s", h)
		}
	}
	seen := map[string]bool{}
	for _, h := range missing {
		if !want[h] {
			t.Errorf("missing lists %q, which was not asked", h)
		}
		if _, ok := got[h]; ok {
			t.Errorf("%s is both answered and missing", h)
		}
		seen[h] = true
	}
	for h := range want {
		if _, ok := got[h]; !ok && !seen[h] {
			t.Errorf("%s is neither answered nor missing", h)
		}
	}
}

func FuzzParseAnswer(f *testing.F) {
	f.Add(`[{"commit": "`+h1+`", "summary": "One."}, {"commit": "`+h2+`", "summary": "Two."}]`, h1+","+h2)
	f.Add("```json\n[{\"commit\": \""+strings.ToUpper(h1)+"\", \"summary\": \"x\"}]\n```", h1)
	f.Add("Just prose.", h1)
	f.Add("Just prose.", h1+","+h2)
	f.Add(`[{"commit": "`+h3+`", "summary": "Unasked."}]`, h1)
	f.Add(`[{"commit": "`+h1+`", "summary": ""}]`, h1)
	f.Add("[", "")
	f.Add("] [", h1+",,"+h1)
	f.Add(`[{"commit": 1, "summary": ["x"]}]`, h1)
	f.Fuzz(func(t *testing.T, text, askedList string) {
		var asked []string
		if askedList != "" {
			asked = strings.Split(askedList, ",")
		}
		got, missing := prompt.ParseAnswer(text, asked)
		checkAnswer(t, summariesOf(got), missing, asked)
	})
}

func FuzzParse(f *testing.F) {
	f.Add(prompt.Request("m", []prompt.Commit{commit1(), commit2(), commit3()}).Messages[0].Content)
	f.Add(prompt.Request("m", []prompt.Commit{commit2()}).Messages[0].Content)
	f.Add("=== commit " + h1 + " ===\n=== end " + h1 + " ===")
	f.Add("=== commit " + h1 + " ===\nFiles: 1\n  A x +1 -2 (skipped: \n--- diff ---\n=== end " + h1 + " ===")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range prompt.Parse(text) {
			if len(c.Hash) != 40 || !strings.Contains(text, "=== commit "+c.Hash+" ===\n") || !strings.Contains(text, "=== end "+c.Hash+" ===") {
				t.Fatalf("Parse returned commit %q not delimited in the text", c.Hash)
			}
			for _, f := range c.Files {
				if !strings.ContainsRune("AMDR", rune(f.Status)) || f.Added < 0 || f.Removed < 0 {
					t.Fatalf("odd file %+v", f)
				}
			}
		}
	})
}

func TestCutMessage(t *testing.T) {
	short := "Fix the retry loop\n\nIt never gave up."
	if got := prompt.CutMessage(short); got != short {
		t.Errorf("a short message changed: %q", got)
	}
	lines := strings.Repeat("a log line that someone pasted\n", 2000)
	got := prompt.CutMessage("Subject\n\n" + lines)
	body, note, ok := strings.Cut(got, "\n[digest: message cut to ")
	if !ok || len(body) > prompt.MaxMessageBytes || !strings.HasSuffix(body, "pasted") {
		t.Errorf("want whole lines within %d bytes and a note, got %d bytes ending %q", prompt.MaxMessageBytes, len(body), got[len(got)-60:])
	}
	if want := fmt.Sprintf("%d of %d bytes]", len(body), len("Subject\n\n"+lines)); note != want {
		t.Errorf("note %q, want %q", note, want)
	}
	// One long line of multi-byte runes: cut inside the line, never inside a rune.
	got = prompt.CutMessage(strings.Repeat("é", prompt.MaxMessageBytes))
	if !utf8.ValidString(got) || len(got) > prompt.MaxMessageBytes+60 {
		t.Errorf("cut a rune or kept too much: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

// A request counts the sum of its parts: the header, and each commit's
// block with its diff counted apart, so that a dry run can count each
// commit once, where it was prepared. Diffs end at a line break whatever
// their last line holds.
func TestRequestCountsTheSumOfItsParts(t *testing.T) {
	lasts := []string{"+}\n", "+    \n", "-\tx := 1\r\n", "\\ No newline at end of file\n", "+// ===\n", " \n\n",
		"[digest: diff cut to 3989 tokens (limit 4000); cut: table.go (partly)]\n", "+émoji 🎉 done\n", "+12345\n"}
	rng := rand.New(rand.NewPCG(1, 1))
	for _, vocab := range tokenizer.Names {
		tok, err := tokenizer.New(vocab)
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 40 {
			var commits []prompt.Commit
			for i := range 1 + rng.IntN(4) {
				var diff strings.Builder
				if rng.IntN(5) > 0 { // some commits have no diff at all
					fmt.Fprintf(&diff, "diff --git a/f%d.go b/f%d.go\n@@ -1,2 +1,3 @@\n", i, i)
					for range rng.IntN(6) {
						diff.WriteString(lasts[rng.IntN(len(lasts))])
					}
					diff.WriteString(lasts[rng.IntN(len(lasts))])
				}
				commits = append(commits, prompt.Commit{Hash: fmt.Sprintf("%040d", trial*10+i), Author: "Ada", Date: "2026-03-01T12:00:00Z",
					Message: "Change things\n\nBecause.", Files: []prompt.File{{Status: 'M', Path: fmt.Sprintf("f%d.go", i), Added: 2, Removed: 1}},
					Diff: diff.String()})
			}
			req := prompt.Request("m", commits)
			want := tok.Count(req.Messages[0].Content)
			got := tok.Count(prompt.Header(len(commits)))
			for _, c := range commits {
				diff := c.Diff
				c.Diff = ""
				got += tok.Count(prompt.Block(c)) + tok.Count(diff)
			}
			if got != want {
				t.Fatalf("%s: the parts count %d tokens, the request %d:\n%s", vocab, got, want, req.Messages[0].Content)
			}
		}
	}
}
