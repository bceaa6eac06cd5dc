package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// A Responses-only model named as openai:MODEL, and any model named as
// openai-responses:MODEL, get the Responses client; other OpenAI models the
// chat client. Both wires take the same key and base URL, have a batch
// API, and share the rate limit of the account's model. That the chat
// endpoint refuses such a model is internal/provider/openai's
// TestResponsesOnlyModelsAnswerOnlyThere.
func TestProviderPicksTheResponsesAPI(t *testing.T) {
	ios, _, _ := iostreams.Test()
	f := factory{NewFactory(ios, "test")}
	env := map[string]string{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	f.Getenv = func(k string) string { return env[k] }
	for model, responses := range map[string]bool{"openai:gpt-5-pro": true, "openai:o3-pro-2025-06-10": true, "openai:gpt-5.1-codex": true,
		"openai:o3-deep-research": true, "openai-responses:gpt-4o-mini": true, "openai-responses:gpt-5": true, "openai:gpt-4o-mini": false, "openai:gpt-5": false} {
		spec, _ := provider.ParseSpec(model)
		p, err := f.Provider(spec, cmdutil.ProviderOptions{})
		_, isResponses := p.(*openai.ResponsesClient)
		_, isChat := p.(*openai.Client)
		if _, batches := p.(provider.Batcher); err != nil || isResponses != responses || isChat == responses || !batches {
			t.Errorf("%s: %T, %v", model, p, err)
		}
		if url, err := f.BaseURL(spec, ""); err != nil || url != env["OPENAI_BASE_URL"] {
			t.Errorf("%s: base URL %q, %v", model, url, err)
		}
	}
	chat, _ := f.LimitName(provider.Spec{Provider: "openai", Model: "gpt-5"}, "")
	resp, _ := f.LimitName(provider.Spec{Provider: openai.ResponsesProvider, Model: "gpt-5"}, "")
	other, _ := f.LimitName(provider.Spec{Provider: openai.ResponsesProvider, Model: "gpt-5-pro"}, "")
	if chat == "" || chat != resp || other == resp {
		t.Errorf("limit names %q, %q and %q: one account's model is one limit, whichever API", chat, resp, other)
	}
}

// A hosted model without its key is a usage error naming the variable to
// set, for each provider (eval's: TestEvalRefusesBadModelSpecs).
func TestHostedModelWithoutKeyNamesTheVariable(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	for model, env := range map[string]string{"openai:gpt-4o-mini": "OPENAI_API_KEY", "openai-responses:gpt-4o-mini": "OPENAI_API_KEY",
		"anthropic:claude-haiku-4-5": "ANTHROPIC_API_KEY"} {
		res := h.run(context.Background(), "summarize", f.Dir, "--model", model)
		oneLineError(t, res, 2, "needs an API key in "+env, "Try: export "+env)
	}
}

// A key the provider refuses stops the run at its first request, exit 1,
// in one line naming the variable and not the key.
func TestBadKeyStopsTheRunAndNamesTheVariable(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "right"})
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "sk-ant-wrong"
	res := h.run(context.Background(), "summarize", fixture(t).Dir, "--model", "anthropic:claude-haiku-4-5", "--base-url", srv.AnthropicBaseURL(), "--batch-size", "1")
	oneLineError(t, res, 1, "ANTHROPIC_API_KEY")
	if n := srv.Stats().Requests; n != 1 || strings.Contains(res.errOut, "sk-ant-wrong") {
		t.Errorf("%d requests with a bad key, want 1; %q", n, res.errOut)
	}
}
