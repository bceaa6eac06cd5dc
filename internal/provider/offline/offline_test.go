package offline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/tokenizer"
)

const (
	h1 = "9fceb02d0ae598e95dc970b74767f19372d61af8"
	h2 = "e83c5163316f89bfbde7d9ab23ca2e25604af290"
)

func newProvider(t *testing.T) (*offline.Provider, *tokenizer.Tokenizer) {
	t.Helper()
	tok, err := tokenizer.New("")
	if err != nil {
		t.Fatal(err)
	}
	return offline.New(tok.Count), tok
}

func serverCommit() prompt.Commit {
	return prompt.Commit{
		Hash:   h1,
		Author: "Ada Lovelace",
		Date:   "2024-03-01T12:00:00Z",
		Message: "server: handle empty requests\n\n" +
			"An empty body used to panic the handler. Now it answers 400 instead.\n\n" +
			"Signed-off-by: Ada Lovelace <ada@example.com>\n",
		Files: []prompt.File{
			{Status: 'M', Path: "server/server.go", Added: 5, Removed: 2},
			{Status: 'A', Path: "cli/args.py", Added: 20},
			{Status: 'M', Path: "go.sum", Added: 3, Removed: 3, Skip: tokenizer.Lockfile},
			{Status: 'A', Path: "vendor/example.com/lib/lib.go", Added: 300, Skip: tokenizer.Vendored},
		},
		Diff: "diff --git a/server/server.go b/server/server.go\n" +
			"--- a/server/server.go\n+++ b/server/server.go\n" +
			"@@ -10,6 +10,7 @@ func (s *Server) Handle(w http.ResponseWriter) {\n" +
			" \tif r.Body == nil {\n-\t\tpanic(\"empty\")\n+\t\thttp.Error(w, \"empty\", 400)\n+\t\treturn\n \t}\n" +
			"diff --git a/cli/args.py b/cli/args.py\n" +
			"--- /dev/null\n+++ b/cli/args.py\n" +
			"@@ -1 +1 @@ def parse_args(argv):\n" +
			"+    return argv[1:]\n",
	}
}

func readmeCommit() prompt.Commit {
	return prompt.Commit{
		Hash:    h2,
		Author:  "Grace Hopper",
		Date:    "2024-03-02T08:00:00Z",
		Message: "Fix typo in README\n",
		Files:   []prompt.File{{Status: 'M', Path: "README.md", Added: 1, Removed: 1}},
		Diff:    "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-teh\n+the\n",
	}
}

func TestCompleteAnswersEveryCommit(t *testing.T) {
	p, tok := newProvider(t)
	req := prompt.Request("offline", []prompt.Commit{serverCommit(), readmeCommit()})
	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Text, "[") {
		t.Errorf("answer is not a JSON array: %q", resp.Text)
	}
	got, missing := prompt.ParseAnswer(resp.Text, []string{h1, h2})
	if len(missing) != 0 || len(got) != 2 {
		t.Fatalf("ParseAnswer = %v, missing %v", got, missing)
	}
	// Each summary is the one for its own commit, as read back from the prompt.
	parsed := prompt.Parse(req.System + req.Messages[0].Content)
	for _, c := range parsed {
		if want := offline.Summarize(c); got[c.Hash].Summary != want {
			t.Errorf("%s: summary %q, want %q", c.Hash, got[c.Hash].Summary, want)
		}
	}
	if !strings.Contains(got[h1].Summary, "Handle empty requests") || !strings.Contains(got[h2].Summary, "Fix typo in README") {
		t.Errorf("summaries swapped or wrong: %v", got)
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("Usage = %+v, want positive counts", resp.Usage)
	}
	if resp.Usage.OutputTokens != tok.Count(resp.Text) {
		t.Errorf("OutputTokens = %d, the answer counts %d", resp.Usage.OutputTokens, tok.Count(resp.Text))
	}
	if in := tok.Count(req.System + req.Messages[0].Content); resp.Usage.InputTokens != in {
		t.Errorf("InputTokens = %d, the request counts %d", resp.Usage.InputTokens, in)
	}
}

