package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// clock is a manual clock for exact limiter tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(start time.Time, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = start.Add(d)
}

// reply is a raw HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request with plain net/http.
func do(t testing.TB, ctx context.Context, c *http.Client, method, url string, header map[string]string, body []byte) (reply, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// headers are a format's auth headers for key ("" sends none).
func headers(format, key string) map[string]string {
	h := map[string]string{}
	if format == OpenAI {
		if key != "" {
			h["Authorization"] = "Bearer " + key
		}
		return h
	}
	if key != "" {
		h["x-api-key"] = key
	}
	h["anthropic-version"] = "2023-06-01"
	return h
}

// encode writes req in the format's wire shape.
func encode(t testing.TB, format string, req provider.Request) []byte {
	t.Helper()
	var msgs []map[string]any
	body := map[string]any{"model": req.Model}
	if format == OpenAI {
		if req.System != "" {
			msgs = append(msgs, map[string]any{"role": "system", "content": req.System})
		}
		if req.MaxTokens > 0 {
			body["max_tokens"] = req.MaxTokens
		}
	} else {
		if req.System != "" {
			body["system"] = req.System
		}
		body["max_tokens"] = req.MaxTokens
	}
	for _, m := range req.Messages {
		msgs = append(msgs, map[string]any{"role": m.Role, "content": m.Content})
	}
	body["messages"] = msgs
	if req.Temperature != nil {
		body["temperature"] = *req.Temperature
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func path(format string) string {
	if format == OpenAI {
		return OpenAIPath
	}
	return AnthropicPath
}

// send posts req in format to srv and fails the test on a transport error.
func send(t testing.TB, srv *Server, format, key string, req provider.Request) reply {
	t.Helper()
	r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+path(format), headers(format, key), encode(t, format, req))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// simple is a small request.
func simple(text string, maxTokens int) provider.Request {
	return provider.Request{Model: "m-1", Messages: []provider.Message{{Role: "user", Content: text}}, MaxTokens: maxTokens}
}

// answered is a 200's text, usage and finish reason, read strictly.
type answered struct {
	text           string
	input, output  int
	finish, model  string
	id, objectType string
}

func decodeAnswer(t testing.TB, format string, r reply) answered {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if format == OpenAI {
		var v struct {
			ID                string `json:"id"`
			Object            string `json:"object"`
			Created           int64  `json:"created"`
			Model             string `json:"model"`
			SystemFingerprint string `json:"system_fingerprint"`
			Choices           []struct {
				Index   int `json:"index"`
				Message struct {
					Role    string  `json:"role"`
					Content string  `json:"content"`
					Refusal *string `json:"refusal"`
				} `json:"message"`
				Logprobs     any    `json:"logprobs"`
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				PromptTokens        int `json:"prompt_tokens"`
				CompletionTokens    int `json:"completion_tokens"`
				TotalTokens         int `json:"total_tokens"`
				PromptTokensDetails *struct {
					CachedTokens int `json:"cached_tokens"`
				} `json:"prompt_tokens_details"`
			} `json:"usage"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decode %s: %v", r.body, err)
		}
		if len(v.Choices) != 1 || v.Choices[0].Message.Role != "assistant" || v.Object != "chat.completion" {
			t.Fatalf("not a chat completion: %s", r.body)
		}
		if v.Usage.TotalTokens != v.Usage.PromptTokens+v.Usage.CompletionTokens {
			t.Errorf("total_tokens %d != %d + %d", v.Usage.TotalTokens, v.Usage.PromptTokens, v.Usage.CompletionTokens)
		}
		text, finish := v.Choices[0].Message.Content, v.Choices[0].FinishReason
		if ref := v.Choices[0].Message.Refusal; ref != nil {
			text, finish = *ref, "refusal"
		}
		return answered{text, v.Usage.PromptTokens, v.Usage.CompletionTokens, finish, v.Model, v.ID, v.Object}
	}
	var v struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Role    string `json:"role"`
		Model   string `json:"model"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
		StopDetails  *struct {
			Type        string  `json:"type"`
			Category    *string `json:"category"`
			Explanation string  `json:"explanation"`
		} `json:"stop_details"`
		Usage struct {
			InputTokens              int `json:"input_tokens"`
			OutputTokens             int `json:"output_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	if v.StopReason == "refusal" && v.StopDetails != nil && len(v.Content) == 0 {
		return answered{v.StopDetails.Explanation, v.Usage.InputTokens, v.Usage.OutputTokens, v.StopReason, v.Model, v.ID, v.Type}
	}
	if v.Type != "message" || v.Role != "assistant" || len(v.Content) != 1 || v.Content[0].Type != "text" {
		t.Fatalf("not a message: %s", r.body)
	}
	return answered{v.Content[0].Text, v.Usage.InputTokens, v.Usage.OutputTokens, v.StopReason, v.Model, v.ID, v.Type}
}

// apiErr is an error body, read strictly.
type apiErr struct{ typ, code, param, message string }

func decodeError(t testing.TB, format string, r reply) apiErr {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if format == OpenAI {
		var v struct {
			Error *struct {
				Message *string `json:"message"`
				Type    *string `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := dec.Decode(&v); err != nil || v.Error == nil || v.Error.Message == nil || v.Error.Type == nil {
			t.Fatalf("not an OpenAI error body (%v): %s", err, r.body)
		}
		// param and code are present, possibly null.
		var keys map[string]map[string]any
		json.Unmarshal(r.body, &keys) //nolint:errcheck // decoded above
		for _, k := range []string{"message", "type", "param", "code"} {
			if _, ok := keys["error"][k]; !ok {
				t.Errorf("error body lacks %q: %s", k, r.body)
			}
		}
		e := apiErr{typ: *v.Error.Type, message: *v.Error.Message}
		if v.Error.Code != nil {
			e.code = *v.Error.Code
		}
		if v.Error.Param != nil {
			e.param = *v.Error.Param
		}
		return e
	}
	var v struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if err := dec.Decode(&v); err != nil || v.Type != "error" || v.Error == nil || v.Error.Type == "" || v.Error.Message == "" {
		t.Fatalf("not an Anthropic error body (%v): %s", err, r.body)
	}
	return apiErr{typ: v.Error.Type, message: v.Error.Message}
}

// hash is a fake 40-hex commit hash.
func hash(i int) string { return fmt.Sprintf("%040x", 0xabc000+i) }

// commitRequest is a commit-summary request for n commits.
func commitRequest(n int) (provider.Request, []string) {
	var commits []prompt.Commit
	var hashes []string
	for i := range n {
		h := hash(i)
		hashes = append(hashes, h)
		commits = append(commits, prompt.Commit{
			Hash: h, Author: "A U Thor <a@example.com>", Date: "2026-01-02",
			Message: fmt.Sprintf("Change number %d\n\nBecause reasons.", i),
			Files:   []prompt.File{{Status: 'M', Path: fmt.Sprintf("f%d.go", i), Added: 1, Removed: 1}},
			Diff:    fmt.Sprintf("diff --git a/f%d.go b/f%d.go\n-old\n+new\n", i, i),
		})
	}
	return prompt.Request("m-1", commits), hashes
}

// noHandlers waits for every handler goroutine of the package to end.
func noHandlers(t testing.TB) {
	t.Helper()
	var stacks string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "fakeprovider.(*Server).serveHTTP") {
			return
		}
	}
	t.Fatalf("handler goroutines left after Close:\n%s", stacks)
}
