package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// secret is distinctive so that any leak into an error string is caught.
const secret = "sk-proj-DIGESTTEST-7f3a9c1e5b2d4f60a8e1c3b5d7f9a2c4"

// captured is what the fake server received.
type captured struct {
	method, path string
	header       http.Header
	body         map[string]any
}

// reply is what the fake server answers.
type reply struct {
	status int
	header map[string]string
	body   string
}

// server answers every request with rep and records the last one.
func server(t *testing.T, rep reply) (*httptest.Server, *captured) {
	t.Helper()
	got := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.header = r.Method, r.URL.Path, r.Header.Clone()
		data, _ := io.ReadAll(r.Body)
		got.body = nil
		if err := json.Unmarshal(data, &got.body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, data)
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		status := rep.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func completion(content, finish string) string {
	return `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [
    {
      "index": 0,
      "message": {"role": "assistant", "content": ` + content + `, "refusal": null, "annotations": []},
      "logprobs": null,
      "finish_reason": "` + finish + `"
    }
  ],
  "usage": {
    "prompt_tokens": 19,
    "completion_tokens": 10,
    "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_06737a9306"
}`
}

func ptr(f float64) *float64 { return &f }

func request(model string) provider.Request {
	return provider.Request{
		Model:    model,
		System:   "You summarize commits.",
		Messages: []provider.Message{{Role: "user", Content: "Summarize abc123."}, {Role: "assistant", Content: "Sure."}, {Role: "user", Content: "Go on."}},
	}
}

func providerError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	return pe
}

func TestCompleteSendsRequestAndReadsAnswer(t *testing.T) {
	srv, got := server(t, reply{
		header: map[string]string{
			"x-ratelimit-limit-requests":     "500",
			"x-ratelimit-remaining-requests": "499",
			"x-ratelimit-reset-requests":     "120ms",
			"x-ratelimit-limit-tokens":       "200000",
			"x-ratelimit-remaining-tokens":   "199671",
			"x-ratelimit-reset-tokens":       "6m0s",
			"openai-processing-ms":           "344",
			"x-request-id":                   "req_0123456789abcdef",
		},
		body: completion(`"Adds a \"hello\" handler."`, "stop"),
	})
	c := openai.New(openai.Options{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: secret, KeyEnv: "OPENAI_API_KEY"})
	req := request("gpt-4o-mini")
	req.MaxTokens = 300
	req.Temperature = ptr(0.2)

	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPost || got.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", got.method, got.path)
	}
	for k, want := range map[string]string{"Authorization": "Bearer " + secret, "Content-Type": "application/json"} {
		if v := got.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if ua := got.header.Get("User-Agent"); !strings.HasPrefix(ua, "digest") {
		t.Errorf("User-Agent = %q, want digest...", ua)
	}
	wantBody := map[string]any{
		"model": "gpt-4o-mini",
		"messages": []any{
			map[string]any{"role": "system", "content": "You summarize commits."},
			map[string]any{"role": "user", "content": "Summarize abc123."},
			map[string]any{"role": "assistant", "content": "Sure."},
			map[string]any{"role": "user", "content": "Go on."},
		},
		"max_tokens":  300.0,
		"temperature": 0.2,
	}
	assertJSON(t, got.body, wantBody)

	if resp.Text != `Adds a "hello" handler.` {
		t.Errorf("Text = %q", resp.Text)
	}
	if resp.Usage != (provider.Usage{InputTokens: 19, OutputTokens: 10}) {
		t.Errorf("Usage = %+v", resp.Usage)
	}
	want := provider.Limits{RequestsLimit: 500, RequestsRemaining: 499, TokensLimit: 200000, TokensRemaining: 199671,
		RequestsReset: 120 * time.Millisecond, TokensReset: 6 * time.Minute}
	if resp.Limits == nil || *resp.Limits != want {
		t.Errorf("Limits = %+v, want %+v", resp.Limits, want)
	}
}

func assertJSON(t *testing.T, got, want map[string]any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("request body\n got %s\nwant %s", g, w)
	}
}

