package offline_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider/offline"
)

// FuzzSummarize: whatever the message and diff, a summary is one line of
// valid text, and reading them never panics.
func FuzzSummarize(f *testing.F) {
	for _, g := range generatedHistory() {
		f.Add(g.c.Message, g.c.Diff)
	}
	f.Add("x…\n…y\n\n* a\n  b\n`c. D", "diff --git a/a.c b/a.c\n@@ -1 +1 @@ struct ref *f(\n+static int g(void)\n-\n \n")
	f.Add("Fix it!\n\nIt's '! (git ...)'. Done?", "diff --git a/x.go b/x.go\n@@ -1 +1 @@\n+func (")
	f.Fuzz(func(t *testing.T, message, diff string) {
		c := prompt.Commit{Hash: h1, Message: message, Diff: diff,
			Files: []prompt.File{{Status: 'M', Path: "x.go", Added: 1}, {Status: 'A', Path: "a.c", Added: 1}, {Status: 'M', Path: "go.sum", Skip: "lockfile"}}}
		s := offline.Summarize(c)
		if s == "" || strings.Contains(s, "\n") {
			t.Fatalf("summary %q", s)
		}
		if utf8.ValidString(message) && utf8.ValidString(diff) && !utf8.ValidString(s) {
			t.Fatalf("summary of valid text is not valid UTF-8: %q", s)
		}
	})
}
