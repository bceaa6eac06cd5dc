// Package target is a configured model: what summarize's model, eval's
// models, eval's judge and summarize's highlights are each sent to, with
// everything the flags, DIGEST_* variables, --model-config and the
// built-in table decided for it, and the one place an engine is built for
// it. cmd builds every Target through one factory, so that two commands,
// or a model and its judge, given the same flags pace, price and shape
// their requests alike.
package target

import (
	"context"
	"log/slog"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/calibrate"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
)

// Target is one configured model.
type Target struct {
	Spec provider.Spec
	// BaseURL is the server the model is asked at ("" for the offline
	// model); it is part of every key, since another server is another
	// model, and recorded with every batch sent to it.
	BaseURL string
	// Provider is the model's client; nil in a dry run, which sends
	// nothing and needs no key.
	Provider provider.Provider
	// Batcher is the model's batch API, used when the run's batch mode is
	// on; Price is then its batch price, and SyncPrice what a request sent
	// at once (--batch-retry sync) is billed at.
	Batcher provider.Batcher
	// Limits are the requests and tokens per window the model allows:
	// --rpm/--tpm, else --model-config, else the built-in table; zero
	// where none is known (the provider's headers teach them).
	Limits           engine.Limits
	Price, SyncPrice models.Price
	// PriceUnknown is set for a model digest has no price for: Price is
	// then zero, and a dry run's cost of it unknown, not free.
	PriceUnknown bool
	// LimitName names the rate limit the model's requests share, through
	// the store, with every process using the same account (see
	// sharedlimit.Name); empty paces this run alone.
	LimitName string
	// Rules are what the model's API takes: parameters it refuses are left
	// out of its requests, and of their keys; their token factor scales
	// what the run's tokenizer counts to what the model counts.
	Rules provider.Rules
	// Factor, when set, is the token factor learned from the input tokens
	// the provider reported in earlier runs and in this one: it replaces
	// the rules' factor once it has enough answers behind it, and learns
	// from every answer the engine gets. Nil counts by the rules alone.
	Factor *calibrate.Learner
}

// Learn gives t a learner starting from what st holds of its model (nil
// st: from nothing), falling back to the rules' factor until enough
// answers are known. The offline model counts its own tokens: it gets
// none.
func (t *Target) Learn(ctx context.Context, st store.FactorStore) error {
	if t.Spec.Provider == provider.Offline {
		return nil
	}
	var prior store.TokenFactor
	if st != nil {
		var err error
		if prior, _, err = st.TokenFactor(ctx, t.Spec.String()); err != nil {
			return err
		}
	}
	t.Factor = calibrate.New(prior.Factor, prior.Samples, t.Rules.Factor())
	return nil
}

// SaveFactor folds what this run learned of the model's tokenizer into
// what st holds, for the runs after it.
func (t Target) SaveFactor(ctx context.Context, st store.FactorStore) error {
	if t.Factor == nil || st == nil {
		return nil
	}
	f, n := t.Factor.Learned()
	if n == 0 {
		return nil
	}
	return st.SaveTokenFactor(ctx, store.TokenFactor{Model: t.Spec.String(), Factor: f, Samples: n})
}

// Setup is what a run adds to a target to build its engine.
type Setup struct {
	// Store keeps the shared rate limit and the batches' records; nil
	// paces the run alone (a dry run builds no engine).
	Store       store.Store
	Concurrency int
	Timeout     time.Duration // per attempt; 0: the provider's
	// MaxWait and MaxFailures stop a run against a provider that asks for
	// a longer wait, or fails that many requests in a row (the engine's
	// defaults when zero; negative: never).
	MaxWait     time.Duration
	MaxFailures int
	Log         *slog.Logger
	// Count counts text's tokens in the tokenizer the run counts in (o200k
	// by default); the target scales it to its model's.
	Count func(string) int
	// Batch sends the target's requests through its Batcher instead of one
	// call each.
	Batch batchrun.Mode
	// Secrets are scrubbed from every answer and error the engine gives
	// back, whichever model wrote it and however it came (a call or a
	// batch): a model that repeats a key it was shown must not get it
	// stored or reported.
	Secrets redact.Secrets
}