// Ollama and other local servers: no key, no rate-limit headers, and a
// request with nothing optional in it.
func TestCompleteLocalServerMinimalRequest(t *testing.T) {
	srv, got := server(t, reply{body: completion(`"ok"`, "stop")})
	c := openai.New(openai.Options{Name: "ollama", BaseURL: srv.URL + "/v1/"})
	resp, err := c.Complete(context.Background(), provider.Request{
		Model:    "llama3.2:latest",
		Messages: []provider.Message{{Role: "user", Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.path != "/v1/chat/completions" {
		t.Errorf("path = %q (a trailing slash on BaseURL must not double)", got.path)
	}
	if v, ok := got.header["Authorization"]; ok {
		t.Errorf("Authorization sent without a key: %q", v)
	}
	assertJSON(t, got.body, map[string]any{
		"model":    "llama3.2:latest",
		"messages": []any{map[string]any{"role": "user", "content": "hi"}},
	})
	if resp.Text != "ok" || resp.Limits != nil {
		t.Errorf("resp = %+v, want text ok and nil Limits", resp)
	}
}

func TestMaxTokensFieldByModelFamily(t *testing.T) {
	tests := []struct {
		model      string
		completion bool
	}{
		{"o1", true},
		{"o1-mini", true},
		{"o3-mini", true},
		{"o3-pro-2025-06-10", true},
		{"o4-mini", true},
		{"gpt-5", true},
		{"gpt-5-mini", true},
		{"gpt-5.1", true},
		{"GPT-5-nano", true},
		{"openai/o3-mini", true},
		{"gpt-4o-mini", false},
		{"gpt-4.1", false},
		{"llama3.2:latest", false},
		{"o10-custom", false},
		{"omni-moderation", false},
		{"gpt-50", false},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			srv, got := server(t, reply{body: completion(`"ok"`, "stop")})
			req := request(tt.model)
			req.MaxTokens = 1200
			if _, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			use, other, want := "max_tokens", "max_completion_tokens", 1200.0
			if tt.completion {
				// Reasoning models get room for their hidden reasoning too.
				use, other, want = other, use, float64(1200+provider.ReasoningAllowance)
			}
			if got.body[use] != want {
				t.Errorf("%s = %v, want %v", use, got.body[use], want)
			}
			if v, ok := got.body[other]; ok {
				t.Errorf("%s = %v sent too", other, v)
			}
		})
	}
}

func TestFinishReasonLengthKeepsText(t *testing.T) {
	srv, _ := server(t, reply{body: completion(`"cut off mid"`, "length")})
	resp, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), request("llama3.2"))
	if err != nil || resp.Text != "cut off mid" {
		t.Errorf("Complete = %q, %v; want the cut text", resp.Text, err)
	}
}

func errorJSON(message, typ, code string) string {
	c := "null"
	if code != "" {
		c = `"` + code + `"`
	}
	return `{"error": {"message": "` + message + `", "type": "` + typ + `", "param": null, "code": ` + c + `}}`
}

