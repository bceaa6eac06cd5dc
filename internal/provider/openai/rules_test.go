package openai_test

import (
	"context"
	"math"
	"testing"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// Each model's body follows its rules: reasoning models get no
// temperature, max_completion_tokens with room to reason, a developer
// message and reasoning_effort; others keep temperature and max_tokens.
// The fake refuses what the real API refuses, so a 200 is the proof.
func TestBodyFollowsTheModelsRules(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})
	zero, seed := 0.0, 1
	for _, model := range []string{"gpt-4o-mini", "gpt-5-mini", "o3-mini", "gpt-5.1-chat-latest"} {
		req := provider.Request{Model: model, System: "Be brief.", MaxTokens: 50, Temperature: &zero, Seed: &seed,
			Messages: []provider.Message{{Role: "user", Content: "hi"}}}
		if provider.RulesFor(model).Efforts {
			req.ReasoningEffort = "low"
		}
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Errorf("%s: %v", model, err)
		}
	}
	got := srv.Requests()
	if len(got) != 4 {
		t.Fatalf("%d requests", len(got))
	}
	for _, r := range got {
		reasoning := r.Model == "gpt-5-mini" || r.Model == "o3-mini"
		if (r.Temperature != nil) == reasoning {
			t.Errorf("%s: temperature %v", r.Model, r.Temperature)
		}
		if want := map[bool]int{true: 50 + provider.ReasoningAllowance, false: 50}[reasoning]; r.MaxTokens != want {
			t.Errorf("%s: cap %d, want %d", r.Model, r.MaxTokens, want)
		}
	}
}

// A refusal keeps its words; a cut answer says so; cached tokens are read
// and priced apart: --price 1/4/0.1 on 1,500 input tokens of which 1,024
// cached and 300 output costs (476 + 102.4 + 1,200) / 1e6 dollars.
func TestRefusalCutAndCachedUsage(t *testing.T) {
	for _, c := range []struct {
		name, body string
		finish     provider.Finish
		text       string
	}{
		{"refusal", `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":1500,"completion_tokens":300,"total_tokens":1800,"prompt_tokens_details":{"cached_tokens":1024}}}`, provider.FinishRefusal, "I can't help with that."},
		{"cut", `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"The answer is"},"finish_reason":"length"}],
			"usage":{"prompt_tokens":1500,"completion_tokens":300,"total_tokens":1800,"prompt_tokens_details":{"cached_tokens":1024}}}`, provider.FinishLength, "The answer is"},
		{"filtered", `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}],
			"usage":{"prompt_tokens":1500,"completion_tokens":300,"total_tokens":1800,"prompt_tokens_details":{"cached_tokens":1024}}}`, provider.FinishContentFilter, ""},
	} {
		srv, _ := server(t, reply{body: c.body})
		cl := openai.New(openai.Options{BaseURL: srv.URL, APIKey: secret})
		resp, err := cl.Complete(context.Background(), provider.Request{Model: "gpt-4o-mini", MaxTokens: 400,
			Messages: []provider.Message{{Role: "user", Content: string(make([]byte, 8000))}}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if resp.Finish != c.finish || resp.Text != c.text {
			t.Errorf("%s: finish %q text %q", c.name, resp.Finish, resp.Text)
		}
		u := resp.Usage
		if u.InputTokens != 1500 || u.CacheReadTokens != 1024 || u.OutputTokens != 300 {
			t.Errorf("%s: usage %+v", c.name, u)
		}
		price, err := models.ParsePrice("1/4/0.1")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := price.CostOf(u), (476+102.4+1200)/1e6; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: cost %v, want %v", c.name, got, want)
		}
	}
}

// OpenAI's own models are held to a JSON schema (strict) where the
// request has one; servers that imitate the API (ollama) and models from
// before structured outputs go without.
func TestStructuredOutputWhereTheModelTakesIt(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Answer: func(fakeprovider.Received) string { return `[{"commit":"a","summary":"s"}]` }})
	schema := &provider.Schema{Name: "answers", JSON: []byte(`{"type":"object","properties":{"commits":{"type":"array","items":{"type":"object","properties":{"commit":{"type":"string"},"summary":{"type":"string"}},"required":["commit","summary"],"additionalProperties":false}}},"required":["commits"],"additionalProperties":false}`)}
	for _, c := range []struct {
		name, model string
		held        bool
	}{{"openai", "gpt-4o-mini", true}, {"openai", "gpt-3.5-turbo", false}, {"ollama", "gpt-4o-mini", false}} {
		cl := openai.New(openai.Options{Name: c.name, BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})
		resp, err := cl.Complete(context.Background(), provider.Request{Model: c.model, MaxTokens: 50, Schema: schema,
			Messages: []provider.Message{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatalf("%s %s: %v", c.name, c.model, err)
		}
		wrapped := resp.Text == `{"commits":[{"commit":"a","summary":"s"}]}`
		if wrapped != c.held {
			t.Errorf("%s %s: answer %s", c.name, c.model, resp.Text)
		}
	}
	// A schema strict mode cannot take is refused by the fake as by OpenAI.
	cl := openai.New(openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})
	_, err := cl.Complete(context.Background(), provider.Request{Model: "gpt-4o-mini", MaxTokens: 50,
		Schema:   &provider.Schema{Name: "loose", JSON: []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)},
		Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	if err == nil {
		t.Error("a schema without additionalProperties: false was taken")
	}
}

// OpenAI caches a long shared prefix by itself: the second request with
// the same 1,024+ token system prompt reports cached tokens.
func TestCachedTokensFromTheFake(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	cl := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})
	system := string(make([]byte, 0)) + repeat("Follow the house style. ", 300)
	var cached []int
	for _, q := range []string{"first?", "second?"} {
		resp, err := cl.Complete(context.Background(), provider.Request{Model: "gpt-4o-mini", System: system, MaxTokens: 20,
			Messages: []provider.Message{{Role: "user", Content: q}}})
		if err != nil {
			t.Fatal(err)
		}
		cached = append(cached, resp.Usage.CacheReadTokens)
	}
	if cached[0] != 0 || cached[1] < 1024 || cached[1]%128 != 0 {
		t.Errorf("cached tokens %v, want 0 then a multiple of 128 of at least 1,024", cached)
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// The Responses API holds an answer to the schema too (text.format).
func TestResponsesStructuredOutput(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Answer: func(fakeprovider.Received) string { return `[{"commit":"a","summary":"s"}]` }})
	schema := &provider.Schema{Name: "answers", JSON: []byte(`{"type":"object","properties":{"commits":{"type":"array","items":{"type":"object","properties":{"commit":{"type":"string"},"summary":{"type":"string"}},"required":["commit","summary"],"additionalProperties":false}}},"required":["commits"],"additionalProperties":false}`)}
	cl := openai.NewResponses(openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})
	resp, err := cl.Complete(context.Background(), provider.Request{Model: "gpt-5-pro", MaxTokens: 50, Schema: schema,
		Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"commits":[{"commit":"a","summary":"s"}]}` {
		t.Errorf("answer %s", resp.Text)
	}
}
