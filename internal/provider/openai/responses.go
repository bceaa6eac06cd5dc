package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// OpenAI's Responses API (POST /v1/responses) is the second wire OpenAI
// speaks, and the only one its pro, codex and deep-research models answer
// on (provider.Rules.ResponsesOnly). It shares with Chat Completions the
// key, the base URL, the rate-limit headers and the error bodies; the
// request and the answer are its own:
//
//	request: {"model", "instructions", "input": [{"role","content"}],
//	          "max_output_tokens", "temperature", "reasoning": {"effort"}, "store": false}
//	answer:  {"status", "incomplete_details": {"reason"}, "error": {"code","message"},
//	          "output": [{"type": "message", "content": [{"type": "output_text", "text"} |
//	                                                    {"type": "refusal", "refusal"}]}, ...],
//	          "usage": {"input_tokens", "input_tokens_details": {"cached_tokens", "cache_write_tokens"},
//	                    "output_tokens", "output_tokens_details": {"reasoning_tokens"}}}
//
// as OpenAI's OpenAPI spec (openai/openai-openapi: CreateResponse,
// Response, OutputMessage, OutputTextContent, RefusalContent,
// ResponseUsage, ResponseError) has them.

// ResponsesProvider is the provider name (as in "openai-responses:MODEL")
// whose requests go through the Responses API whatever the model: what
// provider.ProviderRules reads the API's rules under (it has no seed).
const ResponsesProvider = "openai-responses"

// responsesEndpoint is the Responses API's path, as batch lines name it.
const responsesEndpoint = "/v1/responses"

// minOutputTokens is the least max_output_tokens the API takes (the spec's
// minimum; below it a request is a 400): a smaller cap is sent as this.
const minOutputTokens = 16

// ResponsesClient sends requests to OpenAI's Responses API. It is a
// provider.Provider and, through the Batch API with /v1/responses lines,
// a provider.Batcher.
type ResponsesClient struct {
	// chat holds what the two wires share: name, base URL, key, HTTP
	// client, error reading and the batch endpoints that do not depend
	// on the wire (Poll, Cancel, List).
	chat *Client
	url  string
}

var (
	_ provider.Provider = (*ResponsesClient)(nil)
	_ provider.Batcher  = (*ResponsesClient)(nil)
)

// NewResponses returns a Responses API client for o; BaseURL is the same
// as for New (https://api.openai.com/v1), with "/responses" appended.
func NewResponses(o Options) *ResponsesClient {
	c := New(o)
	return &ResponsesClient{chat: c, url: c.baseURL + "/responses"}
}

// responsesRequest is CreateResponse's body, of the fields digest sends.
type responsesRequest struct {
	Model string `json:"model"`
	// Instructions is the system prompt: the API has no system message.
	Instructions    string              `json:"instructions,omitempty"`
	Input           []message           `json:"input"`
	MaxOutputTokens int                 `json:"max_output_tokens,omitempty"`
	Temperature     *float64            `json:"temperature,omitempty"`
	Reasoning       *responsesReasoning `json:"reasoning,omitempty"`
	// Text holds the answer to a JSON schema, strictly.
	Text *responsesText `json:"text,omitempty"`
	// Store is always false: digest never reads a response back, and
	// keeping prompts on OpenAI's side is not its call.
	Store bool `json:"store"`
}

type responsesReasoning struct {
	Effort string `json:"effort"`
}

// responsesText is text.format: Chat's json_schema, its fields flat.
type responsesText struct {
	Format responsesFormat `json:"format"`
}