func TestStatusClassification(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   provider.Kind
		typ    string
		hint   string // substring; "" wants no hint
	}{
		{"400", 400, errorJSON("This model's maximum context length is 128000 tokens.", "invalid_request_error", "context_length_exceeded"), provider.Permanent, "context_length_exceeded", ""},
		{"401", 401, errorJSON("Incorrect API key provided: sk-proj-****c4. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"), provider.Fatal, "invalid_api_key", "Try: export OPENAI_API_KEY=<your key>"},
		{"403", 403, errorJSON("Country, region, or territory not supported", "request_forbidden", "unsupported_country_region_territory"), provider.Fatal, "unsupported_country_region_territory", "OPENAI_API_KEY"},
		{"402", 402, `{"error":{"message":"Insufficient credits","code":402}}`, provider.Fatal, "", "billing"},
		{"404 model", 404, errorJSON("The model `gpt-9` does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"), provider.Permanent, "model_not_found", `check the model name "gpt-4o-mini"`},
		{"404 path", 404, "404 page not found", provider.Permanent, "", "check the base URL"},
		{"404 path, as JSON", 404, errorJSON("Invalid URL (POST /chat/completions)", "invalid_request_error", ""), provider.Permanent, "invalid_request_error", "check the base URL"},
		{"404 from FastAPI", 404, `{"detail":"Not Found"}`, provider.Permanent, "", "check the base URL"},
		{"408", 408, errorJSON("Request timed out.", "timeout", ""), provider.Transient, "timeout", ""},
		{"409", 409, errorJSON("Conflict", "conflict", ""), provider.Transient, "conflict", ""},
		{"413", 413, errorJSON("Request too large.", "invalid_request_error", "request_too_large"), provider.Permanent, "request_too_large", ""},
		{"422", 422, `{"detail":[{"loc":["body","messages"],"msg":"field required","type":"missing"}]}`, provider.Permanent, "", ""},
		{"429 rate", 429, errorJSON("Rate limit reached for gpt-4o-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199800, Requested 900.", "tokens", "rate_limit_exceeded"), provider.RateLimited, "rate_limit_exceeded", ""},
		{"429 quota", 429, errorJSON("You exceeded your current quota, please check your plan and billing details.", "insufficient_quota", "insufficient_quota"), provider.Fatal, "insufficient_quota", "billing"},
		{"429 hard limit", 429, errorJSON("Billing hard limit has been reached", "billing_hard_limit_reached", ""), provider.Fatal, "billing_hard_limit_reached", "billing"},
		{"429 not active", 429, errorJSON("Your account is not active, please check your billing details on our website.", "billing_not_active", "billing_not_active"), provider.Fatal, "billing_not_active", "billing"},
		{"500", 500, errorJSON("The server had an error while processing your request. Sorry about that!", "server_error", ""), provider.Transient, "server_error", ""},
		{"500 llama.cpp", 500, `{"error":{"code":500,"message":"llama_decode failed","type":"server_error"}}`, provider.Transient, "server_error", ""},
		{"502 html", 502, "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>", provider.Transient, "", ""},
		{"503", 503, errorJSON("server busy, please try again.  maximum pending requests exceeded", "api_error", ""), provider.Overloaded, "api_error", ""},
		{"504", 504, "", provider.Transient, "", ""},
		{"400 vllm", 400, `{"object":"error","message":"This model's maximum context length is 8192 tokens.","type":"BadRequestError","param":null,"code":400}`, provider.Permanent, "BadRequestError", ""},
		{"400 string error", 400, `{"error":"invalid character 'x' looking for beginning of value"}`, provider.Permanent, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, reply{status: tt.status, body: tt.body, header: map[string]string{
				"x-ratelimit-limit-requests": "500", "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s",
			}})
			c := openai.New(openai.Options{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: secret, KeyEnv: "OPENAI_API_KEY"})
			_, err := c.Complete(context.Background(), request("gpt-4o-mini"))
			pe := providerError(t, err)
			if pe.Kind != tt.kind || pe.StatusCode != tt.status || pe.Type != tt.typ || pe.Provider != "openai" {
				t.Errorf("got kind %v status %d type %q provider %q; want %v %d %q openai (%v)", pe.Kind, pe.StatusCode, pe.Type, pe.Provider, tt.kind, tt.status, tt.typ, err)
			}
			if tt.hint == "" && pe.Hint != "" || !strings.Contains(pe.Hint, tt.hint) {
				t.Errorf("Hint = %q, want %q", pe.Hint, tt.hint)
			}
			if pe.Message == "" || strings.Contains(pe.Message, "<") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Message = %q, Error() = %q: want one non-empty line without markup", pe.Message, err)
			}
			if pe.Limits == nil || pe.Limits.RequestsRemaining != 0 || pe.Limits.TokensLimit != -1 {
				t.Errorf("Limits = %+v, want the headers' state attached", pe.Limits)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name     string
		header   map[string]string
		min, max time.Duration
	}{
		{"ms", map[string]string{"retry-after-ms": "1500"}, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"ms float", map[string]string{"retry-after-ms": "250.5"}, 250500 * time.Microsecond, 250500 * time.Microsecond},
		{"ms wins", map[string]string{"retry-after-ms": "20", "retry-after": "7"}, 20 * time.Millisecond, 20 * time.Millisecond},
		{"seconds", map[string]string{"retry-after": "7"}, 7 * time.Second, 7 * time.Second},
		{"http date", map[string]string{"retry-after": time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)}, 28 * time.Second, 31 * time.Second},
		{"past date", map[string]string{"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0, 0},
		{"garbage", map[string]string{"retry-after": "soon", "retry-after-ms": "-5"}, 0, 0},
		{"none", nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, reply{status: 429, header: tt.header, body: errorJSON("Rate limit reached", "requests", "rate_limit_exceeded")})
			_, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), request("gpt-4o"))
			pe := providerError(t, err)
			if pe.RetryAfter < tt.min || pe.RetryAfter > tt.max {
				t.Errorf("RetryAfter = %v, want %v..%v", pe.RetryAfter, tt.min, tt.max)
			}
		})
	}
}

