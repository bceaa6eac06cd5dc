package summarize

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/redact"
)

// secretsRepo commits an AWS key in a config file, a GitHub token in code,
// a private key, and a bare random credential in a commit message. The
// secrets are generated, so that this repository holds none.
func secretsRepo(t *testing.T) (dir string, secrets map[string]string) {
	rng := rand.New(rand.NewPCG(7, 8))
	gen := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	secrets = map[string]string{
		"aws-access-token":    "AKIA" + gen("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"github-pat":          "ghp_" + gen(alnum, 36),
		"high-entropy-string": gen(alnum, 40),
	}
	var pem strings.Builder
	pem.WriteString("-----BEGIN OPENSSH PRIVATE KEY-----\n")
	for range 8 {
		pem.WriteString(gen(alnum+"+/", 70) + "\n")
	}
	pem.WriteString("-----END OPENSSH PRIVATE KEY-----\n")
	secrets["private-key"] = strings.Split(pem.String(), "\n")[3] // one line of its body

	r := gittest.New(t)
	r.Write("README.md", "# service\n").Commit("Start the service")
	r.Write("config/aws.ini", "[default]\naws_access_key_id = "+secrets["aws-access-token"]+"\nregion = eu-west-1\n").
		Commit("Add the AWS configuration")
	r.Write("deploy.go", "package deploy\n\nconst token = \""+secrets["github-pat"]+"\"\n").
		Write("id_ed25519", pem.String()).
		Commit("Deploy with a token and a key")
	r.Write("README.md", "# service\n\nDeployed.\n").
		Commit("Rotate the staging credentials\n\nThe new one is " + secrets["high-entropy-string"] + ", see the vault.")
	return r.Dir, secrets
}

// TestSecretsAreReplacedBeforeLeavingTheMachine: with a Redactor, an AWS
// key in a config file, a GitHub token in code, a private key and a bare
// credential in a commit message reach the model as markers naming their
// rule; the result counts them, and the warnings name the commit and the
// rule, never the secret, as the report does not hold it either.
func TestSecretsAreReplacedBeforeLeavingTheMachine(t *testing.T) {
	dir, secrets := secretsRepo(t)
	red, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	h := newTestRun(t)
	opts := h.options("openai:gpt-4o-mini", dir)
	opts.BatchSize, opts.Redactor = 1, red
	res := h.mustRun(opts)
	sent := strings.Join(h.sent, "\n")
	for rule, secret := range secrets {
		if strings.Contains(sent, secret) {
			t.Errorf("the %s secret reached the provider", rule)
		}
		if !strings.Contains(sent, "[REDACTED:"+rule+"]") {
			t.Errorf("no %s marker in what was sent", rule)
		}
	}
	if n := res.Changelog.Stats.RedactedSecrets; n != 4 || res.Redacted.Total() != 4 {
		t.Errorf("stats count %d redacted secrets, the result %v; want 4", n, res.Redacted)
	}
	if !strings.Contains(h.logs.String(), `found="aws-access-token 1"`) {
		t.Errorf("no warning naming the rule:\n%s", h.logs.String())
	}
	report, err := json.Marshal(res.Changelog)
	if err != nil {
		t.Fatal(err)
	}
	for rule, secret := range secrets {
		if strings.Contains(h.logs.String()+string(report), secret) {
			t.Errorf("the %s secret is in the log or the report", rule)
		}
	}
}
