package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
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
	password := "tangerine" + randomString(rng, digits, 3)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + password))
	hexSecret := randomString(rng, "0123456789abcdef", 40)

	cases := []struct {
		name, text, secret, rule string
	}{
		{"AWS access key", "+aws_access_key_id = " + aws + "\n", aws, "aws-access-token"},
		{"GitHub token", "+const token = \"" + github + "\"\n", github, "github-pat"},
		{"OpenAI project key", "+OPENAI_API_KEY=" + openai + "\n", openai, "openai-api-key"},
		{"Slack bot token", "+slack: " + slack + "\n", slack, "slack-bot-token"},
		{"PEM private key", "+++ b/server.key\n" + key, key, "private-key"},
		{".env line", "+++ b/.env\n+API_TOKEN=" + envToken + "\n+DEBUG=true\n", envToken, "token-assignment"},
		{"high-entropy string in a commit message", "Rotate the staging credentials\n\nThe new one is " + bare + ", see the vault.\n", bare, highEntropyRule},
		{"password in a connection URL", "+DATABASE_URL=postgres://app:" + password + "@db/app\n", password, urlPasswordRule},
		{"password on a command line", "+mysql -u root -p" + password + " app < dump.sql\n", password, cliPasswordRule},
		{"Authorization header", "+\treq.Header.Set(\"Authorization\", \"Basic " + basic + "\")\n", basic, authorizationRule},
		{"low-entropy password in .env", "+ADMIN_PASS=hunter2\n", "hunter2", "password-assignment"},
		{"hex webhook secret in YAML", "+  webhook_secret: " + hexSecret + "\n", hexSecret, "secret-assignment"},
		{"hex API key in JSON", "+  \"apiKey\": \"" + hexSecret + "\",\n", hexSecret, "key-assignment"},
		{"Docker registry auth", "{\"auths\":{\"r.example.com\":{\"auth\":\"" + basic + "\"}}}\n", basic, "credential-assignment"},
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
@@ -120,7 +120,9 @@ func (s *StoreSuite) TestListPackedObjectsSHA256IndexRoundTrip() {
+	// https://github.com/example-org/widgets/commit/4b16103485a1c292be01e4fc2d031c41885221c2
+	// https://github.com/git/git/blob/60f210402362d53c9efc6d892aa68bfcc8c92834/Documentation/gitformat-commit-graph.txt#L88
+	var SigAlgoRSASHA256v01WithCertificateCheck = ssh.KeyAlgoRSASHA256
+	if apiKey == "" || token == "" {
+		Password: password,
+  password: ${{ secrets.DB_PASSWORD }}
+  api_key: <your-api-key>
+  primary_key: id
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

func TestRedactKeepsTheDiffPrefixKeyNameAndURL(t *testing.T) {
	// The marker replaces the secret only: the model still reads which
	// line changed, which setting it was, and where the URL points.
	cases := map[string]string{
		"+ADMIN_PASS=hunter2":                                       "+ADMIN_PASS=[REDACTED:password-assignment]",
		"-ADMIN_PASS=hunter2":                                       "-ADMIN_PASS=[REDACTED:password-assignment]",
		" ADMIN_PASS=hunter2":                                       " ADMIN_PASS=[REDACTED:password-assignment]",
		"+  password: \"hunter2\"  # rotated":                       "+  password: \"[REDACTED:password-assignment]\"  # rotated",
		"+postgres://app:hunter2@db/app":                            "+postgres://app:[REDACTED:url-password]@db/app",
		"redis://:hunter2@cache:6379/0":                             "redis://:[REDACTED:url-password]@cache:6379/0",
		"+Authorization: Bearer tok3n-0123456789":                   "+Authorization: Bearer [REDACTED:authorization-header]",
		"+Server=db;User Id=sa;Password=hunter2;Encrypt=true":       "+Server=db;User Id=sa;Password=[REDACTED:password-assignment];Encrypt=true",
		"+<password>hunter2</password>":                             "+<password>[REDACTED:password-assignment]</password>",
		"ADMIN_PASS=hunter2\r\nDB_URL=postgres://a:hunter22@db\r\n": "ADMIN_PASS=[REDACTED:password-assignment]\r\nDB_URL=postgres://a:[REDACTED:url-password]@db\r\n",
	}
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range cases {
		if got, _ := r.Redact(in); got != want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

func TestRedactLeavesPublicKeyMaterialAlone(t *testing.T) {
	// Signatures, certificates and public keys are random base64 and no
	// secret; the private key next to them is.
	rng := rand.New(rand.NewPCG(11, 12))
	var sig strings.Builder
	sig.WriteString("+-----BEGIN PGP SIGNATURE-----\n+\n")
	for range 6 {
		sig.WriteString("+" + randomString(rng, alnum+"+/", 64) + "\n")
	}
	sig.WriteString("+=VhHy\n+-----END PGP SIGNATURE-----\n")
	text := "diff --git a/sig.asc b/sig.asc\n" + sig.String() + "diff --git a/k.pem b/k.pem\n" + pem(rng, 6)
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	got, counts := r.Redact(text)
	if !strings.HasPrefix(got, "diff --git a/sig.asc b/sig.asc\n"+sig.String()) {
		t.Errorf("the signature was redacted (%v):\n%s", counts, got)
	}
	if counts.Total() != 1 || counts[privateKeyRule] != 1 {
		t.Errorf("counts %v, want the private key only", counts)
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
	// A password found by its key's name is replaced in the test that uses
	// it too; one that reads as a name is not chased through the code.
	text := "+DB_PASSWORD=s3cret-Tangerine7\n+\tconnect(\"s3cret-Tangerine7\")\n" +
		"+ADMIN_PASSWORD=MonkeyBusiness\n+func MonkeyBusiness() {}\n"
	got, counts = r.Redact(text)
	if strings.Contains(got, "s3cret-Tangerine7") || strings.Contains(got, "PASSWORD=MonkeyBusiness") {
		t.Errorf("counts %v:\n%s", counts, got)
	}
	if !strings.Contains(got, "func MonkeyBusiness()") || counts["password-assignment"] != 3 || counts.Total() != 3 {
		t.Errorf("counts %v, want 3 password-assignment, and the function's name left:\n%s", counts, got)
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
	f.Add("+ADMIN_PASS=hunter2\n+DB_PASSWORD=${DB_PASSWORD}\n")
	f.Add("DATABASE_URL=postgres://app:s3cret-pw@db/app\nredis://:p4ss@cache:6379")
	f.Add("curl -H \"Authorization: Bearer abcdef0123456789abcdef\" -u admin:hunter22 https://x")
	f.Add("  - name: DB_PASSWORD\n    value: hunter2\n<password>s3cret</password>")
	f.Add("mysql -u root -pS3cretPw app; echo pw | docker login --password-stdin")
	f.Add("AccountKey=Zm9vYmFyYmF6cXV4cXV1eHg0NTY3ODkw;Password=Pa55w0rd!;")
	f.Add("The staging password is hunter2! Use token Xk2pL9qR7vT4wY8zB3nM5cF6 now.")
	f.Add("+-----BEGIN RSA PRIVATE KEY-----\n+MIIEabc\n[digest: diff cut to 10 tokens (limit 12); cut: k.pem (partly)]\n=== end 0123 ===\n")
	f.Add("+-----BEGIN PGP SIGNATURE-----\n+iQGzBAABCAAdFiEE/h5sbbqJFh9j1AdUSqtFFGop\n+-----END PGP SIGNATURE-----\n")
	// A password repeated in curl's user part leaves a marker holding a
	// colon before the password's own marker.
	f.Add("curl; -u 0000\x7f\xffhunter22!:hunter22!")
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
