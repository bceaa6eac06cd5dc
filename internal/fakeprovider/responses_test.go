package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// modelled is a small chat request for model.
func modelled(model string) provider.Request {
	req := simple("hi", 10)
	req.Model = model
	return req
}

// postResponses posts body to /v1/responses.
func postResponses(t *testing.T, srv *Server, key, body string) reply {
	t.Helper()
	r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+ResponsesPath, headers(OpenAI, key), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// responseObject is a Response object, read strictly.
type responseObject struct {
	ID                 string                   `json:"id"`
	Object             string                   `json:"object"`
	CreatedAt          int64                    `json:"created_at"`
	Status             string                   `json:"status"`
	CompletedAt        *int64                   `json:"completed_at"`
	Error              json.RawMessage          `json:"error"`
	IncompleteDetails  *struct{ Reason string } `json:"incomplete_details"`
	Instructions       *string                  `json:"instructions"`
	MaxOutputTokens    *int                     `json:"max_output_tokens"`
	Model              string                   `json:"model"`
	ParallelToolCalls  bool                     `json:"parallel_tool_calls"`
	PreviousResponseID *string                  `json:"previous_response_id"`
	Reasoning          json.RawMessage          `json:"reasoning"`
	Store              bool                     `json:"store"`
	Temperature        float64                  `json:"temperature"`
	Text               json.RawMessage          `json:"text"`
	ToolChoice         string                   `json:"tool_choice"`
	Tools              []any                    `json:"tools"`
	TopP               float64                  `json:"top_p"`
	Truncation         string                   `json:"truncation"`
	User               *string                  `json:"user"`
	Metadata           map[string]any           `json:"metadata"`
	Output             []struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Status  string `json:"status"`
		Role    string `json:"role"`
		Content []struct {
			Type        string  `json:"type"`
			Text        *string `json:"text"`
			Refusal     *string `json:"refusal"`
			Annotations []any   `json:"annotations"`
			Logprobs    []any   `json:"logprobs"`
		} `json:"content"`
	} `json:"output"`
	Usage struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens     int `json:"cached_tokens"`
			CacheWriteTokens int `json:"cache_write_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeResponse(t *testing.T, r reply) responseObject {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	var v responseObject
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	if v.Object != "response" || !strings.HasPrefix(v.ID, "resp_") || len(v.Output) != 1 || v.Output[0].Type != "message" ||
		v.Output[0].Role != "assistant" || len(v.Output[0].Content) != 1 || string(v.Error) != "null" {
		t.Fatalf("not a response: %s", r.body)
	}
	if u := v.Usage; u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("total_tokens %d != %d + %d", u.TotalTokens, u.InputTokens, u.OutputTokens)
	}
	return v
}

func (v responseObject) text() string {
	if c := v.Output[0].Content[0]; c.Text != nil {
		return *c.Text
	}
	return ""
}

func TestResponsesAnswer(t *testing.T) {
	srv := Start(t, Config{APIKey: "sk-test", TPM: 100_000, SendLimitHeaders: true})
	body := `{"model":"gpt-4o","instructions":"Be brief.","input":[{"role":"developer","content":"Plain words."},{"role":"user","content":"hello"},{"role":"assistant","content":[{"type":"output_text","text":"hi"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"what changed?"}]}],"max_output_tokens":100,"temperature":0.3,"store":false}`
	r := postResponses(t, srv, "sk-test", body)
	v := decodeResponse(t, r)
	if v.text() != "fake answer: what changed?" || v.Status != "completed" || v.IncompleteDetails != nil || v.CompletedAt == nil || v.Output[0].Content[0].Type != "output_text" {
		t.Errorf("answer %q, status %s: %s", v.text(), v.Status, r.body)
	}
	if v.Model != "gpt-4o" || v.Instructions == nil || *v.Instructions != "Be brief." || v.Temperature != 0.3 || v.Store || *v.MaxOutputTokens != 100 {
		t.Errorf("echo: %s", r.body)
	}
	if r.header.Get("x-ratelimit-limit-tokens") != "100000" || r.header.Get("x-request-id") == "" {
		t.Errorf("headers %v", r.header)
	}
	// Instructions, then developer text, are the system prompt; TPM charges
	// it and the messages' texts plus max_output_tokens.
	rec := srv.Requests()[0]
	if rec.Format != OpenAI || rec.Path != ResponsesPath || rec.System != "Be brief.\n\nPlain words." || len(rec.Messages) != 3 || rec.MaxTokens != 100 {
		t.Errorf("recorded %+v", rec)
	}
	prompt := quarterRunes("Be brief.\n\nPlain words." + "hello" + "hi" + "what changed?")
	if st := srv.Stats(); st.Admitted[0].Tokens != prompt+100 || v.Usage.InputTokens != prompt {
		t.Errorf("charged %d, input %d; want %d + 100", st.Admitted[0].Tokens, v.Usage.InputTokens, prompt)
	}
	// A string input is one user message.
	if v := decodeResponse(t, postResponses(t, srv, "sk-test", `{"model":"m-1","input":"just this"}`)); v.text() != "fake answer: just this" || v.TopP != 1 || v.Temperature != 1 {
		t.Errorf("string input: %q", v.text())
	}
	if r := postResponses(t, srv, "sk-wrong", `{"model":"m-1","input":"x"}`); r.status != 401 || decodeError(t, OpenAI, r).code != "invalid_api_key" {
		t.Errorf("wrong key: %d %s", r.status, r.body)
	}
}

func TestResponsesFinishesAndTriggers(t *testing.T) {
	srv := Start(t, Config{})
	v := decodeResponse(t, postResponses(t, srv, "", `{"model":"m-1","input":"`+strings.Repeat("long ", 30)+`","max_output_tokens":16}`))
	if v.Status != "incomplete" || v.IncompleteDetails == nil || v.IncompleteDetails.Reason != "max_output_tokens" || v.Output[0].Status != "incomplete" ||
		v.Usage.OutputTokens > 16 || v.CompletedAt != nil || !strings.HasPrefix("fake answer: "+strings.Repeat("long ", 30), v.text()) {
		t.Errorf("cut: %+v %q", v.IncompleteDetails, v.text())
	}
	v = decodeResponse(t, postResponses(t, srv, "", `{"model":"m-1","input":"no `+RefuseTrigger+`"}`))
	if c := v.Output[0].Content[0]; c.Type != "refusal" || c.Refusal == nil || *c.Refusal != RefusalText || c.Text != nil || v.Status != "completed" {
		t.Errorf("refusal: %+v", c)
	}
	v = decodeResponse(t, postResponses(t, srv, "", `{"model":"m-1","input":"`+strings.Repeat("filtered ", 10)+ContentFilterTrigger+`"}`))
	if v.Status != "incomplete" || v.IncompleteDetails == nil || v.IncompleteDetails.Reason != "content_filter" || v.text() == "" {
		t.Errorf("filtered: %+v %q", v.IncompleteDetails, v.text())
	}
}

func TestResponsesCachedPrefix(t *testing.T) {
	srv := Start(t, Config{})
	long := strings.Repeat("x", 4*1100) // 1,100 tokens
	ask := func(instructions string, input ...string) int {
		t.Helper()
		items := []map[string]string{}
		for i, s := range input {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			items = append(items, map[string]string{"role": role, "content": s})
		}
		b, _ := json.Marshal(map[string]any{"model": "m-1", "instructions": instructions, "input": items})
		return decodeResponse(t, postResponses(t, srv, "", string(b))).Usage.InputTokensDetails.CachedTokens
	}
	if n := ask(long, "a"); n != 0 {
		t.Errorf("first: %d cached", n)
	}
	if n := ask(long, "b"); n != 1024 { // the instructions: 1,100 tokens, in 128s
		t.Errorf("same instructions: %d cached, want 1024", n)
	}
	if n := ask(long, "a", strings.Repeat("y", 4*300), "c"); n != 1024 {
		t.Errorf("instructions and first message: %d cached, want 1024", n)
	}
	if n := ask(long, "a", strings.Repeat("y", 4*300), "d"); n != (1100+1+300)/128*128 {
		t.Errorf("three messages: %d cached, want %d", n, (1100+1+300)/128*128)
	}
	if n := ask(long+"z", "a"); n != 0 {
		t.Errorf("other instructions: %d cached", n)
	}
	short := strings.Repeat("s", 4*500)
	ask(short, "a")
	if n := ask(short, "a"); n != 0 {
		t.Errorf("a prefix under 1,024 tokens: %d cached", n)
	}
}

// What the API refuses on /v1/responses, in its words.
func TestResponsesRefusals(t *testing.T) {
	srv := Start(t, Config{RPM: 1000})
	for _, c := range []struct{ body, code, param, message string }{
		{`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`, "unsupported_parameter", "", "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. Try again"},
		{`{"model":"gpt-4o","input":"hi","max_completion_tokens":50}`, "unsupported_parameter", "", "Unsupported parameter: 'max_completion_tokens'. In the Responses API, this parameter has moved to 'max_output_tokens'."},
		{`{"model":"gpt-5","input":"hi","reasoning_effort":"low"}`, "unsupported_parameter", "", "this parameter has moved to 'reasoning.effort'"},
		{`{"model":"gpt-4o","input":"hi","max_tokens":50}`, "unknown_parameter", "max_tokens", "Unknown parameter: 'max_tokens'."},
		{`{"model":"gpt-4o","input":"hi","seed":1}`, "unknown_parameter", "seed", "Unknown parameter: 'seed'."},
		{`{"model":"gpt-4o","input":"hi","n":2}`, "unknown_parameter", "n", "Unknown parameter: 'n'."},
		{`{"input":"hi","seed":1}`, "missing_required_parameter", "model", "Missing required parameter: 'model'."},
		{`{"model":null,"input":"hi"}`, "invalid_type", "model", "Invalid type for 'model': expected a string, but got an object instead."},
		{`{"model":"","input":"hi"}`, "model_not_found", "model", "The requested model '' does not exist."},
		{`{"model":"gpt-4o"}`, "missing_required_parameter", "input", "Missing required parameter: 'input'."},
		{`{"model":"gpt-4o","input":{"a":1}}`, "invalid_type", "input", "Invalid type for 'input': expected one of a string or array of input items, but got an object instead."},
		{`{"model":"gpt-4o","input":[{"role":"user","content":"hi","bogus":1}]}`, "unknown_parameter", "input[0].bogus", "Unknown parameter: 'input[0].bogus'."},
		{`{"model":"gpt-4o","input":[{"role":"tool","content":"hi"}]}`, "invalid_value", "input[0].role", "Invalid value: \"tool\"."},
		{`{"model":"gpt-4o","input":"hi","max_output_tokens":0}`, "integer_below_min_value", "max_output_tokens", "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 0 instead."},
		{`{"model":"gpt-4o","input":"hi","max_output_tokens":"x"}`, "invalid_type", "max_output_tokens", "Invalid type for 'max_output_tokens': expected an integer, but got a string instead."},
		{`{"model":"gpt-4o","input":"hi","temperature":2.5}`, "decimal_above_max_value", "temperature", "Invalid 'temperature': decimal above maximum value."},
		{`{"model":"gpt-5-mini","input":"hi","temperature":0.5}`, "", "temperature", "Unsupported parameter: 'temperature' is not supported with this model."},
		{`{"model":"o3-pro","input":"hi","top_p":0.5}`, "", "top_p", "Unsupported parameter: 'top_p' is not supported with this model."},
		{`{"model":"gpt-4o","input":"hi","reasoning":{"effort":"low"}}`, "", "reasoning.effort", "Unsupported parameter: 'reasoning.effort' is not supported with this model."},
		{`{"model":"gpt-5","input":"hi","reasoning":{"effort":"bogus"}}`, "invalid_value", "reasoning.effort", "Invalid value: 'bogus'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'."},
		{`{"model":"gpt-5","input":"hi","reasoning":"low"}`, "invalid_type", "reasoning", "Invalid type for 'reasoning': expected an object, but got a string instead."},
		{`{"model":"gpt-4o","input":"hi","stream":true}`, "", "stream", "fakeprovider does not stream"},
		{`{"model":"gpt-4o","input":"hi","store":"no"}`, "invalid_type", "store", "Invalid type for 'store': expected a boolean, but got a string instead."},
		{`[1]`, "", "", "We could not parse the JSON body of your request."},
	} {
		r := postResponses(t, srv, "", c.body)
		if r.status != 400 {
			t.Errorf("%s: %d %s", c.body, r.status, r.body)
			continue
		}
		e := decodeError(t, OpenAI, r)
		if e.typ != "invalid_request_error" || e.code != c.code || e.param != c.param || !strings.Contains(e.message, c.message) {
			t.Errorf("%s: %+v", c.body, e)
		}
	}
	// What the API takes goes through: a reasoning model's default
	// temperature, its effort, a chat model's temperature, nulls.
	for _, body := range []string{
		`{"model":"gpt-5-pro","input":"hi","temperature":1,"reasoning":{"effort":"high","summary":null},"max_output_tokens":16,"store":false}`,
		`{"model":"gpt-4o","instructions":null,"input":[],"temperature":0,"top_p":0.9,"metadata":{},"truncation":"disabled"}`,
	} {
		if r := postResponses(t, srv, "", body); r.status != 200 {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	if st := srv.Stats(); st.BadRequest != 24 || len(st.Admitted) != 2 {
		t.Errorf("%d bad requests, %d admitted", st.BadRequest, len(st.Admitted))
	}
}

// The chat path refuses the models the Responses API alone serves, before
// any limit, as OpenAI does.
func TestChatRefusesResponsesOnlyModels(t *testing.T) {
	srv := Start(t, Config{RPM: 1, SendLimitHeaders: true})
	for _, model := range []string{"gpt-5-pro", "o3-pro-2025-06-10", "o1-pro", "gpt-5.1-codex", "codex-mini-latest", "o4-mini-deep-research", "openai/gpt-5.2-pro"} {
		r := send(t, srv, OpenAI, "", modelled(model))
		e := decodeError(t, OpenAI, r)
		if r.status != 404 || e.message != "This model is only supported in v1/responses and not in v1/chat/completions." || e.param != "model" || e.code != "" ||
			r.header.Get("x-ratelimit-limit-requests") != "" {
			t.Errorf("%s: %d %+v", model, r.status, e)
		}
	}
	for _, model := range []string{"gpt-5", "o3", "gpt-4o", "gpt-5-mini", "m-1"} {
		if r := send(t, srv, OpenAI, "", modelled(model)); r.status == 404 {
			t.Errorf("%s refused: %s", model, r.body)
		}
	}
	if st := srv.Stats(); st.NotFound != 7 {
		t.Errorf("%d not found, want 7", st.NotFound)
	}
	if r := postResponses(t, srv, "", `{"model":"gpt-5-pro","input":"hi"}`); r.status != 429 {
		t.Errorf("responses under the limit: %d %s", r.status, r.body)
	}
}

// Faults and 429s on /v1/responses are the OpenAI format's.
func TestResponsesLimitsAndFaults(t *testing.T) {
	srv := Start(t, Config{Window: time.Minute, RPM: 1, RetryAfter: true, SendLimitHeaders: true, Faults: FaultConfig{Malformed200: 1}})
	r := postResponses(t, srv, "", `{"model":"m-1","input":"hi"}`)
	if r.status != 200 || json.Valid(r.body) || !bytes.HasPrefix(r.body, []byte(`{"id":"resp_fake`)) {
		t.Errorf("malformed: %d %s", r.status, r.body)
	}
	r = postResponses(t, srv, "", `{"model":"m-1","input":"hi"}`)
	if e := decodeError(t, OpenAI, r); r.status != 429 || e.code != "rate_limit_exceeded" || r.header.Get("retry-after-ms") == "" || r.header.Get("x-ratelimit-remaining-requests") != "0" {
		t.Errorf("429: %d %+v %v", r.status, e, r.header)
	}
}

