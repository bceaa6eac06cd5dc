package cmd

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
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

// TestHostedModelsGetRedactedDiffs: for a hosted model digest redacts by
// default: no secret is in the requests' bodies, standard error counts the
// replacements, and no output holds a secret
// (summarize.TestSecretsAreReplacedBeforeLeavingTheMachine checks the
// markers and the counts).
func TestHostedModelsGetRedactedDiffs(t *testing.T) {
	dir, secrets := secretsRepo(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "k"})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	res := h.run(context.Background(), "summarize", dir, "--model", "openai:gpt-4o-mini", "--base-url", srv.OpenAIBaseURL(),
		"--batch-size", "1", "-f", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var sent strings.Builder
	for _, r := range srv.Requests() {
		sent.Write(r.Body)
	}
	for rule, secret := range secrets {
		if strings.Contains(sent.String(), secret) {
			t.Errorf("the %s secret reached the provider", rule)
		}
	}
	if !strings.Contains(res.errOut, "4 secrets replaced by markers before sending (") {
		t.Errorf("the run summary does not count the redactions:\n%s", res.errOut)
	}
	for rule, secret := range secrets {
		if strings.Contains(res.errOut+res.out, secret) {
			t.Errorf("the %s secret is in digest's output", rule)
		}
	}
}

// TestNoRedactSendsTheDiffAsItIs: --no-redact turns the redactor off.
func TestNoRedactSendsTheDiffAsItIs(t *testing.T) {
	dir, secrets := secretsRepo(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "k"})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	res := h.run(context.Background(), "summarize", dir, "--model", "openai:gpt-4o-mini", "--base-url", srv.OpenAIBaseURL(), "--no-redact")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var sent strings.Builder
	for _, r := range srv.Requests() {
		sent.Write(r.Body)
	}
	if !strings.Contains(sent.String(), secrets["aws-access-token"]) || strings.Contains(sent.String(), "[REDACTED:") {
		t.Errorf("--no-redact changed what was sent")
	}
	if strings.Contains(res.errOut, "replaced by markers") {
		t.Errorf("--no-redact still counts redactions:\n%s", res.errOut)
	}
}
