package summarize

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/redact"
)

// TestSecretsAreReplacedBeforeLeavingTheMachine: with a Redactor, an AWS
// key in a config file, a GitHub token in code, a private key and a bare
// credential in a commit message reach the model as markers naming their
// rule; the result counts them, and the warnings name the commit and the
// rule, never the secret, as the report does not hold it either.
func TestSecretsAreReplacedBeforeLeavingTheMachine(t *testing.T) {
	dir, secrets := gittest.SecretsRepo(t)
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
