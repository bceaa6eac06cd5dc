package engine

import (
	"log/slog"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// Setup is what every command builds its engines from, so that summarize,
// eval and the judge pace and retry a model alike.
type Setup struct {
	Provider    provider.Provider
	Spec        provider.Spec
	Concurrency int
	Limits      Limits
	Timeout     time.Duration
	MaxWait     time.Duration
	MaxFailures int
	Log         *slog.Logger
	Shared      SharedLimit // nil: the engine's own buckets
	// Count counts text's tokens in the tokenizer the run counts in.
	Count func(string) int
	// Tokens, when set, is what a request reserves in place of
	// RequestTokens with Count: the prompt counted as the model counts it
	// (target.Target.Tokens scales it by the model's token factor).
	Tokens func(provider.Request) int
}

// DefaultGrace is how long a hosted model's calls in flight when a run is
// interrupted may go on to bring back their answers. CI runners give a
// cancelled job's step about 7.5 s between SIGINT and SIGTERM (GitHub
// Actions), and a second signal ends digest at once.
const DefaultGrace = 10 * time.Second

// New builds the engine for a model. A hosted model starts slow (one call
// in flight, doubling per round of successes: a bad key costs one request)
// and reserves each request's prompt plus its output cap from the token
// bucket. The offline model has no limits to reserve against: it starts
// at full concurrency and skips the extra tokenizing.
func New(s Setup) *Engine {
	e := &Engine{
		Provider: s.Provider, Model: s.Spec.String(), Concurrency: s.Concurrency, Limits: s.Limits,
		Timeout: s.Timeout, MaxWait: s.MaxWait, MaxFailures: s.MaxFailures, Log: s.Log, Shared: s.Shared,
	}
	if s.Spec.Provider != provider.Offline {
		e.SlowStart, e.Grace = true, DefaultGrace
		switch {
		case s.Tokens != nil:
			e.Tokens = s.Tokens
		case s.Count != nil:
			e.Tokens = func(req provider.Request) int { return RequestTokens(s.Count, req) }
		}
	}
	return e
}

// RequestTokens is the most a request can use: its system prompt and
// messages counted by count, and the output it may write.
func RequestTokens(count func(string) int, req provider.Request) int {
	return PromptTokens(count, req) + provider.OutputCap(req)
}

// PromptTokens is a request's input: its system prompt and messages
// counted by count.
func PromptTokens(count func(string) int, req provider.Request) int {
	n := count(req.System)
	for _, m := range req.Messages {
		n += count(m.Content)
	}
	return n
}