func TestCompleteIsDeterministic(t *testing.T) {
	p, _ := newProvider(t)
	commits := []prompt.Commit{serverCommit(), readmeCommit()}
	first, err := p.Complete(context.Background(), prompt.Request("offline", commits))
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := p.Complete(context.Background(), prompt.Request("offline", commits))
		if err != nil {
			t.Fatal(err)
		}
		if again != first {
			t.Fatalf("answers differ:\n%+v\n%+v", first, again)
		}
	}
	// A fresh provider gives the same bytes too.
	other, _ := newProvider(t)
	again, err := other.Complete(context.Background(), prompt.Request("offline", commits))
	if err != nil || again.Text != first.Text {
		t.Errorf("a second provider answered %q, %v", again.Text, err)
	}
}

func TestSummaryContents(t *testing.T) {
	s := offline.Summarize(serverCommit())
	for _, want := range []string{
		"Handle empty requests.",                   // the subject, made a sentence
		"An empty body used to panic the handler.", // the body's first sentence
		"4 files", "2 left out of the diff", // every file counted, and how many were not diffed
		"server", "cli", // directories
		"+25/-2",                                 // lines of the files sent
		"Handle",                                 // from "@@ ... @@ func (s *Server) Handle(...) {"
		"parse_args",                             // from "@@ ... @@ def parse_args(argv):"
		"go.sum (lockfile)", "lib.go (vendored)", // skipped files and why
		"modifies", "adds", // what happened to them
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	for _, unwanted := range []string{"Now it answers", "Signed-off-by", "ada@example.com", "+328", "Changes 2 files"} {
		if strings.Contains(s, unwanted) {
			t.Errorf("summary has %q:\n%s", unwanted, s)
		}
	}
	if !strings.HasPrefix(s, "Handle empty requests.") {
		t.Errorf("summary does not start with the subject, its area: prefix left to the scope: %s", s)
	}
}

func TestSummaryMessages(t *testing.T) {
	tests := []struct {
		name      string
		message   string
		contains  []string
		excludes  []string
		hasPrefix string
	}{
		{"subject only", "Bump version", []string{"Bump version."}, nil, "Bump version."},
		{"subject keeps its own stop", "Why not?", []string{"Why not?"}, []string{"Why not?."}, "Why not?"},
		{"no message", "", []string{"Commit without a message."}, nil, "Commit without a message."},
		{"only a trailer after the subject", "Tidy up\n\nSigned-off-by: A <a@example.com>\n", []string{"Tidy up."}, []string{"Signed-off-by", "a@example.com"}, "Tidy up."},
		{"several trailers", "Tidy up\n\nReviewed-by: B <b@example.com>\nSigned-off-by: A <a@example.com>", []string{"Tidy up."}, []string{"Reviewed-by", "Signed-off-by"}, "Tidy up."},
		{"wrapped first paragraph", "Cache results\n\nThe resolver asked\nthe server every time. Later text.", []string{"The resolver asked the server every time."}, []string{"Later text", "\n"}, "Cache results."},
		{"first sentence without a stop", "Cache results\n\nThe resolver asked the server every time", []string{"The resolver asked the server every time."}, nil, "Cache results."},
		// Half a sentence is a claim its author never made.
		{"long first sentence is left out", "Refactor\n\n" + strings.Repeat("word ", 100), nil, []string{"...", "word"}, "Refactor."},
		{"subject is trimmed", "  \n  Add tests  \n", []string{"Add tests."}, nil, "Add tests."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := readmeCommit()
			c.Message = tt.message
			s := offline.Summarize(c)
			if !strings.HasPrefix(s, tt.hasPrefix) {
				t.Errorf("summary does not start %q: %q", tt.hasPrefix, s)
			}
			for _, want := range tt.contains {
				if !strings.Contains(s, want) {
					t.Errorf("summary lacks %q: %q", want, s)
				}
			}
			for _, unwanted := range tt.excludes {
				if strings.Contains(s, unwanted) {
					t.Errorf("summary has %q: %q", unwanted, s)
				}
			}
			if len(s) > 600 {
				t.Errorf("summary is %d bytes long", len(s))
			}
		})
	}
}

