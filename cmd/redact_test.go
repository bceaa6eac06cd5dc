package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// TestHostedModelsGetRedactedDiffs: for a hosted model digest redacts by
// default, standard error counts the replacements, and no output holds a
// secret; --no-redact turns the redactor off, and nothing is counted
// (summarize.TestSecretsAreReplacedBeforeLeavingTheMachine checks that with
// the redactor no secret reaches the model, and the markers and counts).
func TestHostedModelsGetRedactedDiffs(t *testing.T) {
	dir, secrets := gittest.SecretsRepo(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", dir, "--model", "test:gpt-4o-mini", "--batch-size", "1", "-f", "json")
	says(t, res, 0, nil, "4 secrets replaced by markers before sending (")
	for rule, secret := range secrets {
		if strings.Contains(res.errOut+res.out, secret) {
			t.Errorf("the %s secret is in digest's output", rule)
		}
	}
	h = newHarness(t) // nothing stored: all is sent again
	if plain := h.run(context.Background(), "summarize", dir, "--model", "test:gpt-4o-mini", "--no-redact"); plain.code != 0 || strings.Contains(plain.errOut, "replaced by markers") {
		t.Errorf("--no-redact: exit %d, still counts redactions:\n%s", plain.code, plain.errOut)
	}
}