// A /v1/responses batch answers its lines as the endpoint does.
func TestResponsesBatch(t *testing.T) {
	srv := Start(t, Config{APIKey: "k"})
	lines := `{"custom_id":"a","method":"POST","url":"/v1/responses","body":{"model":"gpt-5-pro","input":"one","max_output_tokens":100}}
{"custom_id":"b","method":"POST","url":"/v1/responses","body":{"model":"gpt-4o","messages":[{"role":"user","content":"two"}]}}
`
	file := upload(t, srv, "k", lines)
	status, b := call(t, srv, OpenAI, http.MethodPost, OpenAIBatchesPath, "k", `{"input_file_id":"`+file+`","endpoint":"/v1/responses","completion_window":"24h"}`)
	if status != 200 || b["endpoint"] != "/v1/responses" {
		t.Fatalf("create: %d %v", status, b)
	}
	_, b = call(t, srv, OpenAI, http.MethodGet, OpenAIBatchesPath+"/"+b["id"].(string), "k", "")
	if b["status"] != "completed" {
		t.Fatalf("batch: %v", b)
	}
	for _, f := range []struct {
		id, want string
	}{{b["output_file_id"].(string), `"custom_id":"a"`}, {b["error_file_id"].(string), `"custom_id":"b"`}} {
		r, err := do(t, context.Background(), srv.Client(), http.MethodGet, srv.URL()+OpenAIFilesPath+"/"+f.id+"/content", headers(OpenAI, "k"), nil)
		if err != nil || !strings.Contains(string(r.body), f.want) {
			t.Errorf("file %s: %s, %v", f.id, r.body, err)
		}
		if f.want == `"custom_id":"a"` && !strings.Contains(string(r.body), `"object":"response"`) {
			t.Errorf("output: %s", r.body)
		}
		if f.want == `"custom_id":"b"` && !strings.Contains(string(r.body), "has moved to 'input'") {
			t.Errorf("errors: %s", r.body)
		}
	}
	// A chat line in a Responses batch fails the batch, as another url does.
	file = upload(t, srv, "k", `{"custom_id":"c","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o","messages":[]}}`+"\n")
	_, b = call(t, srv, OpenAI, http.MethodPost, OpenAIBatchesPath, "k", `{"input_file_id":"`+file+`","endpoint":"/v1/responses","completion_window":"24h"}`)
	if _, b = call(t, srv, OpenAI, http.MethodGet, OpenAIBatchesPath+"/"+b["id"].(string), "k", ""); b["status"] != "failed" {
		t.Errorf("mixed urls: %v", b)
	}
	if status, _ := call(t, srv, OpenAI, http.MethodPost, OpenAIBatchesPath, "k", `{"input_file_id":"`+file+`","endpoint":"/v1/embeddings","completion_window":"24h"}`); status != 400 {
		t.Errorf("another endpoint: %d", status)
	}
}
