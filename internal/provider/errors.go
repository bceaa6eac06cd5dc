package provider

import (
	"errors"
	"fmt"
	"time"
)

// Kind tells the engine what to do about a failed call.
type Kind int

const (
	// Transient failures (5xx, 408, 409, timeouts, broken connections)
	// are retried with backoff.
	Transient Kind = iota
	// RateLimited is a retryable 429: the whole model pauses.
	RateLimited
	// Overloaded is 529 or 503 from an overloaded server: everyone's
	// problem, so back off with jitter like a 429, without blaming the budget.
	Overloaded
	// Permanent failures (400, 404, a request too large) fail the item
	// without retrying: sending it again cannot help.
	Permanent
	// Fatal failures (401, 403, an exhausted quota or spend limit, a base
	// URL that is no URL) stop the whole run: every further request would
	// fail the same way.
	Fatal
	// Malformed is a success status whose body the client cannot read: cut
	// short, over the size bound, or in a shape it does not know. It is
	// retried once: a cut body may be a glitch, but the same shape twice is
	// the server's habit, and each try is billed.
	Malformed
)

func (k Kind) String() string {
	switch k {
	case Transient:
		return "transient"
	case RateLimited:
		return "rate limited"
	case Overloaded:
		return "overloaded"
	case Permanent:
		return "permanent"
	case Fatal:
		return "fatal"
	case Malformed:
		return "malformed"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a failed call, classified. Providers return it for every
// failure they can name; any other error counts as Transient.
type Error struct {
	Provider   string // "openai", "anthropic", ...
	Kind       Kind
	StatusCode int    // 0 when no HTTP response arrived
	Type       string // the provider's error type or code, e.g. "insufficient_quota"
	Message    string
	// RetryAfter is the wait the provider asked for (retry-after-ms,
	// retry-after), or 0.
	RetryAfter time.Duration
	// ShouldRetry is the provider's x-should-retry verdict, nil when absent;
	// it overrides Kind's retry decision either way.
	ShouldRetry *bool
	// Hint tells the user how to fix a Fatal or Permanent error, e.g.
	// "Try: export OPENAI_API_KEY=...".
	Hint   string
	Limits *Limits // rate-limit state reported with the error, if any
	Err    error   // underlying transport error, if any
}

func (e *Error) Error() string {
	msg := e.Provider
	if e.Kind == Malformed {
		// "HTTP 200: ..." alone would read as a success.
		return fmt.Sprintf("%s: HTTP %d with an unreadable body: %s", e.Provider, e.StatusCode, e.Message)
	}
	if e.StatusCode != 0 {
		msg += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Type != "" {
		msg += " " + e.Type
	}
	text := e.Message
	if text == "" && e.Err != nil {
		text = e.Err.Error()
	}
	switch {
	case msg == "":
		msg = text // digest's own refusal, before any provider was asked
	case text != "":
		msg += ": " + text
	}
	if e.Hint != "" {
		msg += ". " + e.Hint
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether sending the same request again can succeed.
func (e *Error) Retryable() bool {
	if e.ShouldRetry != nil {
		return *e.ShouldRetry && e.Kind != Fatal
	}
	return e.Kind == Transient || e.Kind == RateLimited || e.Kind == Overloaded || e.Kind == Malformed
}

// KindOf classifies any error a provider returned.
func KindOf(err error) Kind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return Transient
}

// Limits is the rate-limit state a provider reported in response headers.
// A negative count means the header was absent.
type Limits struct {
	RequestsLimit, RequestsRemaining int
	TokensLimit, TokensRemaining     int
	// RequestsReset and TokensReset are how long until the bucket is full
	// again (OpenAI) or until the window resets (Anthropic).
	RequestsReset, TokensReset time.Duration
}

// NoLimits is Limits with every count unknown.
func NoLimits() Limits {
	return Limits{RequestsLimit: -1, RequestsRemaining: -1, TokensLimit: -1, TokensRemaining: -1}
}