type responsesFormat struct {
	Type   string          `json:"type"` // "json_schema"
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// body is req as the Responses API takes it, after the model's rules on
// this API (provider.ProviderRules under ResponsesProvider) leave out what
// it would refuse: a seed always, a temperature for reasoning models.
func (r *ResponsesClient) body(req provider.Request) responsesRequest {
	req, _ = provider.ProviderRules(provider.Spec{Provider: ResponsesProvider, Model: req.Model}).Apply(req)
	input := make([]message, 0, len(req.Messages))
	for _, m := range req.Messages {
		input = append(input, message{Role: m.Role, Content: m.Content})
	}
	b := responsesRequest{Model: req.Model, Instructions: req.System, Input: input, Temperature: req.Temperature}
	if req.MaxTokens > 0 {
		// The cap counts reasoning too: reasoning models get their allowance.
		b.MaxOutputTokens = max(provider.OutputCap(req), minOutputTokens)
	}
	if req.ReasoningEffort != "" {
		b.Reasoning = &responsesReasoning{Effort: req.ReasoningEffort}
	}
	if req.Schema != nil && r.chat.name == "openai" {
		b.Text = &responsesText{Format: responsesFormat{Type: "json_schema", Name: req.Schema.Name, Schema: req.Schema.JSON, Strict: true}}
	}
	return b
}

// Complete sends req once; the engine owns every retry.
func (r *ResponsesClient) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	c := r.chat
	resp, data, err := provider.Post(ctx, c.http, c.name, c.baseURL, r.url, c.authHeader(), r.body(req))
	if err != nil {
		return provider.Response{}, err
	}
	limits := parseLimits(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Response{}, c.statusError(resp.StatusCode, resp.Header, data, limits, req.Model)
	}
	return r.parseAnswer(req, resp.StatusCode, resp.Header, limits, data)
}

// responsesAnswer is read as chatResponse is: the envelope here, each part
// on its own, so that a part in an unexpected shape is named.
type responsesAnswer struct {
	Status            json.RawMessage `json:"status"`
	Output            json.RawMessage `json:"output"`
	IncompleteDetails json.RawMessage `json:"incomplete_details"`
	Usage             json.RawMessage `json:"usage"`
	Error             json.RawMessage `json:"error"`
}

// parseAnswer reads a success body: a synchronous answer, or one line's
// answer in a batch's output.
func (r *ResponsesClient) parseAnswer(req provider.Request, status int, header http.Header, limits *provider.Limits, data []byte) (provider.Response, error) {
	c := r.chat
	var out responsesAnswer
	if err := json.Unmarshal(data, &out); err != nil {
		return provider.Response{}, provider.UnreadableBody(c.name, status, limits, data, err)
	}
	var state string
	if json.Unmarshal(out.Status, &state) != nil && !isNothing(out.Status) {
		return provider.Response{}, provider.Unreadable(c.name, status, limits, fmt.Sprintf("status is %s, not a string", provider.JSONKind(out.Status)))
	}
	if e := r.failure(req, state, status, header, limits, data); e != nil {
		return provider.Response{}, e
	}
	switch state {
	case "queued", "in_progress":
		// Only a background response is answered before it ends, and
		// digest never asks for one.
		return provider.Response{}, provider.Unreadable(c.name, status, limits, fmt.Sprintf("the response is %s, not finished", state))
	}
	text, refusal, messages, problem := outputText(out.Output)
	if problem != "" {
		return provider.Response{}, provider.Unreadable(c.name, status, limits, problem)
	}
	finish := provider.FinishStop
	if state == "incomplete" {
		finish = incompleteFinish(out.IncompleteDetails)
	} else if messages == 0 {
		// Cut short, a reasoning model may have written nothing yet;
		// finished, an answer without a message is not one.
		return provider.Response{}, provider.Unreadable(c.name, status, limits, "the output has no message")
	}
	return c.response(text, refusal, finish, responsesUsage(req, out.Usage), limits), nil
}

// failure is the error a 200 reports instead of an answer, nil when it
// reports none: status "failed" or "cancelled", or an error object. As
// with Chat Completions, an HTTP status in the body (OpenRouter) is
// classified as that status; otherwise the error's code says whether to
// try again (ResponseErrorCode: server_error and vector_store_timeout are
// worth another try, rate_limit_exceeded waits, the rest are the prompt's).
func (r *ResponsesClient) failure(req provider.Request, state string, status int, header http.Header, limits *provider.Limits, data []byte) *provider.Error {
	c := r.chat
	eb, isJSON := parseErrorBody(data)
	if !isJSON || (eb.message == "" && eb.code == "" && eb.status == 0 && state != "failed" && state != "cancelled") {
		return nil
	}
	if eb.status >= 400 {
		return c.statusError(eb.status, header, data, limits, req.Model)
	}
	kind := provider.Permanent
	switch eb.code {
	case "", "server_error", "vector_store_timeout":
		kind = provider.Transient
	case "rate_limit_exceeded":
		kind = provider.RateLimited
	}
	msg := "an error instead of an answer"
	switch state {
	case "failed":
		msg = "the response failed"
	case "cancelled":
		msg = "the response was cancelled"
	}
	if eb.message != "" {
		msg += ": " + provider.CleanMessage(eb.message, c.key)
	}
	return &provider.Error{Provider: c.name, Kind: kind, StatusCode: status, Type: provider.CleanMessage(eb.kind(), c.key), Message: msg, Limits: limits}
}

