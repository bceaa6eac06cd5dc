// Package provider defines the provider-neutral request and response that
// the engine sends; each wire format lives in a package of its own.
package provider

import (
	"context"
	"encoding/json"
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
	// ReasoningEffort is "low", "medium" or "high" for models that reason
	// (Rules.Efforts), "" for the model's default. For Claude models that
	// think by default, "" turns thinking off.
	ReasoningEffort string
	// CachePrefix says the system prompt and every message but the last
	// are shared with other requests of the run: a provider that caches
	// only on request (Anthropic) is asked to cache them when they are
	// long enough (Rules.CacheMinTokens). It changes the price, never the
	// answer, so it is no part of a request's key.
	CachePrefix bool
	// Schema asks for an answer that is a JSON object valid against it,
	// where the model's API can hold it to one (Rules.StructuredOutput);
	// elsewhere the request goes without, and the caller reads the answer
	// as it comes. Like CachePrefix, it is no part of a request's key.
	Schema *Schema
}

// Schema is a JSON Schema for an answer: an object at the root (OpenAI's
// strict mode takes nothing else), every property required, no others.
type Schema struct {
	Name string          // a-z, A-Z, 0-9, _ and -, at most 64 characters
	JSON json.RawMessage // the schema itself
}

// Usage is what a call consumed, as the provider reports it.
// InputTokens counts every input token, cached or not, whatever the
// provider's own convention (OpenAI's prompt_tokens include cached ones,
// Anthropic's input_tokens do not); CacheReadTokens and CacheWriteTokens
// are the parts of it read from, and written to, the provider's prompt
// cache, which are priced apart (models.Price.Cost).
type Usage struct {
	InputTokens      int
	OutputTokens     int
	CacheReadTokens  int
	CacheWriteTokens int
}

// Finish says why a model's answer ended.
type Finish string

const (
	// FinishStop: the model ended its answer itself (also a stop sequence,
	// and what servers that say nothing are taken to mean).
	FinishStop Finish = "stop"
	// FinishLength: cut at the output-token cap (OpenAI "length",
	// Anthropic "max_tokens", Responses "max_output_tokens"): the text is
	// there, but not all of it.
	FinishLength Finish = "length"
	// FinishRefusal: the model declined to answer; Text holds its refusal.
	FinishRefusal Finish = "refusal"
	// FinishContentFilter: the provider's filter withheld or cut the
	// answer (OpenAI "content_filter", Responses "content_filter").
	FinishContentFilter Finish = "content_filter"
)

// Cut reports whether the answer was stopped before its end: by the
// token cap or a content filter.
func (f Finish) Cut() bool { return f == FinishLength || f == FinishContentFilter }

// Response is a model's answer.
type Response struct {
	// Text is the answer, or for a refusal the model's words declining.
	Text string
	// Finish is why the answer ended; "" is FinishStop.
	Finish Finish
	Usage  Usage
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

// OutputCap is the output-token cap req really carries: its MaxTokens,
// plus ReasoningAllowance when its model reasons on this request (see
// Rules.Thinks). It is what rate limits reserve, what a worst-case cost
// counts, and what the wire formats send.
func OutputCap(req Request) int {
	if req.MaxTokens > 0 && RulesFor(req.Model).Thinks(req) {
		return req.MaxTokens + ReasoningAllowance
	}
	return req.MaxTokens
}
