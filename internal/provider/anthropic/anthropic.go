// Package anthropic speaks Anthropic's Messages API.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

	name    = "anthropic"
	maxBody = 16 << 20 // answers are kilobytes; a broken server must not exhaust memory
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
	body, err := json.Marshal(b)
	if err != nil {
		return provider.Response{}, &provider.Error{Provider: name, Kind: provider.Permanent, Message: "cannot encode the request", Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return provider.Response{}, &provider.Error{Provider: name, Kind: provider.Fatal, Err: err, Hint: "Try: check the base URL " + c.baseURL}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "digest")
	hreq.Header.Set("anthropic-version", Version)
	if c.key != "" {
		hreq.Header.Set("x-api-key", c.key)
	}

	resp, err := c.http.Do(hreq)
	if err != nil {
		return provider.Response{}, provider.TransportError(ctx, name, c.baseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return provider.Response{}, provider.TransportError(ctx, name, c.baseURL, err)
	}
	limits := parseLimits(resp.Header, time.Now())
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Response{}, c.statusError(resp, data, limits, req.Model)
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

func (c *Client) statusError(resp *http.Response, data []byte, limits *provider.Limits, model string) *provider.Error {
	status := resp.StatusCode
	var body struct {
		Error errorDetail `json:"error"`
	}
	msg := ""
	isJSON := json.Unmarshal(data, &body) == nil
	if isJSON {
		msg = body.Error.Message
	} else if s := strings.TrimSpace(string(data)); !strings.HasPrefix(s, "<") {
		msg = s // a proxy's plain-text error; an HTML page says nothing useful
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" && status == 529 { // not in net/http: Anthropic's own code
		msg = "Overloaded"
	}
	e := &provider.Error{
		Provider:    name,
		StatusCode:  status,
		Type:        provider.CleanMessage(body.Error.Type, c.key),
		Message:     provider.CleanMessage(msg, c.key),
		RetryAfter:  provider.RetryAfter(resp.Header, time.Now()),
		ShouldRetry: provider.ShouldRetry(resp.Header),
		Limits:      limits,
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind, e.Hint = provider.Fatal, "Try: export "+c.keyEnv+"=<your key>"
	case spendLimit(status, body.Error):
		e.Kind, e.Hint = provider.Fatal, "Try: check Plans & Billing and the spend limits in the Anthropic Console"
	case status == http.StatusTooManyRequests:
		e.Kind = provider.RateLimited
	case status == 529 || body.Error.Type == "overloaded_error":
		e.Kind = provider.Overloaded
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		e.Kind = provider.Transient
	default:
		e.Kind = provider.Permanent
		if status == http.StatusNotFound {
			if isJSON {
				e.Hint = fmt.Sprintf("Try: check the model name %q", model)
			} else {
				e.Hint = "Try: check the base URL " + c.baseURL
			}
		}
	}
	return e
}
