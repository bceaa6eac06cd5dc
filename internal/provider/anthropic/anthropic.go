// Package anthropic speaks Anthropic's Messages API.
package anthropic

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Options configures a Client.
type Options struct {
	BaseURL    string // default https://api.anthropic.com; "/v1/messages" is appended
	APIKey     string
	KeyEnv     string // the variable that holds the key, named in hints; default ANTHROPIC_API_KEY
	HTTPClient *http.Client
}

const (
	// DefaultBaseURL is Anthropic's own endpoint.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens fills max_tokens, which the API requires, when the
	// request leaves it 0.
	DefaultMaxTokens = 1024
	// Version is the anthropic-version the bodies here are written for.
	Version = "2023-06-01"

	name = "anthropic"
)

// Client sends requests to the Messages API.
type Client struct {
	baseURL, url string
	key, keyEnv  string
	http         *http.Client
}

var _ provider.Provider = (*Client)(nil)

// New returns a client for o.
func New(o Options) *Client {
	c := &Client{baseURL: strings.TrimRight(o.BaseURL, "/"), key: o.APIKey, keyEnv: o.KeyEnv, http: o.HTTPClient}
	if c.baseURL == "" {
		c.baseURL = DefaultBaseURL
	}
	if c.keyEnv == "" {
		c.keyEnv = "ANTHROPIC_API_KEY"
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	c.url = c.baseURL + "/v1/messages"
	return c
}

// message is one turn; Content is a string, or a list of text blocks
// when a block carries cache_control.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type textBlock struct {
	Type         string        `json:"type"`
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

type thinking struct {
	Type string `json:"type"` // "disabled" or "adaptive"
}

type outputConfig struct {
	Effort string        `json:"effort,omitempty"`
	Format *outputFormat `json:"format,omitempty"`
}

// outputFormat holds the answer to a JSON schema (JSON outputs).
type outputFormat struct {
	Type   string          `json:"type"` // "json_schema"
	Schema json.RawMessage `json:"schema"`
}

type messagesRequest struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	System    any       `json:"system,omitempty"` // a string, or text blocks when cached
	Messages  []message `json:"messages"`
	// Temperature is left out for models that refuse it (provider.Rules).
	Temperature  *float64      `json:"temperature,omitempty"`
	Thinking     *thinking     `json:"thinking,omitempty"`
	OutputConfig *outputConfig `json:"output_config,omitempty"`
}

// messagesResponse is read in two steps, as the OpenAI client does: a part
// in an unexpected shape is named, and an unreadable usage is unknown.
type messagesResponse struct {
	Type       string          `json:"type"`
	Content    json.RawMessage `json:"content"`
	StopReason json.RawMessage `json:"stop_reason"`
	// StopDetails explains a refusal: {"type": "refusal", "category",
	// "explanation"}, both of which may be null.
	StopDetails struct {
		Category    *string `json:"category"`
		Explanation *string `json:"explanation"`
	} `json:"stop_details"`
	Usage json.RawMessage `json:"usage"`
	Error errorDetail     `json:"error"`
}

