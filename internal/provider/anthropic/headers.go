package anthropic

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

const limitPrefix = "anthropic-ratelimit-"

// parseLimits reads the anthropic-ratelimit-* headers, nil when there are
// none. The tokens-* bucket is the most restrictive limit in effect, so it
// wins; without it, input tokens are what a summary mostly spends.
func parseLimits(h http.Header, now time.Time) *provider.Limits {
	get := func(s string) string { return h.Get(limitPrefix + s) }
	has := func(bucket string) bool {
		return get(bucket+"-limit") != "" || get(bucket+"-remaining") != "" || get(bucket+"-reset") != ""
	}
	tokens := "tokens"
	if !has(tokens) {
		tokens = "input-tokens"
	}
	if !has("requests") && !has(tokens) {
		return nil
	}
	l := provider.NoLimits()
	l.RequestsLimit = count(get("requests-limit"))
	l.RequestsRemaining = count(get("requests-remaining"))
	l.RequestsReset, _ = parseResetTime(get("requests-reset"), now)
	l.TokensLimit = count(get(tokens + "-limit"))
	l.TokensRemaining = count(get(tokens + "-remaining"))
	l.TokensReset, _ = parseResetTime(get(tokens+"-reset"), now)
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

// parseResetTime turns an RFC 3339 reset time into the wait from now; a
// time already past is no wait.
func parseResetTime(s string, now time.Time) (time.Duration, bool) {
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
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