// Engine builds what the target's tasks go through, the same way for
// summaries, highlights, answers and verdicts: an engine paced by the
// target's limits (and the limit it shares with other processes, when the
// run has a store), reserving each request's tokens as the model counts
// them, behind the batch API when the run's batch mode is on.
func (t Target) Engine(s Setup) engine.Runner {
	var shared engine.SharedLimit
	if s.Store != nil && t.LimitName != "" {
		shared = sharedlimit.Limit{Store: s.Store, Name: t.LimitName}
	}
	var tokens func(provider.Request) int
	if s.Count != nil {
		tokens = func(req provider.Request) int { return t.Tokens(s.Count, req) }
	}
	p := t.Provider
	if t.Factor != nil && p != nil && s.Count != nil {
		// Each answer's reported input, against the run's own count of its
		// prompt, teaches the factor the next requests are counted with.
		inner, learner, count := p, t.Factor, s.Count
		p = provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			resp, err := inner.Complete(ctx, req)
			if err == nil && learner.Learning() {
				learner.Observe(engine.PromptTokens(count, req), resp.Usage.InputTokens)
			}
			return resp, err
		})
	}
	eng := engine.New(engine.Setup{
		Provider: p, Spec: t.Spec, Concurrency: s.Concurrency, Limits: t.Limits, Timeout: s.Timeout,
		MaxWait: s.MaxWait, MaxFailures: s.MaxFailures, Log: s.Log, Shared: shared, Count: s.Count, Tokens: tokens,
	})
	runner := s.Batch.Runner(eng, batchrun.Config{Batcher: t.Batcher, Spec: t.Spec, BaseURL: t.BaseURL, Store: s.Store})
	if len(s.Secrets) == 0 {
		return runner
	}
	return scrubbing{runner, s.Secrets}
}

// scrubbing is a runner whose outcomes carry none of the secrets.
type scrubbing struct {
	engine.Runner
	secrets redact.Secrets
}

func (r scrubbing) Run(ctx context.Context, tasks <-chan engine.Task, commit func(engine.Outcome) error) error {
	return r.Runner.Run(ctx, tasks, func(o engine.Outcome) error { return commit(r.scrub(o)) })
}

func (r scrubbing) Do(ctx context.Context, t engine.Task) engine.Outcome {
	return r.scrub(r.Runner.Do(ctx, t))
}

func (r scrubbing) scrub(o engine.Outcome) engine.Outcome {
	o.Response.Text = r.secrets.Scrub(o.Response.Text)
	if o.Err != nil {
		if msg := r.secrets.Scrub(o.Err.Error()); msg != o.Err.Error() {
			o.Err = &scrubbedError{msg, o.Err}
		}
	}
	return o
}

// scrubbedError is an error whose text had a secret: it reads scrubbed,
// and is still what it was for errors.Is and errors.As.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// InputTokens is req's prompt (its system prompt and messages) as the
// target's model counts it: count's figure scaled by the rules' token
// factor, rounded up (Sonnet 5 counts 1.42 tokens for each o200k one).
func (t Target) InputTokens(count func(string) int, req provider.Request) int {
	return t.Scale(engine.PromptTokens(count, req))
}

// Scale is n tokens of the run's tokenizer as the target's model counts
// them: by the learned factor when there is one, else the rules'.
func (t Target) Scale(n int) int {
	if t.Factor != nil {
		return t.Factor.Scale(n)
	}
	return t.Rules.Scale(n)
}

// Tokens is the most req can use, as the target's model counts: its input
// and the output it may write (the cap is the model's own tokens already).
// The engine reserves it, and --max-cost and --dry-run count it.
func (t Target) Tokens(count func(string) int, req provider.Request) int {
	return t.InputTokens(count, req) + provider.OutputCap(req)
}