type contentBlock struct {
	Type string          `json:"type"`
	Text json.RawMessage `json:"text"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Complete sends req once; the engine owns every retry.
func (c *Client) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	b := body(req)
	resp, data, err := provider.Post(ctx, c.http, name, c.baseURL, c.url, c.header(), b)
	if err != nil {
		return provider.Response{}, err
	}
	limits := parseLimits(resp.Header, time.Now())
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Response{}, c.statusError(resp.StatusCode, resp.Header, data, limits, req.Model)
	}
	return c.parseAnswer(req, b.MaxTokens, resp.StatusCode, limits, data)
}

// body is the request Complete sends, and each batch item's params, as
// the model's rules (provider.RulesFor) have it: sampling parameters the
// model refuses are left out; a model that thinks by default is told not
// to unless the request asks for an effort, and then its cap holds room
// for the thinking; a long shared prefix is marked for caching.
func body(req provider.Request) messagesRequest {
	rules := provider.ProviderRules(provider.Spec{Provider: name, Model: req.Model})
	req, _ = rules.Apply(req)
	if req.MaxTokens <= 0 {
		req.MaxTokens = DefaultMaxTokens
	}
	b := messagesRequest{Model: req.Model, MaxTokens: provider.OutputCap(req), Temperature: req.Temperature}
	if req.System != "" {
		b.System = req.System
	}
	switch {
	case rules.ThinksByDefault && req.ReasoningEffort == "":
		b.Thinking = &thinking{Type: "disabled"}
	case rules.AdaptiveThinking && req.ReasoningEffort != "":
		b.Thinking = &thinking{Type: "adaptive"}
		b.OutputConfig = &outputConfig{Effort: req.ReasoningEffort}
	case req.ReasoningEffort != "":
		b.OutputConfig = &outputConfig{Effort: req.ReasoningEffort}
	}
	if req.Schema != nil && rules.StructuredOutput {
		if b.OutputConfig == nil {
			b.OutputConfig = &outputConfig{}
		}
		b.OutputConfig.Format = &outputFormat{Type: "json_schema", Schema: req.Schema.JSON}
	}
	b.Messages = make([]message, len(req.Messages))
	for i, m := range req.Messages {
		b.Messages[i] = message{Role: m.Role, Content: m.Content}
	}
	if req.CachePrefix {
		markCache(&b, req, rules.CacheMinTokens)
	}
	return b
}

// markCache asks Anthropic to cache what req shares with the run's other
// requests, where it is long enough to be cached at all (minTokens, the
// model's documented minimum; a shorter prefix would be silently not
// cached): the system prompt, and the turns before the last message
// (few-shot examples). Lengths are estimated at 3 bytes a token, high,
// since a mark on a prefix just short of the minimum costs nothing.
func markCache(b *messagesRequest, req provider.Request, minTokens int) {
	if minTokens <= 0 {
		return
	}
	tokens := len(req.System) / 3
	if req.System != "" && tokens >= minTokens {
		b.System = []textBlock{{Type: "text", Text: req.System, CacheControl: &cacheControl{Type: "ephemeral"}}}
	}
	if len(req.Messages) < 3 {
		return // no turns before the question but the question's own
	}
	last := len(req.Messages) - 2
	for _, m := range req.Messages[:last+1] {
		tokens += len(m.Content) / 3
	}
	if tokens >= minTokens {
		b.Messages[last].Content = []textBlock{{Type: "text", Text: req.Messages[last].Content, CacheControl: &cacheControl{Type: "ephemeral"}}}
	}
}

func (c *Client) header() http.Header {
	header := http.Header{}
	header.Set("anthropic-version", Version)
	if c.key != "" {
		header.Set("x-api-key", c.key)
	}
	return header
}

// parseAnswer reads a success body, a synchronous answer or a batch
// result's message; maxTokens is the cap the request was sent with.
func (c *Client) parseAnswer(req provider.Request, maxTokens, status int, limits *provider.Limits, data []byte) (provider.Response, error) {
	var out messagesResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return provider.Response{}, provider.UnreadableBody(name, status, limits, data, err)
	}
	if out.Error.Message != "" || out.Type == "error" {
		// An error reported instead of an answer (a proxy's, or one that
		// arrived after the 200): worth another try like any server error.
		return provider.Response{}, &provider.Error{Provider: name, Kind: provider.Transient, StatusCode: status,
			Type:    provider.CleanMessage(out.Error.Type, c.key),
			Message: "an error instead of an answer: " + provider.CleanMessage(cmp.Or(out.Error.Message, "no message"), c.key), Limits: limits}
	}
	var blocks []contentBlock
	if kind := provider.JSONKind(out.Content); kind != "nothing" && kind != "null" {
		if err := json.Unmarshal(out.Content, &blocks); err != nil {
			return provider.Response{}, provider.Unreadable(name, status, limits, provider.DescribeJSON("content", out.Content, err))
		}
	}
	// Content without "type" still counts, for servers that imitate the API loosely.
	if out.Type != "message" && len(blocks) == 0 {
		what := "the answer has no content"
		if out.Type != "" {
			what = fmt.Sprintf("the answer's type is %q, not \"message\"", out.Type)
		}
		return provider.Response{}, provider.Unreadable(name, status, limits, what)
	}
	// Only text blocks are the answer; thinking and other blocks are not.
	// stop_reason "max_tokens" still carries a usable, if cut, answer.
	var text strings.Builder
	for i, block := range blocks {
		if block.Type != "text" && block.Type != "" || len(block.Text) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(block.Text, &s) != nil {
			return provider.Response{}, provider.Unreadable(name, status, limits,
				fmt.Sprintf("content[%d].text is %s, not a string", i, provider.JSONKind(block.Text)))
		}
		text.WriteString(s)
	}
	var counts map[string]json.RawMessage
	_ = json.Unmarshal(out.Usage, &counts) // an unreadable usage is an unknown one
	sent := req
	sent.MaxTokens = maxTokens
	sent.ReasoningEffort = "" // maxTokens already holds the room for thinking
	// input_tokens leaves out the tokens read from and written to the
	// cache: Usage counts them all, and those two apart.
	read, written := max(provider.TokenCount(counts["cache_read_input_tokens"]), 0), max(provider.TokenCount(counts["cache_creation_input_tokens"]), 0)
	input := provider.TokenCount(counts["input_tokens"])
	if input >= 0 {
		input += read + written
	}
	u := provider.SaneUsage(sent, input, provider.TokenCount(counts["output_tokens"]))
	u.CacheReadTokens = provider.CachedPart(read, u.InputTokens)
	u.CacheWriteTokens = provider.CachedPart(written, u.InputTokens-u.CacheReadTokens)
	finish := stopReason(out.StopReason)
	answer := text.String()
	if finish == provider.FinishRefusal && strings.TrimSpace(answer) == "" {
		// A refusal may come with no text at all: its explanation is the
		// refusal's words, kept for the report.
		answer = refusalText(out.StopDetails.Category, out.StopDetails.Explanation)
	}
	return provider.Response{
		Text:   redact.Scrub(answer, c.key),
		Finish: finish,
		Usage:  u,
		Limits: limits,
	}, nil
}

// refusalText is a refusal without text in words: its explanation and
// category, as stop_details gives them.
func refusalText(category, explanation *string) string {
	var s string
	if explanation != nil {
		s = *explanation
	}
	if category != nil && *category != "" {
		if s != "" {
			s += " "
		}
		s += "(category: " + *category + ")"
	}
	return s
}

// stopReason reads a message's stop_reason: "max_tokens" (and a context
// window's "model_context_window_exceeded") cut the answer, "refusal" is
// the model declining; "end_turn", "stop_sequence", "tool_use",
// "pause_turn", null and anything else end it.
func stopReason(raw json.RawMessage) provider.Finish {
	var s string
	_ = json.Unmarshal(raw, &s)
	switch s {
	case "max_tokens", "model_context_window_exceeded":
		return provider.FinishLength
	case "refusal":
		return provider.FinishRefusal
	}
	return provider.FinishStop
}

// spendLimit reports the errors that no wait short of a billing change
// fixes. The API words them variously: a 402 billing_error, a 400
// invalid_request_error "Your credit balance is too low..." or "You have
// reached your specified API usage limits...", a 429 naming the spend limit.
func spendLimit(status int, d errorDetail) bool {
	if status == http.StatusPaymentRequired {
		return true
	}
	if status != http.StatusBadRequest && status != http.StatusTooManyRequests {
		return false
	}
	typ, msg := strings.ToLower(d.Type), strings.ToLower(d.Message)
	if strings.Contains(typ, "billing") || strings.Contains(typ, "spend_limit") {
		return true
	}
	for _, s := range []string{"credit balance", "spend limit", "spend_limit", "api usage limits", "billing"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (c *Client) statusError(status int, header http.Header, data []byte, limits *provider.Limits, model string) *provider.Error {
	var body struct {
		Error errorDetail `json:"error"`
	}
	isJSON := json.Unmarshal(data, &body) == nil
	e := provider.StatusError(name, c.key, status, header, data, body.Error.Message, body.Error.Type, isJSON, limits)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Hint = "Try: export " + c.keyEnv + "=<your key>"
	case spendLimit(status, body.Error):
		e.Kind, e.Hint = provider.Fatal, "Try: check Plans & Billing and the spend limits in the Anthropic Console"
	case status != http.StatusTooManyRequests && body.Error.Type == "overloaded_error":
		e.Kind = provider.Overloaded
	case status == http.StatusServiceUnavailable:
		e.Kind = provider.Transient // Anthropic says overloaded with 529
	case status == http.StatusNotFound && isJSON && strings.Contains(strings.ToLower(body.Error.Message), "model"):
		e.Hint = fmt.Sprintf("Try: check the model name %q", model)
	case status == http.StatusNotFound:
		e.Hint = "Try: check the base URL " + textsafe.URL(c.baseURL)
	}
	return e
}
