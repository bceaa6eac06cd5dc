package redact_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// The tests of redaction as it meets digest's prompt: an external test
// package, since prompt reaches redact through provider.

func TestRedactCutPrivateKeyKeepsTheBudgetNoteAndPromptLines(t *testing.T) {
	// A key the budget cut has no END line: it is replaced up to the end of
	// its file's part, and no further, so that the note saying the diff was
	// cut and the line closing the commit stay lines of their own.
	rng := rand.New(rand.NewPCG(9, 10))
	key := redact.PEM(rng, 40)
	mainDiff := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,3 @@\n package main\n+import \"os\"\n"
	keyDiff := "diff --git a/deploy/id_rsa b/deploy/id_rsa\nnew file mode 100600\n--- /dev/null\n+++ b/deploy/id_rsa\n@@ -0,0 +1,42 @@\n" + key
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	cut := tok.Fit([]tokenizer.Section{{Name: "main.go", Text: mainDiff}, {Name: "deploy/id_rsa", Text: keyDiff}},
		tok.Count(mainDiff)+tok.Count(keyDiff)/2)
	if !cut.Truncated || !strings.Contains(cut.Text, "BEGIN RSA PRIVATE KEY") || strings.Contains(cut.Text, "END RSA PRIVATE KEY") {
		t.Fatalf("the budget did not cut the key in half:\n%s", cut.Text)
	}
	noteAt := strings.LastIndex(cut.Text, "[digest: diff cut to")
	note := cut.Text[noteAt:]
	hash := "84d18fb04e6bbda456a697cc40d8f6029c07e1bc"
	block := prompt.Block(prompt.Commit{
		Hash: hash, Author: "A U Thor", Date: "2026-02-18T12:17:24Z", Message: "Add the deploy key",
		Files: []prompt.File{{Status: 'M', Path: "main.go", Added: 1}, {Status: 'A', Path: "deploy/id_rsa", Added: 42}},
		Diff:  cut.Text,
	})
	r, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"the cut diff": cut.Text, "the prompt's block": block} {
		got, counts := r.Redact(text)
		if counts[redact.PrivateKeyRule] != 1 {
			t.Errorf("%s: counts %v, want one private key", name, counts)
		}
		for _, line := range strings.Split(cut.Text[:noteAt], "\n") {
			if strings.HasPrefix(line, "+") && len(line) > 40 && strings.Contains(got, line) {
				t.Fatalf("%s: a line of the key is left:\n%s", name, got)
			}
		}
		if !strings.Contains(got, "+import \"os\"\n") || !strings.Contains(got, "\n+[REDACTED:private-key]\n"+note) {
			t.Errorf("%s: want the key replaced up to the note, which stays a line of its own:\n%s", name, got)
		}
		if name == "the prompt's block" {
			if !strings.Contains(got, note+"=== end "+hash+" ===\n") {
				t.Errorf("the line closing the commit moved:\n%s", got)
			}
			if parsed := prompt.Parse(prompt.Header(1) + got); len(parsed) != 1 || parsed[0].Hash != hash {
				t.Errorf("the redacted block no longer reads as one commit: %+v", parsed)
			}
		}
	}
}
