package anthropic_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
)

// Each Claude model's body follows its rules: models after Opus 4.6 get no
// temperature; Sonnet 5 has thinking turned off unless an effort is asked
// for, which sends adaptive thinking and room for it in max_tokens; no
// model gets a seed. The fake refuses what the API refuses.
func TestBodyFollowsTheModelsRules(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "k"})
	zero, seed := 0.0, 1
	for _, tc := range []struct {
		model, effort, thinking string
		temperature             bool
		maxTokens               int
	}{
		{"claude-haiku-4-5", "", "", true, 50},
		{"claude-opus-4-7", "", "", false, 50},
		{"claude-sonnet-5", "", "disabled", false, 50},
		{"claude-sonnet-5", "low", "adaptive", false, 50 + provider.ReasoningAllowance},
		{"claude-opus-4-8", "high", "adaptive", false, 50 + provider.ReasoningAllowance},
	} {
		req := provider.Request{Model: tc.model, MaxTokens: 50, Temperature: &zero, Seed: &seed, ReasoningEffort: tc.effort,
			Messages: []provider.Message{{Role: "user", Content: "hi"}}}
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Errorf("%s: %v", tc.model, err)
			continue
		}
		got := srv.Requests()
		r := got[len(got)-1]
		var body struct {
			Thinking *struct {
				Type string `json:"type"`
			} `json:"thinking"`
			OutputConfig *struct {
				Effort string `json:"effort"`
			} `json:"output_config"`
		}
		json.Unmarshal(r.Body, &body)
		thinking := ""
		if body.Thinking != nil {
			thinking = body.Thinking.Type
		}
		if thinking != tc.thinking || (r.Temperature != nil) != tc.temperature || r.MaxTokens != tc.maxTokens {
			t.Errorf("%s effort %q: thinking %q, temperature %v, max_tokens %d", tc.model, tc.effort, thinking, r.Temperature, r.MaxTokens)
		}
		if tc.effort != "" && (body.OutputConfig == nil || body.OutputConfig.Effort != tc.effort) {
			t.Errorf("%s: output_config %s", tc.model, r.Body)
		}
		if strings.Contains(string(r.Body), `"seed"`) {
			t.Errorf("%s: a seed was sent", tc.model)
		}
	}
}

// A refusal keeps its words (stop_details' explanation when there is no
// text), a cut answer says so, and usage counts cache reads and writes,
// which input_tokens leaves out, at their prices: --price 1/4/0.1 on
// 1,500 input tokens of which 1,024 read from the cache and 300 output
// costs (476 + 102.4 + 1,200) / 1e6 dollars.
func TestRefusalCutAndCachedUsage(t *testing.T) {
	for _, c := range []struct {
		name, body string
		finish     provider.Finish
		text       string
	}{
		{"refusal", `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-5","content":[],"stop_reason":"refusal",
			"stop_details":{"type":"refusal","category":"cyber","explanation":"This request was declined."},
			"usage":{"input_tokens":476,"cache_read_input_tokens":1024,"cache_creation_input_tokens":0,"output_tokens":300}}`, provider.FinishRefusal, "This request was declined. (category: cyber)"},
		{"cut", `{"id":"m","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"The answer is"}],"stop_reason":"max_tokens",
			"usage":{"input_tokens":476,"cache_read_input_tokens":1024,"output_tokens":300}}`, provider.FinishLength, "The answer is"},
	} {
		srv, _ := server(t, reply{body: c.body})
		cl := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: secret})
		resp, err := cl.Complete(context.Background(), provider.Request{Model: "claude-haiku-4-5", MaxTokens: 400,
			Messages: []provider.Message{{Role: "user", Content: strings.Repeat("x", 8000)}}})
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
		price, _ := models.ParsePrice("1/4/0.1")
		if got, want := price.CostOf(u), (476+102.4+1200)/1e6; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: cost %v, want %v", c.name, got, want)
		}
	}
}

// A long shared system prompt reaches Anthropic with cache_control: the
// first request writes the cache, the next reads it; a short one is not
// marked (Sonnet 4.5 caches prefixes of 1,024 tokens and up).
func TestLongSharedSystemPromptIsCached(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	cl := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "k"})
	long := strings.Repeat("Follow the house style in every answer. ", 200) // ~8,000 bytes
	var usage []provider.Usage
	for _, q := range []string{"one?", "two?"} {
		resp, err := cl.Complete(context.Background(), provider.Request{Model: "claude-sonnet-4-5", System: long, MaxTokens: 20, CachePrefix: true,
			Messages: []provider.Message{{Role: "user", Content: q}}})
		if err != nil {
			t.Fatal(err)
		}
		usage = append(usage, resp.Usage)
	}
	got := srv.Requests()
	if !strings.Contains(string(got[0].Body), `"cache_control":{"type":"ephemeral"}`) {
		t.Errorf("no cache_control: %s", got[0].Body[:200])
	}
	if usage[0].CacheWriteTokens == 0 || usage[1].CacheReadTokens != usage[0].CacheWriteTokens || usage[1].CacheWriteTokens != 0 {
		t.Errorf("usage %+v then %+v, want a write then a read of it", usage[0], usage[1])
	}
	if _, err := cl.Complete(context.Background(), provider.Request{Model: "claude-haiku-4-5", System: "Be brief.", MaxTokens: 20, CachePrefix: true,
		Messages: []provider.Message{{Role: "user", Content: "three?"}}}); err != nil {
		t.Fatal(err)
	}
	if last := srv.Requests()[2]; strings.Contains(string(last.Body), "cache_control") {
		t.Errorf("a short system prompt was marked: %s", last.Body)
	}
}
