package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in   string
		want provider.Spec
		str  string
	}{
		{"offline", provider.Spec{Provider: "offline", Model: "offline"}, "offline"},
		{"  offline\n", provider.Spec{Provider: "offline", Model: "offline"}, "offline"},
		{"openai:gpt-4o-mini", provider.Spec{Provider: "openai", Model: "gpt-4o-mini"}, "openai:gpt-4o-mini"},
		{"anthropic:claude-haiku-4-5", provider.Spec{Provider: "anthropic", Model: "claude-haiku-4-5"}, "anthropic:claude-haiku-4-5"},
		{"ollama:llama3.2:latest", provider.Spec{Provider: "ollama", Model: "llama3.2:latest"}, "ollama:llama3.2:latest"},
		{"Offline", provider.Spec{Provider: "offline", Model: "offline"}, "offline"},
		{"OpenAI:GPT-4o", provider.Spec{Provider: "openai", Model: "GPT-4o"}, "openai:GPT-4o"},
		{" anthropic:claude-sonnet-4-5 ", provider.Spec{Provider: "anthropic", Model: "claude-sonnet-4-5"}, "anthropic:claude-sonnet-4-5"},
		{"openrouter:meta-llama/llama-3.1-8b-instruct", provider.Spec{Provider: "openrouter", Model: "meta-llama/llama-3.1-8b-instruct"}, "openrouter:meta-llama/llama-3.1-8b-instruct"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := provider.ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSpec(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Errorf("String() = %q, want %q", s, tt.str)
			}
			again, err := provider.ParseSpec(got.String())
			if err != nil || again != got {
				t.Errorf("ParseSpec(String()) = %#v, %v; want %#v", again, err, got)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		in      string
		mention string // a part of the message besides "Try:"
	}{
		{"", "PROVIDER:MODEL"},
		{"   ", "PROVIDER:MODEL"},
		{"gpt-4o", `"gpt-4o"`},
		{":x", "PROVIDER:MODEL"},
		{"openai:", "PROVIDER:MODEL"},
		{"openai:   ", "PROVIDER:MODEL"},
		{"open ai:x", `"open ai"`},
		{"open\tai:x", "provider"},
		{"openai/gpt:x", "provider"},
		{"offline:foo", "Try: offline"},
		{"OFFLINE:x", "Try: offline"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := provider.ParseSpec(tt.in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) = %#v, want an error", tt.in, got)
			}
			if got != (provider.Spec{}) {
				t.Errorf("ParseSpec(%q) returned %#v with its error", tt.in, got)
			}
			msg := err.Error()
			if !strings.Contains(msg, "Try:") || !strings.Contains(msg, tt.mention) {
				t.Errorf("error %q lacks %q or a \"Try:\" hint", msg, tt.mention)
			}
		})
	}
}

func TestFunc(t *testing.T) {
	want := errors.New("boom")
	var p provider.Provider = provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		return provider.Response{Text: req.Model + ":" + req.Messages[0].Content, Usage: provider.Usage{InputTokens: 3, OutputTokens: 4}}, want
	})
	got, err := p.Complete(context.Background(), provider.Request{Model: "m", Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, want) || got.Text != "m:hi" || got.Usage.InputTokens != 3 || got.Usage.OutputTokens != 4 {
		t.Errorf("Complete = %+v, %v", got, err)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"offline", "openai:gpt-4o-mini", "ollama:llama3.2:latest", "OpenAI:X", ":x", "openai:", "open ai:x", "", " a : b ", "offline:offline"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		spec, err := provider.ParseSpec(s)
		if err != nil {
			if !strings.Contains(err.Error(), "Try:") {
				t.Fatalf("ParseSpec(%q): error without a hint: %v", s, err)
			}
			return
		}
		if spec.Provider == "" || strings.TrimSpace(spec.Model) == "" {
			t.Fatalf("ParseSpec(%q) = %#v: empty part", s, spec)
		}
		again, err := provider.ParseSpec(spec.String())
		if err != nil {
			t.Fatalf("ParseSpec(%q) = %#v, but its String() %q does not parse: %v", s, spec, spec.String(), err)
		}
		if again != spec {
			t.Fatalf("ParseSpec(%q) = %#v, String() %q parses to %#v", s, spec, spec.String(), again)
		}
	})
}

func TestTokenCount(t *testing.T) {
	for in, want := range map[string]int{
		`19`: 19, `"19"`: 19, `19.0`: 19, `0`: 0, `1e3`: 1000,
		`-5`: -1, `2.5`: -1, `null`: -1, ``: -1, `true`: -1, `"lots"`: -1, `NaN`: -1, `"Inf"`: -1, `{}`: -1,
		`1e15`: provider.MaxTokenCount, `1e400`: provider.MaxTokenCount,
	} {
		if got := provider.TokenCount(json.RawMessage(in)); got != want {
			t.Errorf("TokenCount(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestSaneUsage(t *testing.T) {
	req := provider.Request{Model: "gpt-4o", System: "sys", Messages: []provider.Message{{Role: "user", Content: "hello"}}, MaxTokens: 100}
	for _, c := range []struct{ in, out, wantIn, wantOut int }{
		{10, 20, 10, 20},
		{-1, -7, 0, 0},
		{provider.MaxTokenCount, provider.MaxTokenCount, provider.InputBound(req), provider.OutputBound(req)},
	} {
		got := provider.SaneUsage(req, c.in, c.out)
		if got != (provider.Usage{InputTokens: c.wantIn, OutputTokens: c.wantOut}) {
			t.Errorf("SaneUsage(%d, %d) = %+v, want %d, %d", c.in, c.out, got, c.wantIn, c.wantOut)
		}
	}
	// A reasoning model's cap includes its hidden reasoning.
	if b := provider.OutputBound(provider.Request{Model: "o3-mini", MaxTokens: 100}); b < 100+provider.ReasoningAllowance {
		t.Errorf("o3-mini's output bound %d leaves no room for reasoning", b)
	}
}

// TestCleanMessageLeavesPlaceholderKeysAlone: a local server's placeholder
// key does not mangle its error messages; a real key is scrubbed in any case.
func TestCleanMessageLeavesPlaceholderKeysAlone(t *testing.T) {
	if got := provider.CleanMessage("max_tokens is too large for EMPTY models", "k"); got != "max_tokens is too large for EMPTY models" {
		t.Errorf("placeholder key: %q", got)
	}
	key := "sk-proj-0123456789abcdefghijklmnopqrstuvwxyz"
	if got := provider.CleanMessage("bad key "+strings.ToUpper(key)+" given.", key); strings.Contains(strings.ToLower(got), strings.ToLower(key)) || !strings.Contains(got, "<redacted>") {
		t.Errorf("real key kept: %q", got)
	}
}
