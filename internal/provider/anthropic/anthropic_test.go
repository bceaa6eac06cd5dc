package anthropic_test

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
	"github.com/digest-cli/digest/internal/provider/anthropic"
)

// secret is distinctive so that any leak into an error string is caught.
const secret = "sk-ant-api03-DIGESTTEST-4c2e8a1f9b3d5e7a0c6f2b8d4e1a9c3f-QQ"

type captured struct {
	method, path string
	header       http.Header
	body         map[string]any
}

type reply struct {
	status int
	header map[string]string
	body   string
}

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
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", "req_011CbrFTcXhtiMzr3s6EocF7")
		for k, v := range rep.header {
			w.Header().Set(k, v)
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

const answer = `{
  "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
  "type": "message",
  "role": "assistant",
  "model": "claude-haiku-4-5-20251001",
  "content": [
    {"type": "thinking", "thinking": "Let me look at the diff.", "signature": "EqQBCgIYAhIM"},
    {"type": "text", "text": "Adds a handler. "},
    {"type": "text", "text": "Fixes a panic."}
  ],
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 503, "service_tier": "standard"}
}`

func ptr(f float64) *float64 { return &f }

func request() provider.Request {
	return provider.Request{
		Model:    "claude-haiku-4-5",
		System:   "You summarize commits.",
		Messages: []provider.Message{{Role: "user", Content: "Summarize abc123."}},
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

func assertJSON(t *testing.T, got, want map[string]any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("request body\n got %s\nwant %s", g, w)
	}
}

func TestCompleteSendsRequestAndReadsAnswer(t *testing.T) {
	reset := time.Now().Add(30 * time.Second).UTC().Format(time.RFC3339)
	srv, got := server(t, reply{
		header: map[string]string{
			"anthropic-ratelimit-requests-limit":          "50",
			"anthropic-ratelimit-requests-remaining":      "49",
			"anthropic-ratelimit-requests-reset":          reset,
			"anthropic-ratelimit-tokens-limit":            "48000",
			"anthropic-ratelimit-tokens-remaining":        "45000",
			"anthropic-ratelimit-tokens-reset":            reset,
			"anthropic-ratelimit-input-tokens-limit":      "40000",
			"anthropic-ratelimit-input-tokens-remaining":  "38000",
			"anthropic-ratelimit-input-tokens-reset":      reset,
			"anthropic-ratelimit-output-tokens-limit":     "8000",
			"anthropic-ratelimit-output-tokens-remaining": "7000",
			"anthropic-ratelimit-output-tokens-reset":     reset,
			"anthropic-organization-id":                   "0f5bf36a-5f91-4bfc-bc46-51c081ffd023",
		},
		body: answer,
	})
	req := request()
	req.MaxTokens = 600
	req.Temperature = ptr(0)
	req.Messages = append(req.Messages, provider.Message{Role: "assistant", Content: "Sure."}, provider.Message{Role: "user", Content: "Go on."})
	c := anthropic.New(anthropic.Options{BaseURL: srv.URL + "/", APIKey: secret})

	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPost || got.path != "/v1/messages" {
		t.Errorf("request = %s %s, want POST /v1/messages", got.method, got.path)
	}
	for k, want := range map[string]string{"x-api-key": secret, "anthropic-version": "2023-06-01", "Content-Type": "application/json"} {
		if v := got.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	if v, ok := got.header["Authorization"]; ok {
		t.Errorf("Authorization header sent: %q", v)
	}
	assertJSON(t, got.body, map[string]any{
		"model":      "claude-haiku-4-5",
		"max_tokens": 600.0,
		"system":     "You summarize commits.",
		"messages": []any{
			map[string]any{"role": "user", "content": "Summarize abc123."},
			map[string]any{"role": "assistant", "content": "Sure."},
			map[string]any{"role": "user", "content": "Go on."},
		},
		"temperature": 0.0, // an explicit 0 is sent, not dropped
	})

	if resp.Text != "Adds a handler. Fixes a panic." {
		t.Errorf("Text = %q, want the text blocks joined", resp.Text)
	}
	if resp.Usage != (provider.Usage{InputTokens: 2095, OutputTokens: 503}) {
		t.Errorf("Usage = %+v", resp.Usage)
	}
	l := resp.Limits
	if l == nil || l.RequestsLimit != 50 || l.RequestsRemaining != 49 || l.TokensLimit != 48000 || l.TokensRemaining != 45000 {
		t.Fatalf("Limits = %+v, want requests 50/49 and tokens-* 48000/45000", l)
	}
	for _, d := range []time.Duration{l.RequestsReset, l.TokensReset} {
		if d < 25*time.Second || d > 31*time.Second {
			t.Errorf("reset = %v, want about 30s from an RFC 3339 time", d)
		}
	}
}

func TestCompleteDefaultsAndOmissions(t *testing.T) {
	srv, got := server(t, reply{body: `{"id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":0}}`})
	resp, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(context.Background(), provider.Request{
		Model:    "claude-sonnet-4-5",
		Messages: []provider.Message{{Role: "user", Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got.body, map[string]any{
		"model":      "claude-sonnet-4-5",
		"max_tokens": 1024.0,
		"messages":   []any{map[string]any{"role": "user", "content": "hi"}},
	})
	if _, ok := got.header["X-Api-Key"]; ok {
		t.Error("x-api-key sent without a key")
	}
	if resp.Text != "" || resp.Limits != nil || resp.Usage.InputTokens != 3 {
		t.Errorf("resp = %+v, want empty text, nil Limits, 3 input tokens", resp)
	}
}

func TestLimitsFallBackToInputTokens(t *testing.T) {
	srv, _ := server(t, reply{
		header: map[string]string{
			"anthropic-ratelimit-input-tokens-limit":     "40000",
			"anthropic-ratelimit-input-tokens-remaining": "39000",
			"anthropic-ratelimit-input-tokens-reset":     "2015-10-21T07:28:00Z",
		},
		body: answer,
	})
	resp, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	want := provider.NoLimits()
	want.TokensLimit, want.TokensRemaining = 40000, 39000
	if resp.Limits == nil || *resp.Limits != want {
		t.Errorf("Limits = %+v, want %+v (a past reset is no wait)", resp.Limits, want)
	}
}

func errorJSON(typ, message string) string {
	m, _ := json.Marshal(message)
	return `{"type":"error","error":{"type":"` + typ + `","message":` + string(m) + `},"request_id":"req_011CZ47RMLnx1JoJXRrzzSde"}`
}

func TestStatusClassification(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		kind   provider.Kind
		typ    string
		hint   string
	}{
		{"400", 400, errorJSON("invalid_request_error", "messages: roles must alternate between \"user\" and \"assistant\""), provider.Permanent, "invalid_request_error", ""},
		{"400 credit", 400, errorJSON("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."), provider.Fatal, "invalid_request_error", "Plans & Billing"},
		{"400 usage limits", 400, errorJSON("invalid_request_error", "You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."), provider.Fatal, "invalid_request_error", "spend limits"},
		{"401", 401, errorJSON("authentication_error", "invalid x-api-key"), provider.Fatal, "authentication_error", "Try: export ANTHROPIC_API_KEY=<your key>"},
		{"402", 402, errorJSON("billing_error", "Your organization has no valid payment method"), provider.Fatal, "billing_error", "Plans & Billing"},
		{"403", 403, errorJSON("permission_error", "Your API key does not have permission to use the specified resource."), provider.Fatal, "permission_error", "ANTHROPIC_API_KEY"},
		{"404", 404, errorJSON("not_found_error", "model: claude-nonexistent"), provider.Permanent, "not_found_error", `check the model name "claude-haiku-4-5"`},
		{"404 path", 404, "404 page not found", provider.Permanent, "", "check the base URL"},
		{"404 path, as JSON", 404, errorJSON("not_found_error", "Not Found"), provider.Permanent, "not_found_error", "check the base URL"},
		{"408", 408, errorJSON("timeout_error", "Request timed out"), provider.Transient, "timeout_error", ""},
		{"409", 409, errorJSON("conflict_error", "Conflict"), provider.Transient, "conflict_error", ""},
		{"413", 413, errorJSON("request_too_large", "Request exceeds the maximum allowed number of bytes."), provider.Permanent, "request_too_large", ""},
		{"429", 429, errorJSON("rate_limit_error", "This request would exceed the rate limit for your organization of 50,000 input tokens per minute."), provider.RateLimited, "rate_limit_error", ""},
		{"429 spend", 429, errorJSON("enforced_spend_limit_reached", "Your workspace has reached its spend limit."), provider.Fatal, "enforced_spend_limit_reached", "spend limits"},
		{"500", 500, errorJSON("api_error", "Internal server error"), provider.Transient, "api_error", ""},
		{"502", 502, "<html><body>Bad gateway</body></html>", provider.Transient, "", ""},
		{"503", 503, errorJSON("api_error", "Service unavailable"), provider.Transient, "api_error", ""},
		{"504", 504, errorJSON("timeout_error", "Gateway timeout"), provider.Transient, "timeout_error", ""},
		{"529", 529, errorJSON("overloaded_error", "Overloaded"), provider.Overloaded, "overloaded_error", ""},
		{"529 bare", 529, "", provider.Overloaded, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, reply{status: tt.status, body: tt.body, header: map[string]string{
				"anthropic-ratelimit-requests-limit": "50", "anthropic-ratelimit-requests-remaining": "0",
			}})
			c := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: secret})
			_, err := c.Complete(context.Background(), request())
			pe := providerError(t, err)
			if pe.Kind != tt.kind || pe.StatusCode != tt.status || pe.Type != tt.typ || pe.Provider != "anthropic" {
				t.Errorf("got kind %v status %d type %q provider %q; want %v %d %q anthropic (%v)", pe.Kind, pe.StatusCode, pe.Type, pe.Provider, tt.kind, tt.status, tt.typ, err)
			}
			if tt.hint == "" && pe.Hint != "" || !strings.Contains(pe.Hint, tt.hint) {
				t.Errorf("Hint = %q, want %q", pe.Hint, tt.hint)
			}
			if pe.Message == "" || strings.Contains(pe.Message, "<") || strings.Contains(err.Error(), "\n") {
				t.Errorf("Message = %q, Error() = %q: want one non-empty line without markup", pe.Message, err)
			}
			if pe.Limits == nil || pe.Limits.RequestsRemaining != 0 {
				t.Errorf("Limits = %+v, want the headers' state attached", pe.Limits)
			}
		})
	}
}

func TestRetryAfterAndShouldRetry(t *testing.T) {
	tests := []struct {
		name     string
		header   map[string]string
		min, max time.Duration
		should   any
	}{
		{"seconds", map[string]string{"retry-after": "17"}, 17 * time.Second, 17 * time.Second, nil},
		{"ms", map[string]string{"retry-after-ms": "1200", "retry-after": "2"}, 1200 * time.Millisecond, 1200 * time.Millisecond, nil},
		{"http date", map[string]string{"retry-after": time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)}, 18 * time.Second, 21 * time.Second, nil},
		{"should retry false", map[string]string{"x-should-retry": "false"}, 0, 0, false},
		{"should retry true", map[string]string{"x-should-retry": "true", "retry-after": "1"}, time.Second, time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, reply{status: 429, header: tt.header, body: errorJSON("rate_limit_error", "Number of requests has exceeded your per-minute rate limit")})
			_, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(context.Background(), request())
			pe := providerError(t, err)
			if pe.RetryAfter < tt.min || pe.RetryAfter > tt.max {
				t.Errorf("RetryAfter = %v, want %v..%v", pe.RetryAfter, tt.min, tt.max)
			}
			var should any
			if pe.ShouldRetry != nil {
				should = *pe.ShouldRetry
			}
			if should != tt.should {
				t.Errorf("ShouldRetry = %v, want %v", should, tt.should)
			}
		})
	}
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
		{"not json", `upstream connect error`, provider.Malformed, "the body is not JSON"},
		{"truncated", `{"type":"message","content":[{"type":"text","text":"hal`, provider.Transient, "the JSON is cut short after 55 bytes"},
		{"not a message", `{"id":"x"}`, provider.Malformed, "the answer has no content"},
		{"another type", `{"type":"completion","completion":"x"}`, provider.Malformed, `the answer's type is "completion", not "message"`},
		{"content a string", `{"type":"message","content":"hello"}`, provider.Malformed, "content is a string, not an array"},
		{"text a number", `{"type":"message","content":[{"type":"text","text":5}]}`, provider.Malformed, "content[0].text is a number, not a string"},
		{"error in a 200", errorJSON("overloaded_error", "Overloaded"), provider.Transient, "overloaded_error: an error instead of an answer: Overloaded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := server(t, reply{body: c.body})
			_, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(context.Background(), request())
			pe := providerError(t, err)
			if pe.Kind != c.kind || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %q (%v), want %v saying %q", err, pe.Kind, c.kind, c.want)
			}
			if c.kind == provider.Malformed && !strings.HasPrefix(err.Error(), "anthropic: HTTP 200 with an unreadable body: ") {
				t.Errorf("%q does not say the 200 was unreadable", err)
			}
		})
	}
}