func TestShouldRetryHeader(t *testing.T) {
	for _, tt := range []struct {
		header string
		want   *bool
	}{{"true", ptrBool(true)}, {"false", ptrBool(false)}, {"", nil}, {"maybe", nil}} {
		t.Run(tt.header, func(t *testing.T) {
			srv, _ := server(t, reply{status: 500, header: map[string]string{"x-should-retry": tt.header}, body: errorJSON("boom", "server_error", "")})
			_, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), request("gpt-4o"))
			pe := providerError(t, err)
			if (pe.ShouldRetry == nil) != (tt.want == nil) || pe.ShouldRetry != nil && *pe.ShouldRetry != *tt.want {
				t.Errorf("ShouldRetry = %v, want %v", deref(pe.ShouldRetry), deref(tt.want))
			}
		})
	}
}

func ptrBool(b bool) *bool { return &b }

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// A 200 whose body cannot be read is Malformed (the engine retries it
// once) and says what was wrong; an error reported in place of an answer
// is an ordinary server failure.
func TestUnreadableSuccessSaysWhatWasWrong(t *testing.T) {
	for _, c := range []struct {
		name, body string
		kind       provider.Kind
		want       string
	}{
		{"not json", `<html>gateway</html>`, provider.Malformed, "the body is an HTML page, not JSON"},
		{"truncated", `{"choices":[{"message":{"content":"hal`, provider.Transient, "the JSON is cut short after 38 bytes"},
		{"empty", ``, provider.Malformed, "the body is empty"},
		{"an array", `[1]`, provider.Malformed, "the body is an array, not an object"},
		{"no choices", `{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}`, provider.Malformed, "the answer has no choices"},
		{"choices an object", `{"choices":{"message":{"content":"x"}}}`, provider.Malformed, "choices is an object, not an array"},
		{"message a string", `{"choices":[{"message":"x"}]}`, provider.Malformed, "choices.message is a string, not an object"},
		{"content a number", completion(`42`, "stop"), provider.Malformed, "choices[0].message.content is a number, not a string"},
		{"content an object", completion(`{"text":"x"}`, "stop"), provider.Malformed, "choices[0].message.content is an object, not a string"},
		{"text part not a string", completion(`[{"type":"text","text":7}]`, "stop"), provider.Malformed, "a text part whose text is a number"},
		{"error without a status", `{"error":{"message":"upstream closed the stream"}}`, provider.Transient, "an error instead of an answer: upstream closed the stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := server(t, reply{body: c.body})
			_, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), request("gpt-4o"))
			pe := providerError(t, err)
			if pe.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %q (%v), want %v saying %q", err, pe.Kind, c.kind, c.want)
			}
			if c.kind == provider.Malformed && !strings.HasPrefix(err.Error(), "openai: HTTP 200 with an unreadable body: ") {
				t.Errorf("%q does not say the 200 was unreadable", err)
			}
		})
	}
}

// Several OpenAI-compatible servers send content as a list of parts; the
// text parts are the answer, the others are not.
func TestContentAsAListOfPartsIsRead(t *testing.T) {
	srv, _ := server(t, reply{body: completion(`[{"type":"text","text":"Adds "},{"type":"image_url","image_url":{"url":"x"}},{"type":"output_text","text":"a handler."},{"text":"!"}]`, "stop")})
	resp, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), request("gpt-4o"))
	if err != nil || resp.Text != "Adds a handler.!" {
		t.Errorf("got %q, %v; want the text parts joined", resp.Text, err)
	}
}

// An answer past the read bound is not silently cut and then misread: it
// is unreadable, and says so.
func TestAnswerOverTheBoundIsUnreadable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"message":{"content":"`)
		chunk := strings.Repeat("a", 1<<20)
		for range 17 {
			io.WriteString(w, chunk)
		}
		io.WriteString(w, `"}}]}`)
	}))
	defer srv.Close()
	_, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), request("gpt-4o"))
	if pe := providerError(t, err); pe.Kind != provider.Malformed || !strings.Contains(err.Error(), "the answer is over 16 MiB") {
		t.Errorf("got %v (%v), want an unreadable answer over 16 MiB", err, pe.Kind)
	}
}

