package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

func responsesClient(srv *fakeprovider.Server, key string) *openai.ResponsesClient {
	return openai.NewResponses(openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: key, KeyEnv: "OPENAI_API_KEY", HTTPClient: srv.Client()})
}

// sentBody is the JSON body of the last request the fake recorded.
func sentBody(t *testing.T, srv *fakeprovider.Server) (fakeprovider.Received, map[string]any) {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request recorded")
	}
	last := reqs[len(reqs)-1]
	var body map[string]any
	if err := json.Unmarshal(last.Body, &body); err != nil {
		t.Fatalf("body %s: %v", last.Body, err)
	}
	return last, body
}

func TestResponsesSendsItsOwnBodyAndReadsTheAnswer(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: secret, SendLimitHeaders: true, RPM: 100, TPM: 1_000_000})
	c := responsesClient(srv, secret)
	seed := 7
	req := request("gpt-4o-mini")
	req.MaxTokens, req.Temperature, req.Seed = 300, ptr(0.2), &seed

	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	rec, body := sentBody(t, srv)
	if rec.Path != "/v1/responses" || rec.Header.Get("Authorization") != "Bearer "+secret {
		t.Errorf("sent to %s with %q", rec.Path, rec.Header.Get("Authorization"))
	}
	// No seed on this API, no system message: instructions.
	assertJSON(t, body, map[string]any{
		"model":        "gpt-4o-mini",
		"instructions": "You summarize commits.",
		"input": []any{
			map[string]any{"role": "user", "content": "Summarize abc123."},
			map[string]any{"role": "assistant", "content": "Sure."},
			map[string]any{"role": "user", "content": "Go on."},
		},
		"max_output_tokens": 300.0,
		"temperature":       0.2,
		"store":             false,
	})
	if resp.Text != "fake answer: Go on." || resp.Finish != provider.FinishStop {
		t.Errorf("answer %q, finish %q", resp.Text, resp.Finish)
	}
	if resp.Usage.InputTokens != srv.Estimate(req)-300 || resp.Usage.OutputTokens < 1 || resp.Usage.CacheReadTokens != 0 {
		t.Errorf("usage %+v, estimate %d", resp.Usage, srv.Estimate(req))
	}
	if resp.Limits == nil || resp.Limits.RequestsLimit != 100 || resp.Limits.RequestsRemaining != 99 || resp.Limits.TokensLimit != 1_000_000 {
		t.Errorf("limits %+v", resp.Limits)
	}
}

// Reasoning models: the effort goes in reasoning, the cap carries the
// reasoning allowance, and a temperature is not sent (the fake refuses one
// as the API does).
func TestResponsesReasoningModel(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := responsesClient(srv, "")
	req := request("gpt-5-pro")
	req.MaxTokens, req.Temperature, req.ReasoningEffort = 500, ptr(0.2), "high"
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, body := sentBody(t, srv)
	if body["max_output_tokens"] != float64(500+provider.ReasoningAllowance) {
		t.Errorf("max_output_tokens = %v", body["max_output_tokens"])
	}
	if r, _ := body["reasoning"].(map[string]any); r["effort"] != "high" {
		t.Errorf("reasoning = %v", body["reasoning"])
	}
	for _, k := range []string{"temperature", "seed", "max_completion_tokens", "messages", "reasoning_effort"} {
		if v, ok := body[k]; ok {
			t.Errorf("%s = %v sent", k, v)
		}
	}
	// No effort asked: none sent. A cap under the API's minimum is raised to it.
	req = request("gpt-4o")
	req.MaxTokens = 5
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, body = sentBody(t, srv); body["reasoning"] != nil || body["max_output_tokens"] != 16.0 {
		t.Errorf("reasoning %v, max_output_tokens %v", body["reasoning"], body["max_output_tokens"])
	}
}

