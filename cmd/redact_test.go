package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
)

// TestHostedModelsGetRedactedDiffs: for a hosted model digest redacts by
// default: no secret is in the requests' bodies, standard error counts the
// replacements, and no output holds a secret
// (summarize.TestSecretsAreReplacedBeforeLeavingTheMachine checks the
// markers and the counts).
func TestHostedModelsGetRedactedDiffs(t *testing.T) {
	dir, secrets := gittest.SecretsRepo(t)
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
	dir, secrets := gittest.SecretsRepo(t)
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
