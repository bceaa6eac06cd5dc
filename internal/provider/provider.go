// Package provider defines the provider-neutral request and response that
// the engine sends; each wire format lives in a package of its own.
package provider

import (
	"context"
	"fmt"
	"strings"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Request is what the engine asks of a model.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	MaxTokens int
	// Temperature is the sampling temperature; nil leaves the provider's default.
	Temperature *float64
	// Seed asks for reproducible sampling where the provider supports it
	// (OpenAI-compatible servers); nil sends none.
	Seed *int
}

// Usage is what a call consumed, as the provider reports it.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Response is a model's answer.
type Response struct {
	Text  string
	Usage Usage
	// Limits is the rate-limit state the provider reported, nil when it
	// sent none (local servers, the offline provider).
	Limits *Limits
}

// Provider sends requests to one kind of model endpoint.
type Provider interface {
	// Complete answers one request. It must not retry: retries belong to
	// the engine alone, so that layers of retries never multiply.
	Complete(ctx context.Context, req Request) (Response, error)
}

// Spec names a model: "offline", or "provider:model" such as
// "openai:gpt-4o-mini".
type Spec struct {
	Provider string
	Model    string
}

// Offline is the embedded provider that needs no key and no network.
const Offline = "offline"

// ParseSpec reads a model spec.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, Offline) {
		return Spec{Provider: Offline, Model: Offline}, nil
	}
	prov, model, ok := strings.Cut(s, ":")
	if strings.EqualFold(prov, Offline) {
		return Spec{}, fmt.Errorf("model %q: the offline model has no variants. Try: offline", s)
	}
	if !ok || prov == "" || strings.TrimSpace(model) == "" {
		return Spec{}, fmt.Errorf("model %q is not PROVIDER:MODEL. Try: offline, or one such as openai:gpt-4o-mini", s)
	}
	if strings.ContainsAny(prov, " \t/") {
		return Spec{}, fmt.Errorf("model %q: provider %q is not a provider name. Try: one such as openai:gpt-4o-mini", s, prov)
	}
	return Spec{Provider: strings.ToLower(prov), Model: model}, nil
}

// String is the spec as written in reports and cache keys.
func (s Spec) String() string {
	if s.Provider == Offline {
		return Offline
	}
	return s.Provider + ":" + s.Model
}

// Func adapts a function to Provider; tests use it to stand in for a model.
type Func func(ctx context.Context, req Request) (Response, error)

// Complete calls f.
func (f Func) Complete(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

var _ Provider = Func(nil)

// ReasoningAllowance is what reasoning models get on top of an answer's own
// token cap: their hidden reasoning counts against the same cap, and
// without room for it the visible answer comes back empty. Only what they
// use is billed.
const ReasoningAllowance = 4096

// OutputCap is the output-token cap a request for model really carries:
// what rate limits reserve and what a worst-case cost counts.
func OutputCap(model string, maxTokens int) int {
	if maxTokens > 0 && ReasoningModel(model) {
		return maxTokens + ReasoningAllowance
	}
	return maxTokens
}

// ReasoningModel reports whether model is of the o1, o3, o4 or gpt-5
// families, also behind a router prefix such as "openai/o3-mini".
func ReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, fam := range []string{"o1", "o3", "o4"} {
		if m == fam || strings.HasPrefix(m, fam+"-") {
			return true
		}
	}
	return m == "gpt-5" || strings.HasPrefix(m, "gpt-5-") || strings.HasPrefix(m, "gpt-5.")
}