func TestResponsesFinishes(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := responsesClient(srv, "")
	ask := func(text string, maxTokens int) provider.Response {
		t.Helper()
		resp, err := c.Complete(context.Background(), provider.Request{Model: "gpt-4o-mini", MaxTokens: maxTokens,
			Messages: []provider.Message{{Role: "user", Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if r := ask("please "+fakeprovider.RefuseTrigger, 100); r.Finish != provider.FinishRefusal || r.Text != fakeprovider.RefusalText {
		t.Errorf("refusal: %q, %q", r.Text, r.Finish)
	}
	long := strings.Repeat("word ", 40)
	full := "fake answer: " + strings.TrimSpace(long)[:64] // the default answer quotes 64 characters
	if r := ask(long, 16); r.Finish != provider.FinishLength || r.Text == "" || !strings.HasPrefix(full, r.Text) || len(r.Text) >= len(full) {
		t.Errorf("cut: %q, %q (full %q)", r.Text, r.Finish, full)
	}
	if r := ask(long+fakeprovider.ContentFilterTrigger, 1000); r.Finish != provider.FinishContentFilter || r.Text == "" {
		t.Errorf("filtered: %q, %q", r.Text, r.Finish)
	}
	if r := ask(long, 1000); r.Finish != provider.FinishStop || r.Text != full {
		t.Errorf("whole: %q, %q", r.Text, r.Finish)
	}
}

// A long shared prefix is read from the cache the second time, as the
// fake's prompt cache reports it.
func TestResponsesCachedUsage(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := responsesClient(srv, "")
	system := strings.Repeat("Summarize every commit in one line. ", 150) // 5,400 characters: 1,350 tokens
	ask := func(q string) provider.Usage {
		t.Helper()
		resp, err := c.Complete(context.Background(), provider.Request{Model: "gpt-5-mini", System: system, MaxTokens: 100, CachePrefix: true,
			Messages: []provider.Message{{Role: "user", Content: q}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Usage
	}
	if u := ask("first"); u.CacheReadTokens != 0 {
		t.Errorf("first request: %+v", u)
	}
	u := ask("second")
	if want := 1350 / 128 * 128; u.CacheReadTokens != want || u.InputTokens <= want {
		t.Errorf("second request: %+v, want %d cached", u, want)
	}
}

func TestResponsesErrors(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: secret, RPM: 1, Window: time.Minute, SendLimitHeaders: true, RetryAfter: true})
	c := responsesClient(srv, secret)

	// A value the API refuses: 400, permanent, in its words.
	_, err := c.Complete(context.Background(), provider.Request{Model: "", Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	e := providerError(t, err)
	if e.Kind != provider.Permanent || e.StatusCode != 400 || e.Type != "model_not_found" || !strings.Contains(e.Message, "does not exist") {
		t.Errorf("bad model: %+v", e)
	}

	if _, err := c.Complete(context.Background(), request("gpt-4o-mini")); err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), request("gpt-4o-mini"))
	e = providerError(t, err)
	if e.Kind != provider.RateLimited || e.StatusCode != 429 || e.Type != "rate_limit_exceeded" || e.RetryAfter <= 0 {
		t.Errorf("429: %+v", e)
	}
	if e.Limits == nil || e.Limits.RequestsLimit != 1 || e.Limits.RequestsRemaining != 0 || e.Limits.RequestsReset <= 0 {
		t.Errorf("429 limits: %+v", e.Limits)
	}

	_, err = responsesClient(srv, "sk-wrong-key-0123456789").Complete(context.Background(), request("gpt-4o-mini"))
	if e = providerError(t, err); e.Kind != provider.Fatal || e.StatusCode != 401 || !strings.Contains(e.Hint, "OPENAI_API_KEY") {
		t.Errorf("401: %+v", e)
	}
}

// The fake refuses the chat body's fields on /v1/responses, and a
// Responses-only model on /v1/chat/completions, as the API does.
func TestResponsesOnlyModelsAnswerOnlyThere(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	chat := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), HTTPClient: srv.Client()})
	for _, model := range []string{"gpt-5-pro", "o3-pro-2025-06-10", "gpt-5.1-codex-mini", "o3-deep-research"} {
		_, err := chat.Complete(context.Background(), request(model))
		e := providerError(t, err)
		if e.Kind != provider.Permanent || e.StatusCode != 404 || e.Message != "This model is only supported in v1/responses and not in v1/chat/completions" {
			t.Errorf("%s on chat: %+v", model, e)
		}
		resp, err := responsesClient(srv, "").Complete(context.Background(), request(model))
		if err != nil || resp.Text != "fake answer: Go on." {
			t.Errorf("%s on responses: %q, %v", model, resp.Text, err)
		}
	}
	for _, r := range srv.Requests() {
		if want := map[string]int{"/v1/chat/completions": 404, "/v1/responses": 200}[r.Path]; r.Status != want {
			t.Errorf("%s %s: %d, want %d", r.Path, r.Model, r.Status, want)
		}
	}

	post := func(body string) (int, map[string]any) {
		t.Helper()
		resp, err := srv.Client().Post(srv.OpenAIBaseURL()+"/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var e struct {
			Error map[string]any `json:"error"`
		}
		json.Unmarshal(data, &e) //nolint:errcheck // an empty map fails below
		return resp.StatusCode, e.Error
	}
	for _, tt := range []struct{ body, code, param, message string }{
		{`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, "unsupported_parameter", "", "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'."},
		{`{"model":"gpt-4o","input":"hi","max_tokens":100}`, "unknown_parameter", "max_tokens", "Unknown parameter: 'max_tokens'."},
		{`{"model":"gpt-4o","input":"hi","max_completion_tokens":100}`, "unsupported_parameter", "", "Unsupported parameter: 'max_completion_tokens'. In the Responses API, this parameter has moved to 'max_output_tokens'."},
		{`{"model":"gpt-4o","input":"hi","seed":1}`, "unknown_parameter", "seed", "Unknown parameter: 'seed'."},
		{`{"model":"gpt-5","input":"hi","temperature":0.5}`, "", "temperature", "Unsupported parameter: 'temperature' is not supported with this model."},
		{`{"input":"hi"}`, "missing_required_parameter", "model", "Missing required parameter: 'model'."},
		{`{"model":"gpt-4o"}`, "missing_required_parameter", "input", "Missing required parameter: 'input'."},
		{`{"model":"gpt-4o","input":"hi","max_output_tokens":15}`, "integer_below_min_value", "max_output_tokens", "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 15 instead."},
	} {
		status, e := post(tt.body)
		code, _ := e["code"].(string)
		param, _ := e["param"].(string)
		msg, _ := e["message"].(string)
		if status != 400 || code != tt.code || param != tt.param || !strings.HasPrefix(msg, tt.message) || e["type"] != "invalid_request_error" {
			t.Errorf("%s: %d %v", tt.body, status, e)
		}
	}
	if status, e := post(`{"model":"gpt-4o","input":"hi","temperature":0.5}`); status != 200 {
		t.Errorf("temperature for gpt-4o: %d %v", status, e)
	}
}

// Answers in the shapes the spec allows, read from canned bodies.
func TestResponsesParsesTheSpecShapes(t *testing.T) {
	const usage = `"usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1536, "cache_write_tokens": 256},
		"output_tokens": 300, "output_tokens_details": {"reasoning_tokens": 250}, "total_tokens": 2300}`
	for _, tt := range []struct {
		name, body string
		want       provider.Response
		kind       provider.Kind // for an error
		errText    string
	}{
		{name: "spec example", body: `{"id": "resp_67cc", "object": "response", "status": "completed", "error": null, "incomplete_details": null,
			"output": [{"type": "reasoning", "id": "rs_1", "summary": []},
				{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
				 "content": [{"type": "output_text", "text": "The image ", "annotations": []}, {"type": "output_text", "text": "depicts.", "annotations": []}]}],
			` + usage + `}`,
			want: provider.Response{Text: "The image depicts.", Finish: provider.FinishStop,
				Usage: provider.Usage{InputTokens: 2000, OutputTokens: 300, CacheReadTokens: 1536, CacheWriteTokens: 256}}},
		{name: "refusal", body: `{"status": "completed", "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "I can't."}]}]}`,
			want: provider.Response{Text: "I can't.", Finish: provider.FinishRefusal}},
		{name: "cut while reasoning", body: `{"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [{"type": "reasoning", "summary": []}], ` + usage + `}`,
			want: provider.Response{Finish: provider.FinishLength, Usage: provider.Usage{InputTokens: 2000, OutputTokens: 300, CacheReadTokens: 1536, CacheWriteTokens: 256}}},
		{name: "filtered", body: `{"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": [{"type": "message", "content": [{"type": "output_text", "text": "Half"}]}]}`,
			want: provider.Response{Text: "Half", Finish: provider.FinishContentFilter}},
		{name: "commentary left out", body: `{"status": "completed", "output": [{"type": "message", "phase": "commentary", "content": [{"type": "output_text", "text": "Let me look. "}]},
			{"type": "message", "phase": "final_answer", "content": [{"type": "output_text", "text": "Done."}]}]}`,
			want: provider.Response{Text: "Done.", Finish: provider.FinishStop}},
		{name: "failed", body: `{"status": "failed", "error": {"code": "server_error", "message": "The model failed."}, "output": []}`,
			kind: provider.Transient, errText: "the response failed: The model failed"},
		{name: "failed on the prompt", body: `{"status": "failed", "error": {"code": "invalid_prompt", "message": "Bad prompt."}, "output": []}`,
			kind: provider.Permanent, errText: "invalid_prompt"},
		{name: "rate limited in a 200", body: `{"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "Slow down."}}`,
			kind: provider.RateLimited, errText: "Slow down"},
		{name: "no message", body: `{"status": "completed", "output": [{"type": "reasoning"}]}`,
			kind: provider.Malformed, errText: "the output has no message"},
		{name: "text not a string", body: `{"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": 5}]}]}`,
			kind: provider.Malformed, errText: "output[0].content[0].text is a number, not a string"},
		{name: "background", body: `{"status": "in_progress", "output": []}`,
			kind: provider.Malformed, errText: "in_progress"},
		{name: "key echoed", body: `{"status": "completed", "output": [{"type": "message", "content": [{"type": "output_text", "text": "key ` + secret + `"}]}]}`,
			want: provider.Response{Text: "key <redacted>", Finish: provider.FinishStop}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, got := server(t, reply{body: tt.body})
			c := openai.NewResponses(openai.Options{BaseURL: srv.URL + "/v1", APIKey: secret})
			req := request("o3-pro")
			req.MaxTokens = 1000
			resp, err := c.Complete(context.Background(), req)
			if got.path != "/v1/responses" {
				t.Errorf("path %q", got.path)
			}
			if tt.errText != "" {
				e := providerError(t, err)
				if e.Kind != tt.kind || !strings.Contains(e.Error(), tt.errText) {
					t.Errorf("error %v (%v), want %v with %q", e, e.Kind, tt.kind, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp != tt.want {
				t.Errorf("got %+v\nwant %+v", resp, tt.want)
			}
		})
	}
}

// Rate-limit headers and error bodies are Chat Completions' own.
func TestResponsesStatusErrorsAreChats(t *testing.T) {
	srv, _ := server(t, reply{status: 429, header: map[string]string{"retry-after-ms": "1500", "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "0"},
		body: errorJSON("You exceeded your current quota", "insufficient_quota", "insufficient_quota")})
	_, err := openai.NewResponses(openai.Options{BaseURL: srv.URL, APIKey: secret}).Complete(context.Background(), request("gpt-5-pro"))
	e := providerError(t, err)
	if e.Kind != provider.Fatal || e.RetryAfter != 1500*time.Millisecond || e.Limits == nil || e.Limits.TokensLimit != 30000 || !strings.Contains(e.Hint, "billing") {
		t.Errorf("%+v", e)
	}
}

func TestResponsesBatch(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: secret, BatchAPI: fakeprovider.BatchAPIConfig{Processing: 20 * time.Millisecond}})
	c := responsesClient(srv, secret)
	var _ provider.Batcher = c
	items, sent := batchItems(4)
	items[1].Request.Model, sent["item-1"] = "gpt-5-pro", items[1].Request
	items[2].Request.Messages[0].Content = "no " + fakeprovider.RefuseTrigger
	sent["item-2"] = items[2].Request
	items[3].Request.Model, sent["item-3"] = "", items[3].Request // the API refuses it: that item errs
	b, err := c.Submit(context.Background(), "label-1", items)
	if err != nil {
		t.Fatal(err)
	}
	b = waitDone(t, c, b.ID)
	if b.Status != provider.BatchEnded || b.Counts != (provider.BatchCounts{Succeeded: 3, Errored: 1}) || b.Label != "label-1" {
		t.Fatalf("ended: %+v", b)
	}
	got := collect(t, c, b, sent)
	for id, want := range map[string]string{"item-0": "fake answer: question 0", "item-1": "fake answer: question 1", "item-2": fakeprovider.RefusalText} {
		if r := got[id]; r.Err != nil || r.Response.Text != want || r.Response.Usage.InputTokens != srv.Estimate(sent[id])-50 {
			t.Errorf("%s: %+v", id, r)
		}
	}
	if got["item-2"].Response.Finish != provider.FinishRefusal {
		t.Errorf("item-2 finish %q", got["item-2"].Response.Finish)
	}
	if e := got["item-3"].Err; e == nil || e.StatusCode != 400 || e.Type != "model_not_found" {
		t.Errorf("item-3: %+v", e)
	}
	// The batch was made for /v1/responses; Poll, List and Cancel are the chat client's.
	req, _ := http.NewRequest(http.MethodGet, srv.OpenAIBaseURL()+"/batches/"+b.ID, nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var obj struct {
		Endpoint string `json:"endpoint"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil || obj.Endpoint != "/v1/responses" {
		t.Errorf("endpoint %q, %v", obj.Endpoint, err)
	}
	if list, err := c.List(context.Background(), time.Time{}); err != nil || len(list) != 1 || list[0].ID != b.ID {
		t.Errorf("list: %+v, %v", list, err)
	}
	if parts, err := c.SplitBatch(items); err != nil || len(parts) != 1 {
		t.Errorf("split: %d, %v", len(parts), err)
	}
	if st := srv.Stats(); st.Succeeded != 0 || len(srv.Requests()) != 0 {
		t.Errorf("batch items went through the sync endpoint: %+v", st)
	}
}
