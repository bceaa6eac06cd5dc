package fakeprovider

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

// The fake refuses what the real APIs refuse of a model, as their specs
// and model pages say, with a 400 naming the parameter.
func TestModelRulesRefused(t *testing.T) {
	srv := Start(t, Config{})
	for _, c := range []struct {
		name, format, body, want string
	}{
		{"reasoning temperature", OpenAI, `{"model":"gpt-5-mini","messages":[{"role":"user","content":"hi"}],"temperature":0}`, "Only the default (1) value is supported"},
		{"reasoning max_tokens", OpenAI, `{"model":"o3-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":10}`, "Use 'max_completion_tokens' instead"},
		{"effort on a chat model", OpenAI, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low"}`, "reasoning_effort"},
		{"new claude temperature", Anthropic, `{"model":"claude-opus-4-7","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"temperature":0}`, "do not support setting temperature"},
		{"new claude top_k", Anthropic, `{"model":"claude-sonnet-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"top_k":5}`, "top_k"},
		{"new claude enabled thinking", Anthropic, `{"model":"claude-opus-4-8","max_tokens":2000,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"enabled","budget_tokens":1024}}`, "thinking.type.enabled"},
		{"anthropic seed", Anthropic, `{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"seed":1}`, "Extra inputs are not permitted"},
	} {
		r := sendRaw(t, srv, c.format, "k", c.body)
		if r.status != 400 || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%s: %d %s, want 400 naming %q", c.name, r.status, r.body, c.want)
		}
	}
	// What they take goes through.
	for _, c := range []struct{ format, body string }{
		{OpenAI, `{"model":"gpt-5-mini","messages":[{"role":"developer","content":"s"},{"role":"user","content":"hi"}],"max_completion_tokens":50,"temperature":1,"seed":1,"reasoning_effort":"low"}`},
		{OpenAI, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":50,"temperature":0,"seed":1}`},
		{Anthropic, `{"model":"claude-haiku-4-5","max_tokens":50,"messages":[{"role":"user","content":"hi"}],"temperature":0}`},
		{Anthropic, `{"model":"claude-opus-4-7","max_tokens":50,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"disabled"}}`},
	} {
		if r := sendRaw(t, srv, c.format, "k", c.body); r.status != 200 {
			t.Errorf("%s: %d %s", c.body, r.status, r.body)
		}
	}
}

// A request whose question holds RefuseTrigger is refused in each format's
// own way, and the refusal's words come back.
func TestRefusal(t *testing.T) {
	srv := Start(t, Config{})
	for _, format := range []string{OpenAI, Anthropic} {
		req := provider.Request{Model: "m", MaxTokens: 50, Messages: []provider.Message{{Role: "user", Content: "please " + RefuseTrigger}}}
		a := decodeAnswer(t, format, send(t, srv, format, "k", req))
		if a.finish != "refusal" || a.text != RefusalText {
			t.Errorf("%s: finish %q, text %q", format, a.finish, a.text)
		}
	}
}

// sendRaw posts body as it is in format.
func sendRaw(t testing.TB, srv *Server, format, key, body string) reply {
	t.Helper()
	r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+path(format), headers(format, key), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
