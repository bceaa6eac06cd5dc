package openai

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

var limitHeaders = [...]string{
	"x-ratelimit-limit-requests", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
	"x-ratelimit-limit-tokens", "x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens",
}

// parseLimits reads OpenAI's rate-limit headers; nil when the server sent
// none, as local servers do.
func parseLimits(h http.Header) *provider.Limits {
	present := false
	for _, name := range limitHeaders {
		if h.Get(name) != "" {
			present = true
			break
		}
	}
	if !present {
		return nil
	}
	l := provider.NoLimits()
	l.RequestsLimit = count(h.Get("x-ratelimit-limit-requests"))
	l.RequestsRemaining = count(h.Get("x-ratelimit-remaining-requests"))
	l.TokensLimit = count(h.Get("x-ratelimit-limit-tokens"))
	l.TokensRemaining = count(h.Get("x-ratelimit-remaining-tokens"))
	l.RequestsReset, _ = parseReset(h.Get("x-ratelimit-reset-requests"))
	l.TokensReset, _ = parseReset(h.Get("x-ratelimit-reset-tokens"))
	return &l
}

// count reads a header count, -1 when absent or unreadable.
func count(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// parseReset reads a reset header: a Go duration ("1s", "6m0s", "12ms",
// "2m59.56s") as OpenAI and Groq send, or plain seconds ("30", "0.5") as some
// compatible servers do. Negative, infinite or overflowing values are
// rejected rather than clamped: a nonsense reset must not stall the engine.
func parseReset(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if d, ok := scaled(s, time.Second); ok {
		return d, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// scaled reads a non-negative decimal number of units.
func scaled(s string, unit time.Duration) (time.Duration, bool) {
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

// retryAfter is the wait the server asked for, as the official SDKs read
// it: retry-after-ms first, then retry-after in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := scaled(strings.TrimSpace(h.Get("retry-after-ms")), time.Millisecond); ok {
		return d
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if d, ok := scaled(v, time.Second); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// shouldRetry is the server's x-should-retry verdict, nil when absent.
func shouldRetry(h http.Header) *bool {
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