func TestSummaryFunctionNames(t *testing.T) {
	tests := []struct {
		file, header, want string // want "" for no name
	}{
		{"srv/server.go", "func (s *Server) Handle(w http.ResponseWriter) {", "Handle"},
		{"srv/server.go", "func NewServer(addr string) *Server {", "NewServer"},
		{"cli/args.py", "def parse_args(argv):", "parse_args"},
		{"cli/model.py", "class Summary(Base):", "Summary"},
		{"src/lib.rs", "pub fn tokenize(s: &str) -> Vec<Token> {", "tokenize"},
		{"src/sum.c", "static int compute_sum(int a, int b)", "compute_sum"},
		{"web/app.js", "function render(props) {", "render"},
		{"src/x.c", "if (ready) {", ""},
		{"cmd/main.go", "import (", ""},
		{"notes.txt", "Some heading", ""},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			c := prompt.Commit{
				Hash: h1, Message: "Change code",
				Files: []prompt.File{{Status: 'M', Path: tt.file, Added: 1, Removed: 1}},
				Diff: "diff --git a/" + tt.file + " b/" + tt.file + "\n--- a/" + tt.file + "\n+++ b/" + tt.file +
					"\n@@ -10,6 +10,7 @@ " + tt.header + "\n-\told\n+\tnew\n",
			}
			s := offline.Summarize(c)
			base := tt.file[strings.LastIndexByte(tt.file, '/')+1:]
			if tt.want == "" {
				if strings.Contains(s, base+" (") {
					t.Errorf("a name was read from %q: %s", tt.header, s)
				}
				return
			}
			if !strings.Contains(s, base+" ("+tt.want+")") {
				t.Errorf("summary does not name %s in %s: %s", tt.want, base, s)
			}
		})
	}
}

func TestSummaryNamesOnlyItsOwnFilesFunctions(t *testing.T) {
	c := serverCommit()
	s := offline.Summarize(c)
	// Handle belongs to server.go, parse_args to args.py.
	if !strings.Contains(s, "server.go (Handle)") || !strings.Contains(s, "args.py (parse_args)") {
		t.Errorf("function names not attached to their files: %s", s)
	}
	// A hunk header before any diff --git line belongs to no file.
	c.Diff = "@@ -1 +1 @@ func Orphan() {\n" + c.Diff
	if s := offline.Summarize(c); strings.Contains(s, "Orphan") {
		t.Errorf("a hunk header outside any file was named: %s", s)
	}
}

func TestSummaryOnlySkippedFiles(t *testing.T) {
	c := prompt.Commit{
		Hash: h1, Message: "Update dependencies",
		Files: []prompt.File{
			{Status: 'M', Path: "go.sum", Added: 10, Removed: 8, Skip: tokenizer.Lockfile},
			{Status: 'M', Path: "web/package-lock.json", Added: 100, Removed: 90, Skip: tokenizer.Lockfile},
		},
	}
	s := offline.Summarize(c)
	if strings.Contains(s, "Changes") || !strings.Contains(s, "go.sum (lockfile)") || !strings.Contains(s, "package-lock.json (lockfile)") {
		t.Errorf("summary = %q", s)
	}
}

func TestSummaryManyFilesStaysShort(t *testing.T) {
	c := prompt.Commit{Hash: h1, Message: "Rename package"}
	for i := range 50 {
		c.Files = append(c.Files, prompt.File{Status: 'R', Path: "pkg/new/f" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".go", Added: 1, Removed: 1})
	}
	s := offline.Summarize(c)
	if !strings.Contains(s, "50 files") || !strings.Contains(s, "renames") || !strings.Contains(s, "47 more") {
		t.Errorf("summary = %q", s)
	}
	if len(s) > 400 {
		t.Errorf("summary of 50 files is %d bytes", len(s))
	}
}

