package openai

import (
	"net/http"
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
	l.RequestsLimit = provider.HeaderCount(h.Get("x-ratelimit-limit-requests"))
	l.RequestsRemaining = provider.HeaderCount(h.Get("x-ratelimit-remaining-requests"))
	l.TokensLimit = provider.HeaderCount(h.Get("x-ratelimit-limit-tokens"))
	l.TokensRemaining = provider.HeaderCount(h.Get("x-ratelimit-remaining-tokens"))
	l.RequestsReset, _ = parseReset(h.Get("x-ratelimit-reset-requests"))
	l.TokensReset, _ = parseReset(h.Get("x-ratelimit-reset-tokens"))
	return &l
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
	if d, ok := provider.Scaled(s, time.Second); ok {
		return d, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
