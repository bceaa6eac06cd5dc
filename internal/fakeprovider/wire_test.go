package fakeprovider

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// Both formats answer a commit-summary prompt with the JSON array the
// prompt asks for, every commit by its full hash.
func TestCommitPrompt(t *testing.T) {
	srv := Start(t, Config{})
	req, hashes := commitRequest(3)
	commits := prompt.Parse(req.Messages[0].Content)
	for _, format := range []string{OpenAI, Anthropic} {
		t.Run(format, func(t *testing.T) {
			a := decodeAnswer(t, format, send(t, srv, format, "k", req))
			got, missing := prompt.ParseAnswer(a.text, hashes)
			if len(missing) > 0 {
				t.Fatalf("missing %v in %s", missing, a.text)
			}
			for _, c := range commits {
				if got[c.Hash].Summary != Summary(c) {
					t.Errorf("%s: %q, want %q", c.Hash, got[c.Hash].Summary, Summary(c))
				}
			}
			var want []prompt.Answer
			for _, c := range commits {
				want = append(want, prompt.Answer{Commit: c.Hash, Summary: Summary(c)})
			}
			if a.text != prompt.FormatAnswer(want) {
				t.Errorf("answer %s, want %s", a.text, prompt.FormatAnswer(want))
			}
			if a.model != "m-1" || a.finish != map[string]string{OpenAI: "stop", Anthropic: "end_turn"}[format] {
				t.Errorf("model %q, finish %q", a.model, a.finish)
			}
			if want := srv.Estimate(req) - req.MaxTokens; a.input != want {
				t.Errorf("input tokens %d, want %d", a.input, want)
			}
		})
	}
	// Without commits: a short deterministic echo.
	a := decodeAnswer(t, OpenAI, send(t, srv, OpenAI, "k", simple("  what   is\nthis?", 50)))
	if a.text != "fake answer: what is this?" {
		t.Errorf("echo %q", a.text)
	}
}

func TestShuffleAndDrop(t *testing.T) {
	req, hashes := commitRequest(5)
	order := func(text string) []string {
		var out []string
		for _, a := range answersOf(t, text) {
			out = append(out, a.Commit)
		}
		return out
	}
	t.Run("shuffle", func(t *testing.T) {
		srv := Start(t, Config{ShuffleBatch: true, Faults: FaultConfig{Seed: 7}})
		for _, format := range []string{OpenAI, Anthropic} {
			got := order(decodeAnswer(t, format, send(t, srv, format, "k", req)).text)
			if slices.Equal(got, hashes) {
				t.Errorf("%s: order unchanged", format)
			}
			if !slices.Equal(slices.Sorted(slices.Values(got)), hashes) {
				t.Errorf("%s: answered %v, want a permutation of %v", format, got, hashes)
			}
		}
	})
	t.Run("drop", func(t *testing.T) {
		srv := Start(t, Config{DropOne: true})
		for _, format := range []string{OpenAI, Anthropic} {
			text := decodeAnswer(t, format, send(t, srv, format, "k", req)).text
			if got := order(text); !slices.Equal(got, hashes[:4]) {
				t.Errorf("%s: answered %v, want %v", format, got, hashes[:4])
			}
			_, missing := prompt.ParseAnswer(text, hashes)
			if !slices.Equal(missing, hashes[4:]) {
				t.Errorf("%s: missing %v", format, missing)
			}
			// Asked again alone, it is answered.
			one, h := commitRequest(1)
			if _, missing := prompt.ParseAnswer(decodeAnswer(t, format, send(t, srv, format, "k", one)).text, h); len(missing) > 0 {
				t.Errorf("%s: a single commit was dropped", format)
			}
		}
	})
	t.Run("both", func(t *testing.T) {
		srv := Start(t, Config{DropOne: true, ShuffleBatch: true})
		got := order(decodeAnswer(t, OpenAI, send(t, srv, OpenAI, "k", req)).text)
		if len(got) != 4 || slices.Contains(got, hashes[4]) || slices.Equal(got, hashes[:4]) {
			t.Errorf("answered %v", got)
		}
	})
	t.Run("custom answer", func(t *testing.T) {
		srv := Start(t, Config{DropOne: true, Answer: func(r Received) string {
			return prompt.FormatAnswer([]prompt.Answer{{Commit: "a", Summary: "x"}, {Commit: "b", Summary: "y"}})
		}})
		if got := order(decodeAnswer(t, OpenAI, send(t, srv, OpenAI, "k", req)).text); !slices.Equal(got, []string{"a"}) {
			t.Errorf("answered %v", got)
		}
	})
}