// Any prompt that is not a commit request gets its last line back: the
// offline model is a free baseline for digest eval.
func TestOtherPromptsAreEchoed(t *testing.T) {
	p, _ := newProvider(t)
	resp, err := p.Complete(context.Background(), provider.Request{Messages: []provider.Message{
		{Role: "user", Content: "What is 6 times 7?\nAnswer with a number.\n"}}})
	if err != nil || resp.Text != "Answer with a number." || resp.Usage.InputTokens == 0 {
		t.Errorf("Complete = %+v, %v", resp, err)
	}
}

func TestCompleteErrors(t *testing.T) {
	p, _ := newProvider(t)
	tests := []struct {
		name string
		ctx  func() context.Context
		req  provider.Request
		is   error
	}{
		{"empty request", context.Background, provider.Request{}, nil},
		{"no user message", context.Background, provider.Request{System: "s", Messages: []provider.Message{{Role: "assistant", Content: "hi"}}}, nil},
		{"cancelled", func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, prompt.Request("offline", []prompt.Commit{readmeCommit()}), context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := p.Complete(tt.ctx(), tt.req)
			if err == nil {
				t.Fatalf("Complete = %+v, want an error", resp)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if resp.Text != "" {
				t.Errorf("answer %q with the error", resp.Text)
			}
		})
	}
}

// TestSummaryTrailerInFirstParagraph: a trailer written right under the body,
// without a blank line, stays out of the summary.
func TestSummaryTrailerInFirstParagraph(t *testing.T) {
	c := readmeCommit()
	c.Message = "Fix cache\n\nThe cache was stale\nSigned-off-by: A <a@example.com>\n"
	s := offline.Summarize(c)
	if !strings.Contains(s, "The cache was stale.") {
		t.Errorf("summary lacks the body's sentence: %q", s)
	}
	if strings.Contains(s, "Signed-off-by") || strings.Contains(s, "a@example.com") {
		t.Errorf("the trailer is in the summary: %q", s)
	}
}

// TestSummaryCountsFilesLeftOut: the count covers every file of the commit
// and says how many were left out of the diff, as the request marks them,
// however many it lists.
func TestSummaryCountsFilesLeftOut(t *testing.T) {
	nine := prompt.Commit{Hash: h1, Message: "Add icons", Files: []prompt.File{{Status: 'M', Path: "assets/index.go", Added: 1}}}
	for i := range 8 {
		nine.Files = append(nine.Files, prompt.File{Status: 'A', Path: fmt.Sprintf("assets/icon-%d.png", i), Skip: "binary"})
	}
	many := prompt.Commit{Hash: h2, Message: "Vendor the world"}
	for i := range 75 {
		many.Files = append(many.Files, prompt.File{Status: 'M', Path: fmt.Sprintf("pkg/m%02d/m.go", i), Added: 2, Removed: 1})
	}
	for i := range 210 {
		many.Files = append(many.Files, prompt.File{Status: 'A', Path: fmt.Sprintf("vendor/v%03d/v.go", i), Skip: tokenizer.Vendored})
	}
	tests := []struct {
		name     string
		c        prompt.Commit
		contains []string
	}{
		{"nine files, eight never diffed", nine, []string{
			"Changes 9 files in assets, 8 left out of the diff (+1/-0 in the other):",
			"modifies index.go", "leaves out icon-0.png (binary), icon-1.png (binary) and 6 more."}},
		{"more files than the request lists", many, []string{
			"Changes 285 files", "210 left out of the diff (+150/-75 in the rest)",
			"changes 15 more files", "and 208 more."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := prompt.Request("offline", []prompt.Commit{tt.c})
			parsed := prompt.Parse(req.System + req.Messages[0].Content)
			if len(parsed) != 1 {
				t.Fatalf("parsed %d commits", len(parsed))
			}
			s := offline.Summarize(parsed[0])
			for _, want := range tt.contains {
				if !strings.Contains(s, want) {
					t.Errorf("summary lacks %q:\n%s", want, s)
				}
			}
		})
	}
}
