package anthropic

import (
	"net/http"
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
	l.RequestsLimit = provider.HeaderCount(get("requests-limit"))
	l.RequestsRemaining = provider.HeaderCount(get("requests-remaining"))
	l.RequestsReset, _ = parseResetTime(get("requests-reset"), now)
	l.TokensLimit = provider.HeaderCount(get(tokens + "-limit"))
	l.TokensRemaining = provider.HeaderCount(get(tokens + "-remaining"))
	l.TokensReset, _ = parseResetTime(get(tokens+"-reset"), now)
	return &l
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
