package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Helpers shared by the clients of HTTP wire formats: reading the headers
// every provider sends alike, and classifying failures before any answer.

// HeaderCount reads a count header, -1 when absent or unreadable.
func HeaderCount(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// Scaled reads a non-negative decimal number of units.
func Scaled(s string, unit time.Duration) (time.Duration, bool) {
	if s == "" || !strings.ContainsAny(s[:1], "0123456789.") {
		return 0, false // ParseFloat would accept "Inf", "NaN", "+1"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	v := f * float64(unit)
	if v >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(v), true
}

// RetryAfter is the wait the server asked for, as the official SDKs read
// it: retry-after-ms first, then retry-after in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := Scaled(strings.TrimSpace(h.Get("retry-after-ms")), time.Millisecond); ok {
		return d
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if d, ok := Scaled(v, time.Second); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ShouldRetry is the server's x-should-retry verdict, nil when absent.
func ShouldRetry(h http.Header) *bool {
	var b bool
	switch strings.ToLower(strings.TrimSpace(h.Get("x-should-retry"))) {
	case "true":
		b = true
	case "false":
		b = false
	default:
		return nil
	}
	return &b
}

// TransportError classifies a failure to get any response. The caller's
// cancellation passes through untouched so the engine can tell "stop" from
// "failed"; a deadline is a per-request timeout and worth another try.
func TransportError(ctx context.Context, name, baseURL string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
		return cerr
	}
	e := &Error{Provider: name, Kind: Transient, Err: err}
	if errors.Is(err, syscall.ECONNREFUSED) && isLocal(baseURL) {
		e.Hint = fmt.Sprintf("Try: is the server running at %s?", baseURL)
	}
	return e
}

// isLocal reports a base URL on this machine or network: a server of
// one's own, or a proxy standing in for the API.
func isLocal(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified() || ip.IsPrivate())
}

// CleanMessage makes server text fit a one-line error and scrubs the key,
// should a server echo it back.
func CleanMessage(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "<redacted>")
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "..."
	}
	// Error adds ". Hint"; a trailing period would double it.
	return strings.TrimRight(s, ". ")
}

// maxBody bounds what is read of any response: answers are kilobytes, and a
// misbehaving server must not exhaust memory.
const maxBody = 16 << 20

// Post sends payload as JSON to url with the given headers and reads the
// answer, whatever its status. A failure to get one comes back classified,
// as TransportError does.
func Post(ctx context.Context, client *http.Client, name, baseURL, url string, header http.Header, payload any) (*http.Response, []byte, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, &Error{Provider: name, Kind: Permanent, Message: "cannot encode the request", Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, &Error{Provider: name, Kind: Fatal, Err: err, Hint: "Try: check the base URL " + baseURL}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "digest")
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, TransportError(ctx, name, baseURL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, nil, TransportError(ctx, name, baseURL, err)
	}
	return resp, data, nil
}

// StatusError is what every wire format makes of an HTTP error alike: the
// server's message (from its JSON error, else its plain text; an HTML page
// says nothing useful, so the status's name stands in), the retry advice in
// its headers, and the kind its status implies. Each client then refines the
// kind and hint by what its API says in the body (billing, overload).
func StatusError(name, key string, status int, header http.Header, data []byte, message, typ string, isJSON bool, limits *Limits) *Error {
	if !isJSON {
		if s := strings.TrimSpace(string(data)); !strings.HasPrefix(s, "<") {
			message = s // a proxy's plain-text error
		}
	}
	if message == "" {
		message = http.StatusText(status)
	}
	if message == "" && status == 529 { // not in net/http: Anthropic's own code
		message = "Overloaded"
	}
	return &Error{
		Provider:    name,
		Kind:        kindOfStatus(status),
		StatusCode:  status,
		Type:        CleanMessage(typ, key),
		Message:     CleanMessage(message, key),
		RetryAfter:  RetryAfter(header, time.Now()),
		ShouldRetry: ShouldRetry(header),
		Limits:      limits,
	}
}

// kindOfStatus is what an HTTP status alone says about trying again.
func kindOfStatus(status int) Kind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusPaymentRequired:
		return Fatal
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusServiceUnavailable || status == 529:
		return Overloaded
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		return Transient
	}
	return Permanent
}