// incompleteFinish reads incomplete_details.reason: "content_filter" is
// the filter's cut, anything else ("max_output_tokens", a reason digest
// does not know, none) the cap's.
func incompleteFinish(raw json.RawMessage) provider.Finish {
	var d struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(raw, &d)
	if d.Reason == "content_filter" {
		return provider.FinishContentFilter
	}
	return provider.FinishLength
}

// outputText reads output[]: the output_text parts of its message items,
// in order and joined as the SDKs' output_text joins them, and their
// refusal parts apart. Other items (reasoning, tool calls) and parts are
// not the answer. A model that labels its messages (phase) may send
// commentary before its final answer: the commentary is left out when
// another message is there. messages counts the message items read.
func outputText(raw json.RawMessage) (text, refusal string, messages int, problem string) {
	if isNothing(raw) {
		return "", "", 0, ""
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return "", "", 0, provider.DescribeJSON("output", raw, err)
	}
	type part struct{ text, refusal string }
	type msg struct {
		commentary bool
		parts      []part
	}
	var msgs []msg
	final := false
	for i, item := range items {
		var it struct {
			Type    string          `json:"type"`
			Phase   string          `json:"phase"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(item, &it); err != nil {
			return "", "", 0, provider.DescribeJSON(fmt.Sprintf("output[%d]", i), item, err)
		}
		if it.Type != "message" {
			continue
		}
		m := msg{commentary: it.Phase == "commentary"}
		final = final || !m.commentary
		var parts []json.RawMessage
		if !isNothing(it.Content) {
			if err := json.Unmarshal(it.Content, &parts); err != nil {
				return "", "", 0, provider.DescribeJSON(fmt.Sprintf("output[%d].content", i), it.Content, err)
			}
		}
		for j, p := range parts {
			var c struct {
				Type    string          `json:"type"`
				Text    json.RawMessage `json:"text"`
				Refusal json.RawMessage `json:"refusal"`
			}
			if json.Unmarshal(p, &c) != nil {
				continue // not an object: nothing of the answer
			}
			field, raw := "text", c.Text
			switch c.Type {
			case "output_text":
			case "refusal":
				field, raw = "refusal", c.Refusal
			default:
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) != nil && !isNothing(raw) {
				return "", "", 0, fmt.Sprintf("output[%d].content[%d].%s is %s, not a string", i, j, field, provider.JSONKind(raw))
			}
			if c.Type == "refusal" {
				m.parts = append(m.parts, part{refusal: s})
			} else {
				m.parts = append(m.parts, part{text: s})
			}
		}
		msgs = append(msgs, m)
	}
	var tb, rb strings.Builder
	for _, m := range msgs {
		if m.commentary && final {
			continue
		}
		for _, p := range m.parts {
			tb.WriteString(p.text)
			rb.WriteString(p.refusal)
		}
	}
	return tb.String(), rb.String(), len(msgs), ""
}

// responsesUsage reads usage as usage does for Chat Completions: unknown
// when missing or unreadable, every count held to what req could use.
// input_tokens includes input_tokens_details.cached_tokens (read from the
// cache) and cache_write_tokens (written to it); output_tokens includes
// output_tokens_details.reasoning_tokens, which are billed as output.
func responsesUsage(req provider.Request, raw json.RawMessage) provider.Usage {
	var counts map[string]json.RawMessage
	_ = json.Unmarshal(raw, &counts) // an unreadable usage is an unknown one
	var details map[string]json.RawMessage
	_ = json.Unmarshal(counts["input_tokens_details"], &details)
	u := provider.SaneUsage(req, provider.TokenCount(counts["input_tokens"]), provider.TokenCount(counts["output_tokens"]))
	u.CacheReadTokens = provider.CachedPart(provider.TokenCount(details["cached_tokens"]), u.InputTokens)
	u.CacheWriteTokens = provider.CachedPart(provider.TokenCount(details["cache_write_tokens"]), u.InputTokens-u.CacheReadTokens)
	return u
}

// isNothing reports a JSON value that is absent or null.
func isNothing(raw json.RawMessage) bool {
	k := provider.JSONKind(raw)
	return k == "nothing" || k == "null"
}