func answersOf(t *testing.T, text string) []prompt.Answer {
	t.Helper()
	var out []prompt.Answer
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("answer %q is not a JSON array of answers: %v", text, err)
	}
	return out
}

func TestAuth(t *testing.T) {
	const key = "sk-right-key-0123456789"
	srv := Start(t, Config{APIKey: key, SendLimitHeaders: true, RPM: 100})
	t.Run("openai", func(t *testing.T) {
		r := send(t, srv, OpenAI, "sk-wrong-key-9876543210", simple("hi", 5))
		e := decodeError(t, OpenAI, r)
		if r.status != 401 || e.typ != "invalid_request_error" || e.code != "invalid_api_key" || !strings.Contains(e.message, "Incorrect API key provided: sk-****************3210") {
			t.Errorf("wrong key: %d %+v", r.status, e)
		}
		if strings.Contains(string(r.body), "sk-wrong-key-9876543210") {
			t.Errorf("the 401 repeats the whole key")
		}
		if r.header.Get("x-ratelimit-limit-requests") != "" {
			t.Errorf("limit headers before the key check")
		}
		r = send(t, srv, OpenAI, "", simple("hi", 5))
		if e := decodeError(t, OpenAI, r); r.status != 401 || !strings.Contains(e.message, "You didn't provide an API key") {
			t.Errorf("no key: %d %+v", r.status, e)
		}
		if r := send(t, srv, OpenAI, key, simple("hi", 5)); r.status != 200 {
			t.Errorf("right key: %d %s", r.status, r.body)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		r := send(t, srv, Anthropic, "sk-wrong", simple("hi", 5))
		if e := decodeError(t, Anthropic, r); r.status != 401 || e.typ != "authentication_error" || e.message != "invalid x-api-key" {
			t.Errorf("wrong key: %d %+v", r.status, e)
		}
		r = send(t, srv, Anthropic, "", simple("hi", 5))
		if e := decodeError(t, Anthropic, r); r.status != 401 || e.typ != "authentication_error" {
			t.Errorf("no key: %d %+v", r.status, e)
		}
		// An OpenAI-style bearer token is not an Anthropic key.
		h := headers(Anthropic, "")
		h["Authorization"] = "Bearer " + key
		r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+AnthropicPath, h, encode(t, Anthropic, simple("hi", 5)))
		if err != nil || r.status != 401 {
			t.Errorf("bearer to Anthropic: %d %v", r.status, err)
		}
		if r := send(t, srv, Anthropic, key, simple("hi", 5)); r.status != 200 {
			t.Errorf("right key: %d %s", r.status, r.body)
		}
	})
	if st := srv.Stats(); st.Unauthorized != 5 || st.Succeeded != 2 {
		t.Errorf("stats: %d unauthorized, %d succeeded; want 5, 2", st.Unauthorized, st.Succeeded)
	}
}

