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

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type messagesRequest struct {
	Model       string    `json:"model"`
	MaxTokens   int       `json:"max_tokens"`
	System      string    `json:"system,omitempty"`
	Messages    []message `json:"messages"`
	Temperature *float64  `json:"temperature,omitempty"`
}

// messagesResponse is read in two steps, as the OpenAI client does: a part
// in an unexpected shape is named, and an unreadable usage is unknown.
type messagesResponse struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
	Usage   json.RawMessage `json:"usage"`
	Error   errorDetail     `json:"error"`
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

// body is the request Complete sends, and each batch item's params.
func body(req provider.Request) messagesRequest {
	b := messagesRequest{Model: req.Model, MaxTokens: req.MaxTokens, System: req.System, Temperature: req.Temperature}
	if b.MaxTokens <= 0 {
		b.MaxTokens = DefaultMaxTokens
	}
	b.Messages = make([]message, len(req.Messages))
	for i, m := range req.Messages {
		b.Messages[i] = message{Role: m.Role, Content: m.Content}
	}
	return b
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
	return provider.Response{
		Text:   provider.ScrubKey(text.String(), c.key),
		Usage:  provider.SaneUsage(sent, provider.TokenCount(counts["input_tokens"]), provider.TokenCount(counts["output_tokens"])),
		Limits: limits,
	}, nil
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
