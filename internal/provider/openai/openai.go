// Package openai speaks the Chat Completions API. OpenAI serves it, and so
// do vLLM, LM Studio, llama.cpp, OpenRouter and Ollama; the imitations agree
// on success bodies but not on error bodies, so errors are read leniently.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Options configures a Client.
type Options struct {
	Name       string // "openai", "ollama", ...: names the provider in errors
	BaseURL    string // e.g. https://api.openai.com/v1; "/chat/completions" is appended
	APIKey     string // empty: no Authorization header (local servers)
	KeyEnv     string // the variable that holds the key, named in hints
	HTTPClient *http.Client
}

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// Client sends requests to one Chat Completions endpoint.
type Client struct {
	name, baseURL, url string
	key, keyEnv        string
	http               *http.Client
}

var _ provider.Provider = (*Client)(nil)

// New returns a client for o.
func New(o Options) *Client {
	c := &Client{name: o.Name, baseURL: strings.TrimRight(o.BaseURL, "/"), key: o.APIKey, keyEnv: o.KeyEnv, http: o.HTTPClient}
	if c.name == "" {
		c.name = "openai"
	}
	if c.baseURL == "" {
		c.baseURL = DefaultBaseURL
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	c.url = c.baseURL + "/chat/completions"
	return c
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model               string    `json:"model"`
	Messages            []message `json:"messages"`
	MaxTokens           int       `json:"max_tokens,omitempty"`
	MaxCompletionTokens int       `json:"max_completion_tokens,omitempty"`
	Seed                *int      `json:"seed,omitempty"`
	Temperature         *float64  `json:"temperature,omitempty"`
	ReasoningEffort     string    `json:"reasoning_effort,omitempty"`
	// ResponseFormat holds the answer to a JSON schema, strictly.
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type       string     `json:"type"` // "json_schema"
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// chatResponse is read in two steps: the envelope here, and each part of
// it on its own, so that a part in an unexpected shape is named in the
// error (or, for usage, taken as unknown) instead of failing the whole.
type chatResponse struct {
	Choices json.RawMessage `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
	Error   json.RawMessage `json:"error"` // OpenRouter reports some upstream failures in a 200
}

type choice struct {
	Message struct {
		Content json.RawMessage `json:"content"`
		Refusal json.RawMessage `json:"refusal"`
	} `json:"message"`
	FinishReason json.RawMessage `json:"finish_reason"`
}

// Complete sends req once; the engine owns every retry.
func (c *Client) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	header := http.Header{}
	if c.key != "" {
		header.Set("Authorization", "Bearer "+c.key)
	}
	resp, data, err := provider.Post(ctx, c.http, c.name, c.baseURL, c.url, header, c.body(req))
	if err != nil {
		return provider.Response{}, err
	}
	limits := parseLimits(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Response{}, c.statusError(resp.StatusCode, resp.Header, data, limits, req.Model)
	}
	return c.parseAnswer(req, resp.StatusCode, resp.Header, limits, data)
}

// parseAnswer reads a success body: a synchronous answer, or one line's
// answer in a batch's output.
func (c *Client) parseAnswer(req provider.Request, status int, header http.Header, limits *provider.Limits, data []byte) (provider.Response, error) {
	var out chatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return provider.Response{}, provider.UnreadableBody(c.name, status, limits, data, err)
	}
	var choices []choice
	if kind := provider.JSONKind(out.Choices); kind != "nothing" && kind != "null" {
		if err := json.Unmarshal(out.Choices, &choices); err != nil {
			return provider.Response{}, provider.Unreadable(c.name, status, limits, provider.DescribeJSON("choices", out.Choices, err))
		}
	}
	if len(choices) == 0 {
		eb, isJSON := parseErrorBody(data)
		switch {
		case isJSON && eb.status >= 400:
			// OpenRouter answers 200 and names the upstream failure's HTTP
			// status in the body: a 402 there is as fatal as a real one.
			return provider.Response{}, c.statusError(eb.status, header, data, limits, req.Model)
		case eb.message != "":
			// An upstream failure reported instead of an answer: worth
			// another try like any server error.
			return provider.Response{}, &provider.Error{Provider: c.name, Kind: provider.Transient, StatusCode: status,
				Type: provider.CleanMessage(eb.kind(), c.key), Message: "an error instead of an answer: " + provider.CleanMessage(eb.message, c.key), Limits: limits}
		}
		return provider.Response{}, provider.Unreadable(c.name, status, limits, "the answer has no choices")
	}
	// finish_reason "length" still carries a usable, if cut, answer. A
	// refusal comes as message.refusal with a null content; a null content
	// without one (a tool call) reads as empty text.
	text, problem := contentText(choices[0].Message.Content)
	if problem != "" {
		return provider.Response{}, provider.Unreadable(c.name, status, limits, problem)
	}
	var refusal string
	_ = json.Unmarshal(choices[0].Message.Refusal, &refusal) // not a string: no refusal
	return c.response(text, refusal, finishOf(choices[0].FinishReason), usage(req, out.Usage), limits), nil
}

// response is an answer as both wires end it: a refusal makes the finish
// a refusal, its words standing for the text when there is none, and the
// key is scrubbed from what the server wrote.
func (c *Client) response(text, refusal string, finish provider.Finish, u provider.Usage, limits *provider.Limits) provider.Response {
	if refusal != "" {
		finish = provider.FinishRefusal
		if text == "" {
			text = refusal
		}
	}
	return provider.Response{Text: redact.Scrub(text, c.key), Finish: finish, Usage: u, Limits: limits}
}

// finishOf reads a choice's finish_reason: "length" and "content_filter"
// are kept, anything else ("stop", "tool_calls", null, a server's own
// word) is a finished answer.
func finishOf(raw json.RawMessage) provider.Finish {
	var s string
	_ = json.Unmarshal(raw, &s)
	switch s {
	case "length":
		return provider.FinishLength
	case "content_filter":
		return provider.FinishContentFilter
	}
	return provider.FinishStop
}

// contentText reads a message's content: a string, null, or the list of
// parts ([{"type":"text","text":...}]) that several OpenAI-compatible
// servers send, of which the text parts are the answer. Any other shape is
// a problem, described.
func contentText(raw json.RawMessage) (text, problem string) {
	switch provider.JSONKind(raw) {
	case "nothing", "null":
		return "", ""
	case "a string":
		if err := json.Unmarshal(raw, &text); err != nil {
			return "", provider.DescribeJSON("choices[0].message.content", raw, err)
		}
		return text, ""
	case "an array":
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", provider.DescribeJSON("choices[0].message.content", raw, err)
		}
		var b strings.Builder
		for _, p := range parts {
			var part struct {
				Type string          `json:"type"`
				Text json.RawMessage `json:"text"`
			}
			if json.Unmarshal(p, &part) != nil || len(part.Text) == 0 || part.Type != "" && part.Type != "text" && part.Type != "output_text" {
				continue // an image, a refusal, an annotation: not the answer's text
			}
			var s string
			if json.Unmarshal(part.Text, &s) != nil {
				return "", fmt.Sprintf("choices[0].message.content has a text part whose text is %s, not a string", provider.JSONKind(part.Text))
			}
			b.WriteString(s)
		}
		return b.String(), ""
	}
	return "", fmt.Sprintf("choices[0].message.content is %s, not a string", provider.JSONKind(raw))
}

// usage reads the counts of an answer's usage object; one that is missing
// or unreadable is unknown, and every count is held to what req could use.
// prompt_tokens includes the cached ones (prompt_tokens_details.cached_tokens).
func usage(req provider.Request, raw json.RawMessage) provider.Usage {
	var counts map[string]json.RawMessage
	_ = json.Unmarshal(raw, &counts) // an unreadable usage is an unknown one
	var details map[string]json.RawMessage
	_ = json.Unmarshal(counts["prompt_tokens_details"], &details)
	u := provider.SaneUsage(req, provider.TokenCount(counts["prompt_tokens"]), provider.TokenCount(counts["completion_tokens"]))
	u.CacheReadTokens = provider.CachedPart(provider.TokenCount(details["cached_tokens"]), u.InputTokens)
	return u
}

// body is the request as the model's rules (provider.RulesFor) have it:
// what the model refuses is left out, whatever the caller set, so that
// no request goes out that the API would answer with a 400.
func (c *Client) body(req provider.Request) chatRequest {
	rules := provider.RulesFor(req.Model)
	req, _ = rules.Apply(req)
	msgs := make([]message, 0, len(req.Messages)+1)
	if req.System != "" {
		role := "system"
		if rules.DeveloperRole {
			role = "developer" // the spec's note: newer reasoning models take developer messages
		}
		msgs = append(msgs, message{Role: role, Content: req.System})
	}
	for _, m := range req.Messages {
		msgs = append(msgs, message{Role: m.Role, Content: m.Content})
	}
	b := chatRequest{Model: req.Model, Messages: msgs, Temperature: req.Temperature, Seed: req.Seed, ReasoningEffort: req.ReasoningEffort}
	if req.Schema != nil && rules.StructuredOutput && c.name == "openai" {
		// OpenAI's own models; servers that imitate the API take the
		// answer as it comes.
		b.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: req.Schema.Name, Schema: req.Schema.JSON, Strict: true}}
	}
	if req.MaxTokens > 0 {
		// Reasoning models reject max_tokens; other servers (older Ollama,
		// llama.cpp) may not know max_completion_tokens, so keep the old name
		// wherever it still works.
		if rules.MaxCompletionTokens {
			b.MaxCompletionTokens = provider.OutputCap(req)
		} else {
			b.MaxTokens = req.MaxTokens
		}
	}
	return b
}

// errorBody is the error an OpenAI-compatible server sent, in any of the
// shapes seen: {"error":{"message","type","code"}} (OpenAI, Ollama, LM
// Studio, llama.cpp), {"error":"text"}, and vLLM's older top-level
// {"object":"error","message","type","code"}. code is a string at OpenAI
// and a number (the HTTP status) at llama.cpp and OpenRouter.
type errorBody struct {
	message, typ, code string
	status             int // a numeric code: the HTTP status it stands for
}

// kind is the most specific name the server gave the error.
func (b errorBody) kind() string {
	if b.code != "" {
		return b.code
	}
	return b.typ
}

func parseErrorBody(data []byte) (errorBody, bool) {
	type fields struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var top struct {
		fields
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &top) != nil {
		return errorBody{}, false
	}
	f := top.fields
	var s string
	switch {
	case json.Unmarshal(top.Error, &f) == nil:
	case json.Unmarshal(top.Error, &s) == nil:
		f = fields{Message: s}
	}
	var code string
	var status int
	if json.Unmarshal(f.Code, &code) != nil {
		_ = json.Unmarshal(f.Code, &status)
	}
	return errorBody{message: f.Message, typ: f.Type, code: code, status: status}, true
}

// billing names the 429s that waiting cannot fix.
var billing = map[string]bool{
	"insufficient_quota":          true,
	"billing_hard_limit_reached":  true,
	"billing_not_active":          true,
	"insufficient_credits":        true,
	"account_deactivated":         true,
	"billing_limit_user_exceeded": true,
}

func (c *Client) statusError(status int, header http.Header, data []byte, limits *provider.Limits, model string) *provider.Error {
	eb, isJSON := parseErrorBody(data)
	e := provider.StatusError(c.name, c.key, status, header, data, eb.message, eb.kind(), isJSON, limits)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Hint = c.keyHint()
	case status == http.StatusPaymentRequired || (status == http.StatusTooManyRequests && (billing[eb.code] || billing[eb.typ])):
		e.Kind, e.Hint = provider.Fatal, "Try: check the billing and quota of your "+c.name+" account"
	case status == http.StatusNotFound && isJSON && (eb.code == "model_not_found" || strings.Contains(strings.ToLower(eb.message), "model")):
		e.Hint = fmt.Sprintf("Try: check the model name %q", model)
	case status == http.StatusNotFound:
		e.Hint = "Try: check the base URL " + textsafe.URL(c.baseURL) + " (it usually ends in /v1)"
	}
	return e
}

func (c *Client) keyHint() string {
	if c.keyEnv == "" {
		return "Try: check the API key for " + c.name
	}
	return "Try: export " + c.keyEnv + "=<your key>"
}