func TestBadRequests(t *testing.T) {
	srv := Start(t, Config{})
	tests := []struct {
		name, format, method, path string
		header                     map[string]string
		body                       string
		status                     int
		typ, param, mention        string
	}{
		{"openai invalid json", OpenAI, "POST", OpenAIPath, nil, `{"model":`, 400, "invalid_request_error", "", "could not parse the JSON body"},
		{"openai not an object", OpenAI, "POST", OpenAIPath, nil, `[1]`, 400, "invalid_request_error", "", "could not parse"},
		{"openai no model", OpenAI, "POST", OpenAIPath, nil, `{"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "must provide a model"},
		{"openai no messages", OpenAI, "POST", OpenAIPath, nil, `{"model":"m"}`, 400, "invalid_request_error", "messages", "Missing required parameter: 'messages'"},
		{"openai empty messages", OpenAI, "POST", OpenAIPath, nil, `{"model":"m","messages":[]}`, 400, "invalid_request_error", "messages", "empty array"},
		{"openai bad role", OpenAI, "POST", OpenAIPath, nil, `{"model":"m","messages":[{"role":"robot","content":"hi"}]}`, 400, "invalid_request_error", "messages[0].role", "robot"},
		{"openai model type", OpenAI, "POST", OpenAIPath, nil, `{"model":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "model", "Invalid type"},
		{"openai temperature", OpenAI, "POST", OpenAIPath, nil, `{"model":"m","temperature":3,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "temperature", "<= 2"},
		{"openai max tokens", OpenAI, "POST", OpenAIPath, nil, `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens", ">= 1"},
		{"openai stream", OpenAI, "POST", OpenAIPath, nil, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "stream", "stream"},
		{"openai unknown path", OpenAI, "POST", "/v1/completions", nil, `{}`, 404, "invalid_request_error", "", "Invalid URL (POST /v1/completions)"},
		{"openai no /v1", OpenAI, "POST", "/chat/completions", nil, `{}`, 404, "invalid_request_error", "", "Invalid URL"},
		{"openai GET", OpenAI, "GET", OpenAIPath, nil, ``, 405, "invalid_request_error", "", "Method Not Allowed"},
		{"anthropic invalid json", Anthropic, "POST", AnthropicPath, headers(Anthropic, ""), `nope`, 400, "invalid_request_error", "", "invalid JSON"},
		{"anthropic no model", Anthropic, "POST", AnthropicPath, headers(Anthropic, ""), `{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "model: Field required"},
		{"anthropic no messages", Anthropic, "POST", AnthropicPath, headers(Anthropic, ""), `{"model":"m","max_tokens":5}`, 400, "invalid_request_error", "", "messages: Field required"},
		{"anthropic no max_tokens", Anthropic, "POST", AnthropicPath, headers(Anthropic, ""), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "max_tokens: Field required"},
		{"anthropic system role", Anthropic, "POST", AnthropicPath, headers(Anthropic, ""), `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"},{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "top-level `system`"},
		{"anthropic temperature", Anthropic, "POST", AnthropicPath, headers(Anthropic, ""), `{"model":"m","max_tokens":5,"temperature":1.5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "less than or equal to 1"},
		{"anthropic no version", Anthropic, "POST", AnthropicPath, map[string]string{"x-api-key": "k"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "", "anthropic-version: header is required"},
		{"anthropic unknown path", Anthropic, "POST", "/v1/complete", headers(Anthropic, "k"), `{}`, 404, "not_found_error", "", "Not Found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := do(t, context.Background(), srv.Client(), tt.method, srv.URL()+tt.path, tt.header, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			e := decodeError(t, tt.format, r)
			if e.typ != tt.typ || e.param != tt.param || !strings.Contains(e.message, tt.mention) {
				t.Errorf("error %+v, want type %q, param %q, mentioning %q", e, tt.typ, tt.param, tt.mention)
			}
		})
	}
	st := srv.Stats()
	if st.NotFound != 3 || st.BadRequest != len(tests)-3 || st.Succeeded != 0 {
		t.Errorf("stats: %d not found, %d bad; want 3, %d", st.NotFound, st.BadRequest, len(tests)-3)
	}
}

// What the clients sent is recorded as understood, in both formats, content
// parts included.
func TestRequestsRecorded(t *testing.T) {
	srv := Start(t, Config{})
	temp := 0.5
	req := provider.Request{Model: "gpt-x", System: "be brief", MaxTokens: 77, Temperature: &temp,
		Messages: []provider.Message{{Role: "user", Content: "one"}, {Role: "assistant", Content: "two"}, {Role: "user", Content: "three"}}}
	send(t, srv, OpenAI, "sk-1", req)
	send(t, srv, Anthropic, "sk-2", req)
	// Content as parts, max_completion_tokens, a developer message.
	body := `{"model":"gpt-y","max_completion_tokens":9,"messages":[{"role":"developer","content":"dev"},{"role":"system","content":[{"type":"text","text":"sys"}]},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]}`
	if r, err := do(t, context.Background(), srv.Client(), "POST", srv.OpenAIBaseURL()+"/chat/completions", nil, []byte(body)); err != nil || r.status != 200 {
		t.Fatalf("%v %d %s", err, r.status, r.body)
	}
	body = `{"model":"claude-z","max_tokens":3,"system":[{"type":"text","text":"s1"},{"type":"text","text":"s2"}],"messages":[{"role":"user","content":[{"type":"text","text":"hello"}]}]}`
	if r, err := do(t, context.Background(), srv.Client(), "POST", srv.AnthropicBaseURL()+"/v1/messages", headers(Anthropic, ""), []byte(body)); err != nil || r.status != 200 {
		t.Fatalf("%v %d %s", err, r.status, r.body)
	}

	got := srv.Requests()
	if len(got) != 4 {
		t.Fatalf("%d requests", len(got))
	}
	for i, format := range []string{OpenAI, Anthropic} {
		g := got[i]
		if g.Format != format || g.Path != path(format) || g.Model != "gpt-x" || g.System != "be brief" || g.MaxTokens != 77 ||
			g.Temperature == nil || *g.Temperature != 0.5 || !slices.Equal(g.Messages, req.Messages) || g.Status != 200 || len(g.Body) == 0 || g.At.IsZero() {
			t.Errorf("%s: recorded %+v", format, g)
		}
	}
	if got[0].Header.Get("Authorization") != "Bearer sk-1" || got[1].Header.Get("x-api-key") != "sk-2" || got[1].Header.Get("anthropic-version") == "" {
		t.Errorf("headers not recorded")
	}
	if g := got[2]; g.System != "dev\n\nsys" || g.MaxTokens != 9 || g.Temperature != nil || len(g.Messages) != 1 || g.Messages[0].Content != "ab" {
		t.Errorf("parts: recorded %+v", g)
	}
	if g := got[3]; g.System != "s1s2" || g.MaxTokens != 3 || g.Messages[0].Content != "hello" {
		t.Errorf("anthropic blocks: recorded %+v", g)
	}
}

// An answer longer than max_tokens is cut, and says so.
func TestMaxTokensTruncates(t *testing.T) {
	srv := Start(t, Config{Answer: func(Received) string { return strings.Repeat("word ", 40) }})
	for _, format := range []string{OpenAI, Anthropic} {
		a := decodeAnswer(t, format, send(t, srv, format, "k", simple("hi", 3)))
		if a.output != 3 || quarterRunes(a.text) > 3 || len(a.text) != 12 {
			t.Errorf("%s: %q, %d output tokens", format, a.text, a.output)
		}
		if a.finish != map[string]string{OpenAI: "length", Anthropic: "max_tokens"}[format] {
			t.Errorf("%s: finish %q", format, a.finish)
		}
	}
}

// A token counter replaces ceil(runes/4) everywhere.
func TestCountTokens(t *testing.T) {
	srv := Start(t, Config{TPM: 100, CountTokens: func(s string) int { return len(strings.Fields(s)) }})
	req := simple("one two three", 10)
	if got := srv.Estimate(req); got != 13 {
		t.Errorf("Estimate = %d, want 13", got)
	}
	a := decodeAnswer(t, Anthropic, send(t, srv, Anthropic, "k", req))
	if a.input != 3 || a.output != len(strings.Fields(a.text)) {
		t.Errorf("usage %d, %d for %q", a.input, a.output, a.text)
	}
	if st := srv.Stats(); st.Admitted[0].Tokens != 13 {
		t.Errorf("charged %d tokens", st.Admitted[0].Tokens)
	}
}