// Usage is the server's word, held to what the request could have used:
// negative or unreadable counts are unknown (0), absurd ones are capped at
// the most the request could use.
func TestUsageIsHeldToWhatTheRequestCouldUse(t *testing.T) {
	req := request("gpt-4o")
	req.MaxTokens = 100
	inBound, outBound := provider.InputBound(req), provider.OutputBound(req)
	for _, c := range []struct {
		usage   string
		in, out int
	}{
		{`{"prompt_tokens": 19, "completion_tokens": 10}`, 19, 10},
		{`{"prompt_tokens": "19", "completion_tokens": 10.0}`, 19, 10},
		{`{"prompt_tokens": -5, "completion_tokens": -1}`, 0, 0},
		{`{"prompt_tokens": 1e15, "completion_tokens": 1000000000000000}`, inBound, outBound},
		{`{"prompt_tokens": 1e400, "completion_tokens": 2.5}`, inBound, 0},
		{`{"prompt_tokens": null, "completion_tokens": true}`, 0, 0},
		{`"lots"`, 0, 0},
		{`null`, 0, 0},
	} {
		body := `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":` + c.usage + `}`
		srv, _ := server(t, reply{body: body})
		resp, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(context.Background(), req)
		if err != nil {
			t.Errorf("usage %s: %v", c.usage, err)
			continue
		}
		if want := (provider.Usage{InputTokens: c.in, OutputTokens: c.out}); resp.Usage != want {
			t.Errorf("usage %s read as %+v, want %+v", c.usage, resp.Usage, want)
		}
	}
}

// A model that repeats the key it was sent (here the server echoes the
// Authorization header into the answer, in every case) must not get it
// stored: the key is scrubbed from the answer's text.
func TestKeyEchoedInAnAnswerIsScrubbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		text, _ := json.Marshal("you sent " + key + ", or " + strings.ToUpper(key) + " or " + strings.ToLower(key) + ".")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion(string(text), "stop"))
	}))
	defer srv.Close()
	resp, err := openai.New(openai.Options{BaseURL: srv.URL, APIKey: secret}).Complete(context.Background(), request("gpt-4o"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "you sent <redacted>, or <redacted> or <redacted>."; resp.Text != want {
		t.Errorf("Text = %q, want %q", resp.Text, want)
	}
}

// A base URL net/http can only fail on, every time, stops the run at once
// and names the URL, without its password.
func TestUnusableBaseURLIsFatal(t *testing.T) {
	for _, c := range []struct{ base, want, hint string }{
		{"localhost:11434/v1", `base URL "localhost:11434/v1" has no scheme`, "Try: http://localhost:11434/v1"},
		{"api.example.com/v1", `base URL "api.example.com/v1" has no scheme`, "Try: https://api.example.com/v1"},
		{"ftp://user:hunter2@example.com/v1", `base URL "ftp://example.com/v1" has the scheme "ftp"`, "Try: a base URL that starts with http:// or https://"},
		{"http:///v1", `base URL "http:///v1" has no host`, "Try: a base URL such as"},
		{"http://user:hunter2@local host/v1", `base URL "http://local host/v1" is not a URL`, "Try: a base URL such as"},
	} {
		_, err := openai.New(openai.Options{BaseURL: c.base, APIKey: secret}).Complete(context.Background(), request("gpt-4o"))
		pe := providerError(t, err)
		if pe.Kind != provider.Fatal || !strings.Contains(err.Error(), c.want) || !strings.Contains(pe.Hint, c.hint) {
			t.Errorf("%s: got %q (%v), want fatal saying %q with %q", c.base, err, pe.Kind, c.want, c.hint)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "user") {
			t.Errorf("%s: the user info shows: %q", c.base, err)
		}
	}
}

// The URL in a transport error and in hints loses its user info.
func TestUserInfoNeverShows(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = openai.New(openai.Options{Name: "ollama", BaseURL: "http://admin:hunter2@" + addr + "/v1"}).Complete(context.Background(), request("llama3.2"))
	pe := providerError(t, err)
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "admin") {
		t.Errorf("the user info shows: %q", err)
	}
	if want := "Try: is the server running at http://" + addr + "/v1?"; pe.Hint != want || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("got %q (hint %q), want connection refused with hint %q", err, pe.Hint, want)
	}
	srv, _ := server(t, reply{status: 404, header: map[string]string{"Content-Type": "text/plain"}, body: "404 page not found"})
	withUser := strings.Replace(srv.URL, "http://", "http://admin:hunter2@", 1)
	_, err = openai.New(openai.Options{BaseURL: withUser}).Complete(context.Background(), request("gpt-4o"))
	if pe := providerError(t, err); strings.Contains(err.Error(), "hunter2") || !strings.Contains(pe.Hint, "check the base URL "+srv.URL) {
		t.Errorf("404: got %q, want the hint naming %s without user info", err, srv.URL)
	}
}