// Usage is the server's word, held to what the request could have used,
// as for OpenAI; the cap is the max_tokens actually sent (the default,
// here).
func TestUsageIsHeldToWhatTheRequestCouldUse(t *testing.T) {
	sent := request()
	sent.MaxTokens = anthropic.DefaultMaxTokens
	inBound, outBound := provider.InputBound(sent), provider.OutputBound(sent)
	for _, c := range []struct {
		usage   string
		in, out int
	}{
		{`{"input_tokens": 25, "output_tokens": 7}`, 25, 7},
		{`{"input_tokens": -5, "output_tokens": -1}`, 0, 0},
		{`{"input_tokens": 1e15, "output_tokens": 1000000000}`, inBound, outBound},
		{`"lots"`, 0, 0},
	} {
		body := `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"usage":` + c.usage + `}`
		srv, _ := server(t, reply{body: body})
		resp, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(context.Background(), request())
		if err != nil {
			t.Errorf("usage %s: %v", c.usage, err)
			continue
		}
		if want := (provider.Usage{InputTokens: c.in, OutputTokens: c.out}); resp.Usage != want {
			t.Errorf("usage %s read as %+v, want %+v", c.usage, resp.Usage, want)
		}
	}
}

// A model that repeats the key it was sent must not get it stored.
func TestKeyEchoedInAnAnswerIsScrubbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("x-api-key")
		text, _ := json.Marshal("key " + key + " / " + strings.ToUpper(key))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"type":"message","content":[{"type":"text","text":`+string(text)+`}],"usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer srv.Close()
	resp, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: secret}).Complete(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if want := "key <redacted> / <redacted>"; resp.Text != want {
		t.Errorf("Text = %q, want %q", resp.Text, want)
	}
}

