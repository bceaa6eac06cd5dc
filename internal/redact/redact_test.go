package redact

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/budget"
	"github.com/digest-cli/digest/internal/prompt"
)

// The secrets are built at run time from a seeded generator, so that this
// repository holds nothing a secret scanner would flag and every run sees the
// same values.
func randomString(rng *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	digits      = "0123456789"
)

func pem(rng *rand.Rand, lines int) string {
	var b strings.Builder
	b.WriteString("+-----BEGIN RSA PRIVATE KEY-----\n")
	for range lines {
		b.WriteString("+" + randomString(rng, alnum+"+/", 64) + "\n")
	}
	b.WriteString("+-----END RSA PRIVATE KEY-----\n")
	return b.String()
}

func TestRedactReplacesEachKindOfSecretWithItsRuleMarker(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	aws := "AKIA" + randomString(rng, upperDigits, 16)
	github := "ghp_" + randomString(rng, alnum, 36)
	openai := "sk-proj-" + randomString(rng, alnum+"_-", 74) + "T3BlbkFJ" + randomString(rng, alnum+"_-", 74)
	slack := "xoxb-" + randomString(rng, digits, 12) + "-" + randomString(rng, digits, 13) + "-" + randomString(rng, alnum, 24)
	envToken := randomString(rng, alnum, 32)
	key := pem(rng, 12)
	bare := randomString(rng, alnum, 40)

	cases := []struct {
		name, text, secret, rule string
	}{
		{"AWS access key", "+aws_access_key_id = " + aws + "\n", aws, "aws-access-token"},
		{"GitHub token", "+const token = \"" + github + "\"\n", github, "github-pat"},
		{"OpenAI project key", "+OPENAI_API_KEY=" + openai + "\n", openai, "openai-api-key"},
		{"Slack bot token", "+slack: " + slack + "\n", slack, "slack-bot-token"},
		{"PEM private key", "+++ b/server.key\n" + key, key, "private-key"},
		{".env line", "+++ b/.env\n+API_TOKEN=" + envToken + "\n+DEBUG=true\n", envToken, "generic-api-key"},
		{"high-entropy string in a commit message", "Rotate the staging credentials\n\nThe new one is " + bare + ", see the vault.\n", bare, highEntropyRule},
	}
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, counts := r.Redact(c.text)
			if strings.Contains(got, strings.TrimPrefix(strings.TrimSpace(c.secret), "+")) {
				t.Fatalf("secret left in:\n%s", got)
			}
			if !strings.Contains(got, Marker(c.rule)) {
				t.Errorf("no %s marker in:\n%s", Marker(c.rule), got)
			}
			if counts[c.rule] != 1 || counts.Total() != 1 {
				t.Errorf("counts = %v, want one %s", counts, c.rule)
			}
		})
	}
}

func TestRedactLeavesOrdinaryDiffsAlone(t *testing.T) {
	// Object names, hashes and code are what every diff is made of; a rule
	// that fires on them would blank out the diffs digest exists to read.
	text := `commit 3f786850e387550fdab836ed7e6dc881de23001b
Merge 0123456789abcdef0123456789abcdef01234567 into main

diff --git a/internal/engine/retry.go b/internal/engine/retry.go
index 4b825dc642cb6eb9a060e54bf8d69288fbee4904..e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 100644
--- a/internal/engine/retry.go
+++ b/internal/engine/retry.go
@@ -10,3 +10,4 @@ func backoff(attempt int) time.Duration {
+	// TestBackoffHonoursRetryAfterWithJitter checks the cap.
+	sum := sha256.Sum256([]byte("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
+	id := "550e8400-e29b-41d4-a716-446655440000"
+	password := os.Getenv("DB_PASSWORD")
`
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	got, counts := r.Redact(text)
	if got != text || counts.Total() != 0 {
		t.Errorf("redacted %v in an ordinary diff:\n%s", counts, got)
	}
}

func TestRedactPrivateKeyCutShortByTheBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key := pem(rng, 12)
	cut := key[:len(key)/2] // the budget ended inside the key
	text := "diff --git a/k.pem b/k.pem\n" + cut + "\ndiff --git a/main.go b/main.go\n+package main\n"
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	got, counts := r.Redact(text)
	for _, line := range strings.Split(cut, "\n")[1:] {
		if len(line) > 10 && strings.Contains(got, line) {
			t.Fatalf("part of the cut key left in:\n%s", got)
		}
	}
	if counts[privateKeyRule] != 1 || !strings.Contains(got, "+package main") {
		t.Errorf("counts %v, want the key replaced up to the next file only:\n%s", counts, got)
	}
}

func TestRedactCutPrivateKeyKeepsTheBudgetNoteAndPromptLines(t *testing.T) {
	// A key the budget cut has no END line: it is replaced up to the end of
	// its file's part, and no further, so that the note saying the diff was
	// cut and the line closing the commit stay lines of their own.
	rng := rand.New(rand.NewPCG(9, 10))
	key := pem(rng, 40)
	mainDiff := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,3 @@\n package main\n+import \"os\"\n"
	keyDiff := "diff --git a/deploy/id_rsa b/deploy/id_rsa\nnew file mode 100600\n--- /dev/null\n+++ b/deploy/id_rsa\n@@ -0,0 +1,42 @@\n" + key
	tok, err := budget.NewTokenizer(budget.DefaultTokenizer)
	if err != nil {
		t.Fatal(err)
	}
	cut := tok.Fit([]budget.Section{{Name: "main.go", Text: mainDiff}, {Name: "deploy/id_rsa", Text: keyDiff}},
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
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"the cut diff": cut.Text, "the prompt's block": block} {
		got, counts := r.Redact(text)
		if counts[privateKeyRule] != 1 {
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

func TestRedactReplacesEveryOccurrenceOfASecret(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	aws := "AKIA" + randomString(rng, upperDigits, 16)
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	got, counts := r.Redact("-key = " + aws + "\n+key = " + aws + "\n")
	if strings.Contains(got, aws) || counts["aws-access-token"] != 2 {
		t.Errorf("counts %v:\n%s", counts, got)
	}
}

func TestCountsString(t *testing.T) {
	c := Counts{"private-key": 1, "aws-access-token": 2, "github-pat": 1}
	if got, want := c.String(), "aws-access-token 2, github-pat 1, private-key 1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("+token = AKIA" + strings.Repeat("Q", 16) + "\n")
	f.Add("-----BEGIN PRIVATE KEY-----\nabc")
	f.Add("-----BEGIN EC PRIVATE KEY-----\n-----END EC PRIVATE KEY-----")
	f.Add("diff --git a/x b/x\n+x")
	r, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, counts := r.Redact(text)
		if counts.Total() == 0 && got != text {
			t.Errorf("text changed with nothing counted: %q -> %q", text, got)
		}
		// Redacting twice finds nothing new: markers are not secrets.
		again, more := r.Redact(got)
		if more.Total() != 0 || again != got {
			t.Errorf("second pass redacted %v: %q -> %q", more, got, again)
		}
	})
}