// OpenRouter reports an upstream failure in a 200 whose error names the
// HTTP status it stands for; it is classified as that status would be.
func TestErrorInA200IsClassifiedByItsStatus(t *testing.T) {
	for _, c := range []struct {
		body string
		kind provider.Kind
		hint string
	}{
		{`{"error":{"code":502,"message":"Provider returned error","metadata":{"provider_name":"Example"}}}`, provider.Transient, ""},
		{`{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/credits"}}`, provider.Fatal, "Try: check the billing and quota of your openrouter account"},
		{`{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min."}}`, provider.RateLimited, ""},
	} {
		srv, _ := server(t, reply{body: c.body})
		_, err := openai.New(openai.Options{Name: "openrouter", BaseURL: srv.URL}).Complete(context.Background(), request("x/y"))
		pe := providerError(t, err)
		if pe.Kind != c.kind || pe.Hint != c.hint || strings.Contains(pe.Message, "malformed") {
			t.Errorf("%s: got %v (%v, hint %q), want %v with hint %q", c.body, err, pe.Kind, pe.Hint, c.kind, c.hint)
		}
	}
}

func TestConnectionRefusedHintsAtLocalServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	_, err = openai.New(openai.Options{Name: "ollama", BaseURL: base}).Complete(context.Background(), request("llama3.2"))
	pe := providerError(t, err)
	if pe.Kind != provider.Transient || pe.Err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("got %v (kind %v, Err %v), want transient connection refused", err, pe.Kind, pe.Err)
	}
	if want := "Try: is the server running at " + base + "?"; pe.Hint != want {
		t.Errorf("Hint = %q, want %q", pe.Hint, want)
	}
}

// A host that does not exist gets a hint at the base URL; it stays
// transient (a resolver can fail for a moment), and the engine's count of
// failures in a row stops the run.
func TestUnknownHostHintsAtTheBaseURL(t *testing.T) {
	noSuchHost := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, &net.DNSError{Err: "no such host", Name: "api.openai.cmo", IsNotFound: true}
	}}}
	_, err := openai.New(openai.Options{BaseURL: "https://key:hunter2@api.openai.cmo/v1", HTTPClient: noSuchHost}).Complete(context.Background(), request("gpt-4o"))
	pe := providerError(t, err)
	if pe.Kind != provider.Transient || pe.Hint != "Try: check the host name in the base URL https://api.openai.cmo/v1" || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("got %q (%v, hint %q), want transient with a hint at the host, no user info", err, pe.Kind, pe.Hint)
	}
}

// hang is a server that answers only once the client gives up.
func hang(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCallerCancellationPassesThrough(t *testing.T) {
	srv := hang(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(ctx, request("gpt-4o"))
	if err != context.Canceled {
		t.Errorf("err = %v (%T), want context.Canceled itself", err, err)
	}
}

func TestPerRequestTimeoutIsTransient(t *testing.T) {
	srv := hang(t)
	t.Run("client timeout", func(t *testing.T) {
		c := openai.New(openai.Options{BaseURL: srv.URL, HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
		_, err := c.Complete(context.Background(), request("gpt-4o"))
		if pe := providerError(t, err); pe.Kind != provider.Transient || pe.Err == nil {
			t.Errorf("got %v, want transient with the transport error", err)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := openai.New(openai.Options{BaseURL: srv.URL}).Complete(ctx, request("gpt-4o"))
		if pe := providerError(t, err); pe.Kind != provider.Transient || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want transient wrapping context.DeadlineExceeded", err)
		}
	})
}

// A server that echoes the Authorization header back must not get the
// key into an error, whatever the status.
func TestKeyNeverInErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 429, 500, 503} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			msg, _ := json.Marshal("bad key " + r.Header.Get("Authorization"))
			io.WriteString(w, `{"error":{"message":`+string(msg)+`,"type":"`+secret+`","code":null}}`)
		}))
		_, err := openai.New(openai.Options{BaseURL: srv.URL, APIKey: secret, KeyEnv: "OPENAI_API_KEY"}).Complete(context.Background(), request("gpt-4o"))
		srv.Close()
		pe := providerError(t, err)
		for _, s := range []string{err.Error(), pe.Message, pe.Type, pe.Hint} {
			if strings.Contains(s, secret) || strings.Contains(s, secret[8:]) {
				t.Errorf("HTTP %d: the key leaked: %q", status, s)
			}
		}
	}
	_, err := openai.New(openai.Options{BaseURL: "http://127.0.0.1:1", APIKey: secret}).Complete(context.Background(), request("gpt-4o"))
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("transport error %v leaks the key or is nil", err)
	}
}