func TestBaseURLWithoutSchemeIsFatal(t *testing.T) {
	_, err := anthropic.New(anthropic.Options{BaseURL: "me:secret@localhost:8080"}).Complete(context.Background(), request())
	pe := providerError(t, err)
	if pe.Kind != provider.Fatal || !strings.Contains(err.Error(), `base URL "localhost:8080" has no scheme`) || pe.Hint != "Try: http://localhost:8080" {
		t.Errorf("got %q (%v, hint %q), want fatal naming the base URL without user info", err, pe.Kind, pe.Hint)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ln.Close()
	_, err = anthropic.New(anthropic.Options{BaseURL: base}).Complete(context.Background(), request())
	pe := providerError(t, err)
	if pe.Kind != provider.Transient || !errors.Is(err, syscall.ECONNREFUSED) || pe.Hint != "Try: is the server running at "+base+"?" {
		t.Errorf("got %v (kind %v, hint %q), want transient connection refused with a hint", err, pe.Kind, pe.Hint)
	}
}

func hang(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCancellationAndTimeouts(t *testing.T) {
	srv := hang(t)
	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(ctx, request())
		if err != context.Canceled {
			t.Errorf("err = %v (%T), want context.Canceled itself", err, err)
		}
	})
	t.Run("client timeout", func(t *testing.T) {
		c := anthropic.New(anthropic.Options{BaseURL: srv.URL, HTTPClient: &http.Client{Timeout: 50 * time.Millisecond}})
		_, err := c.Complete(context.Background(), request())
		if pe := providerError(t, err); pe.Kind != provider.Transient || pe.Err == nil {
			t.Errorf("got %v, want transient with the transport error", err)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := anthropic.New(anthropic.Options{BaseURL: srv.URL}).Complete(ctx, request())
		if pe := providerError(t, err); pe.Kind != provider.Transient || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("got %v, want transient wrapping context.DeadlineExceeded", err)
		}
	})
}

func TestKeyNeverInErrors(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 429, 500, 529} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, errorJSON(r.Header.Get("x-api-key"), "invalid x-api-key "+r.Header.Get("x-api-key")))
		}))
		_, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: secret}).Complete(context.Background(), request())
		srv.Close()
		pe := providerError(t, err)
		for _, s := range []string{err.Error(), pe.Message, pe.Type, pe.Hint} {
			if strings.Contains(s, secret) {
				t.Errorf("HTTP %d: the key leaked: %q", status, s)
			}
		}
	}
	_, err := anthropic.New(anthropic.Options{BaseURL: "http://127.0.0.1:1", APIKey: secret}).Complete(context.Background(), request())
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("transport error %v leaks the key or is nil", err)
	}
}
