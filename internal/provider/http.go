package provider

import (
	"context"
	"errors"
	"fmt"
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
