package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// A Responses-only model named as openai:MODEL, and any model named as
// openai-responses:MODEL, get the Responses client; other OpenAI models the
// chat client. Both wires take the same key and base URL, and share the
// rate limit of the account's model.
func TestProviderPicksTheResponsesAPI(t *testing.T) {
	ios, _, _ := iostreams.Test()
	f := factory{NewFactory(ios, "test")}
	env := map[string]string{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	f.Getenv = func(k string) string { return env[k] }
	for _, tt := range []struct {
		model     string
		responses bool
	}{
		{"openai:gpt-5-pro", true},
		{"openai:o3-pro-2025-06-10", true},
		{"openai:gpt-5.1-codex", true},
		{"openai:o3-deep-research", true},
		{"openai-responses:gpt-4o-mini", true},
		{"openai-responses:gpt-5", true},
		{"openai:gpt-4o-mini", false},
		{"openai:gpt-5", false},
	} {
		spec, err := provider.ParseSpec(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.Provider(spec, cmdutil.ProviderOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		_, responses := p.(*openai.ResponsesClient)
		_, chat := p.(*openai.Client)
		if responses != tt.responses || chat == tt.responses {
			t.Errorf("%s: %T", tt.model, p)
		}
		if _, ok := p.(provider.Batcher); !ok {
			t.Errorf("%s: %T has no batch API", tt.model, p)
		}
		if url, err := f.BaseURL(spec, ""); err != nil || url != env["OPENAI_BASE_URL"] {
			t.Errorf("%s: base URL %q, %v", tt.model, url, err)
		}
	}
	chat, _ := f.LimitName(provider.Spec{Provider: "openai", Model: "gpt-5"}, "")
	resp, _ := f.LimitName(provider.Spec{Provider: openai.ResponsesProvider, Model: "gpt-5"}, "")
	if chat == "" || chat != resp {
		t.Errorf("limit names %q and %q: one account's model is one limit", chat, resp)
	}
	other, _ := f.LimitName(provider.Spec{Provider: openai.ResponsesProvider, Model: "gpt-5-pro"}, "")
	if other == resp {
		t.Errorf("gpt-5 and gpt-5-pro share the limit %q", other)
	}
}

func TestResponsesProviderNeedsTheOpenAIKey(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "openai-responses:gpt-4o-mini")
	if res.code != 2 || !strings.Contains(res.errOut, "needs an API key in OPENAI_API_KEY") {
		t.Errorf("exit %d: %q", res.code, res.errOut)
	}
	res = h.run(context.Background(), "summarize", f.Dir, "--model", "nosuch:gpt-4o-mini")
	if res.code != 2 || !strings.Contains(res.errOut, "openai-responses") {
		t.Errorf("unknown provider: exit %d: %q", res.code, res.errOut)
	}
}

// Sent as chat completions, the same model is refused, as OpenAI refuses it.
func TestChatRefusesAResponsesOnlyModel(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := openai.New(openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), HTTPClient: srv.Client()})
	_, err := c.Complete(context.Background(), provider.Request{Model: "gpt-5-pro", MaxTokens: 100, Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "only supported in v1/responses") {
		t.Errorf("chat with gpt-5-pro: %v", err)
	}
}
