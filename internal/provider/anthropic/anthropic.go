// Package anthropic speaks Anthropic's Messages API.
package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/provider"
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

type messagesResponse struct {
	Type    string `json:"type"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Usage struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Complete sends req once; the engine owns every retry.
func (c *Client) Complete(ctx context.Context, req provider.Request) (provider.Response, error) {
	b := messagesRequest{Model: req.Model, MaxTokens: req.MaxTokens, System: req.System, Temperature: req.Temperature}
	if b.MaxTokens <= 0 {
		b.MaxTokens = DefaultMaxTokens
	}
	b.Messages = make([]message, len(req.Messages))
	for i, m := range req.Messages {
		b.Messages[i] = message{Role: m.Role, Content: m.Content}
	}
	header := http.Header{}
	header.Set("anthropic-version", Version)
	if c.key != "" {
		header.Set("x-api-key", c.key)
	}
	resp, data, err := provider.Post(ctx, c.http, name, c.baseURL, c.url, header, b)
	if err != nil {
		return provider.Response{}, err
	}
	limits := parseLimits(resp.Header, time.Now())
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Response{}, c.statusError(resp.StatusCode, resp.Header, data, limits, req.Model)
	}

	var out messagesResponse
	// Content without "type" still counts, for servers that imitate the API loosely.
	if err := json.Unmarshal(data, &out); err != nil || out.Type != "message" && len(out.Content) == 0 {
		e := &provider.Error{Provider: name, Kind: provider.Transient, StatusCode: resp.StatusCode, Message: "malformed response", Limits: limits}
		if out.Error.Message != "" {
			e.Type, e.Message = provider.CleanMessage(out.Error.Type, c.key), "malformed response: "+provider.CleanMessage(out.Error.Message, c.key)
		}
		return provider.Response{}, e
	}
	// Only text blocks are the answer; thinking and other blocks are not.
	// stop_reason "max_tokens" still carries a usable, if cut, answer.
	var text strings.Builder
	for _, block := range out.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	return provider.Response{
		Text:   text.String(),
		Usage:  provider.Usage{InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens},
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
	case status == http.StatusNotFound && isJSON:
		e.Hint = fmt.Sprintf("Try: check the model name %q", model)
	case status == http.StatusNotFound:
		e.Hint = "Try: check the base URL " + c.baseURL
	}
	return e
}
