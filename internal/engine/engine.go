// Package engine pushes requests through a provider as fast as its limits
// allow and no faster: paced request and token buckets, one retry loop
// that honours Retry-After with capped, jittered backoff, a model-wide
// pause on 429 with a gradual ramp back, a circuit breaker, and every
// outcome handed to the caller the moment it lands, so results are
// committed one by one and an interrupted run keeps all it got.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// Task is one request to send, under the key its result is stored as.
type Task struct {
	Key     string
	Request provider.Request
}

// Outcome is what became of a task.
type Outcome struct {
	Task     Task
	Response provider.Response
	Err      error
	Latency  time.Duration // of the attempt that answered
	Attempts int
}

// Defaults for the zero values of Engine's knobs.
const (
	DefaultMaxAttempts = 8
	defaultBackoffBase = 500 * time.Millisecond
	defaultBackoffMax  = 30 * time.Second
	breakerThreshold   = 5
	breakerBase        = 5 * time.Second
	breakerMax         = 2 * time.Minute
)

// Engine dispatches tasks to one model's provider.
type Engine struct {
	Provider    provider.Provider
	Concurrency int
	Limits      Limits
	// Tokens is what a request reserves from the token bucket: its prompt
	// tokens plus its maximum output. Nil reserves nothing.
	Tokens func(provider.Request) int
	// SlowStart begins with one call in flight and doubles per round of
	// successes: for hosted models, where a bad key should cost one request
	// and the limits may be unknown. Local models start at Concurrency.
	SlowStart bool
	// Timeout bounds each attempt; 0 leaves it to the provider.
	Timeout     time.Duration
	MaxAttempts int
	// BackoffBase and BackoffMax shape the exponential backoff between
	// retries that the provider gave no Retry-After for.
	BackoffBase, BackoffMax time.Duration
	// BreakerCooldown is how long a failing model is first left alone.
	BreakerCooldown time.Duration
	Log             *slog.Logger

	once    sync.Once
	budget  *budget
	gate    *gate
	breaker *breaker
	recent  recent
	stats   stats
}

type stats struct {
	requests, retries, rateLimited atomic.Int64
	inputTokens, outputTokens      atomic.Int64
}

// Stats counts what a run has done so far; it is safe to read while the
// run goes on (a progress bar does).
type Stats struct {
	Requests     int64 // attempts sent, retries included
	Retries      int64
	RateLimited  int64 // 429s received
	InputTokens  int64
	OutputTokens int64
}

// Stats reports the counters.
func (e *Engine) Stats() Stats {
	return Stats{
		Requests: e.stats.requests.Load(), Retries: e.stats.retries.Load(),
		RateLimited: e.stats.rateLimited.Load(),
		InputTokens: e.stats.inputTokens.Load(), OutputTokens: e.stats.outputTokens.Load(),
	}
}

func (e *Engine) init() {
	e.once.Do(func() {
		e.budget = newBudget(e.Limits)
		e.gate = newGate(e.Concurrency, e.SlowStart)
		if e.BreakerCooldown <= 0 {
			e.BreakerCooldown = breakerBase
		}
		e.breaker = newBreaker(breakerThreshold, e.BreakerCooldown, breakerMax)
		if e.MaxAttempts <= 0 {
			e.MaxAttempts = DefaultMaxAttempts
		}
		if e.BackoffBase <= 0 {
			e.BackoffBase = defaultBackoffBase
		}
		if e.BackoffMax <= 0 {
			e.BackoffMax = defaultBackoffMax
		}
		if e.Log == nil {
			e.Log = slog.New(slog.DiscardHandler)
		}
	})
}

// recent remembers when requests went out, to count those in the last window.
type recent struct {
	mu    sync.Mutex
	first time.Time
	times []time.Time
}

func (r *recent) add(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first.IsZero() {
		r.first = t
	}
	r.times = append(r.times, t)
	if len(r.times) > 4096 { // keep memory flat; a window rarely holds more
		r.times = append(r.times[:0], r.times[len(r.times)-2048:]...)
	}
}

// seen reports whether requests have gone out for at least a window.
func (r *recent) seen(now time.Time, window time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.first.IsZero() && now.Sub(r.first) >= window
}

func (r *recent) count(now time.Time, window time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for i := len(r.times) - 1; i >= 0 && now.Sub(r.times[i]) < window; i-- {
		n++
	}
	return n
}

// FatalError stops a run: the provider refused in a way every further
// request would repeat (a bad key, an exhausted quota).
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// Run sends every task received on tasks until the channel closes and calls
// commit with each outcome, one at a time, in the order they finish. If
// commit fails, Run stops sending and returns that error. A fatal provider
// error stops the run and is returned as a *FatalError. If ctx is
// cancelled, calls in flight are cancelled, outcomes that already arrived
// are still committed, and Run returns ctx's error. The producer of tasks
// must stop sending when ctx is done.
func (e *Engine) Run(ctx context.Context, tasks <-chan Task, commit func(Outcome) error) error {
	e.init()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	outcomes := make(chan Outcome)
	var fatal atomic.Pointer[FatalError]
	var wg sync.WaitGroup
	// Workers are the ceiling of concurrency; the gate decides how many of
	// them may have a call in flight at any moment.
	for range max(1, e.Concurrency) {
		wg.Go(func() {
			for {
				// select picks at random among ready cases: check first, so a
				// stopped run never takes another task while one is on offer.
				if runCtx.Err() != nil {
					return
				}
				var t Task
				var ok bool
				select {
				case <-runCtx.Done():
					return
				case t, ok = <-tasks:
					if !ok {
						return
					}
				}
				if runCtx.Err() != nil {
					return // stopped while this task was on offer: never send it
				}
				o := e.send(runCtx, t)
				if fe := (*FatalError)(nil); errors.As(o.Err, &fe) {
					fatal.CompareAndSwap(nil, fe)
					cancel()
					return
				}
				if o.Err != nil && runCtx.Err() != nil {
					return // cut short by the stop, not failed: nothing to commit
				}
				outcomes <- o
			}
		})
	}
	go func() {
		wg.Wait()
		close(outcomes)
	}()
	var commitErr error
	for o := range outcomes {
		if commitErr != nil {
			continue // drain so workers can exit
		}
		if err := commit(o); err != nil {
			commitErr = err
			cancel()
		}
	}
	if commitErr != nil {
		return commitErr
	}
	if fe := fatal.Load(); fe != nil {
		return fe
	}
	return ctx.Err()
}

// Do sends one task and waits for its outcome, under the same limits,
// retries and breaker as Run: for calls made while handling other
// outcomes, such as a grading model's verdict.
func (e *Engine) Do(ctx context.Context, t Task) Outcome {
	e.init()
	return e.send(ctx, t)
}

// send makes the attempts for one task.
func (e *Engine) send(ctx context.Context, t Task) Outcome {
	tokens := 0
	if e.Tokens != nil {
		tokens = e.Tokens(t.Request)
	}
	if err := e.budget.check(tokens); err != nil {
		return Outcome{Task: t, Err: err}
	}
	for attempt := 1; ; attempt++ {
		o, wait, done := e.attempt(ctx, t, tokens, attempt)
		if done {
			return o
		}
		if err := Sleep(ctx, wait); err != nil {
			return Outcome{Task: t, Err: err, Attempts: attempt}
		}
	}
}

// attempt makes one try at a task. It returns the outcome when the task is
// done with, or the wait before the next try.
func (e *Engine) attempt(ctx context.Context, t Task, tokens, attempt int) (o Outcome, wait time.Duration, done bool) {
	probe, err := e.breaker.allow(ctx)
	if err != nil {
		return Outcome{Task: t, Err: err, Attempts: attempt - 1}, 0, true
	}
	health := neutral
	defer func() { e.breaker.finish(probe, health) }()
	// The slot first, then the pace: a request paced and then kept
	// waiting for a slot would go out bunched with others.
	if err := e.gate.acquire(ctx); err != nil {
		return Outcome{Task: t, Err: err, Attempts: attempt - 1}, 0, true
	}
	if err := e.budget.admit(ctx, tokens); err != nil {
		e.gate.release(false, false)
		return Outcome{Task: t, Err: err, Attempts: attempt - 1}, 0, true
	}
	e.recent.add(time.Now())
	resp, latency, err := e.call(ctx, t.Request)
	kind := provider.KindOf(err)
	// An overloaded server wants fewer calls at once, like a 429.
	e.gate.release(err != nil && (kind == provider.RateLimited || kind == provider.Overloaded), err == nil)
	if err != nil && ctx.Err() != nil {
		return Outcome{Task: t, Err: ctx.Err(), Attempts: attempt}, 0, true
	}
	// An answer that arrived is kept even if the run is stopping: it is paid for.
	e.stats.requests.Add(1)

	var pe *provider.Error
	errors.As(err, &pe)
	if err == nil {
		health = healthy
		e.budget.learn(resp.Limits)
		e.budget.settle(tokens, resp.Usage.InputTokens+resp.Usage.OutputTokens, resp.Limits == nil || resp.Limits.TokensRemaining < 0)
		e.stats.inputTokens.Add(int64(resp.Usage.InputTokens))
		e.stats.outputTokens.Add(int64(resp.Usage.OutputTokens))
		return Outcome{Task: t, Response: resp, Latency: latency, Attempts: attempt}, 0, true
	}
	if pe != nil {
		e.budget.learn(pe.Limits)
	}
	if kind == provider.Transient || kind == provider.Overloaded {
		health = unhealthy
	}
	retryable := pe == nil || pe.Retryable()
	switch {
	case kind == provider.Fatal:
		return Outcome{Task: t, Err: &FatalError{err}, Attempts: attempt}, 0, true
	case !retryable:
		return Outcome{Task: t, Err: err, Attempts: attempt}, 0, true
	case attempt >= e.MaxAttempts:
		return Outcome{Task: t, Err: fmt.Errorf("gave up after %d attempts: %w", attempt, err), Attempts: attempt}, 0, true
	}

	wait = e.backoff(attempt, pe)
	if kind == provider.RateLimited {
		// The budget was wrong: everyone waits, and the tokens were not spent.
		e.stats.rateLimited.Add(1)
		e.budget.settle(tokens, 0, true)
		// With no header to go by, what went out in the last window is the
		// best guess of a request limit, once a whole window has been seen
		// and unless the 429 was about tokens.
		if (pe == nil || pe.Limits == nil && !strings.Contains(pe.Type, "token")) && e.recent.seen(time.Now(), e.budget.window) {
			e.budget.learn429(e.recent.count(time.Now(), e.budget.window))
		}
		e.budget.pause(time.Now().Add(max(wait, minRateLimitWait)))
		wait = 0
	}
	e.stats.retries.Add(1)
	e.Log.Debug("retrying", "key", t.Key, "attempt", attempt, "kind", kind, "wait", wait, "error", err)
	return Outcome{}, wait, false
}

// minRateLimitWait keeps a 429 without Retry-After from being retried at
// once by the jittered backoff's luck of the draw.
const minRateLimitWait = 500 * time.Millisecond

// call makes one attempt under the per-attempt timeout. A timeout is a
// transient failure of this attempt; the run's own cancellation is not.
func (e *Engine) call(ctx context.Context, req provider.Request) (provider.Response, time.Duration, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if e.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, e.Timeout)
	}
	defer cancel()
	start := time.Now()
	resp, err := e.Provider.Complete(actx, req)
	latency := time.Since(start)
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		err = &provider.Error{Kind: provider.Transient, Message: fmt.Sprintf("no answer within %s", e.Timeout), Err: err}
	}
	return resp, latency, err
}

// backoff is how long to wait before the next attempt: what the provider
// asked for plus a little jitter, so paused workers do not return in
// lockstep; otherwise capped exponential backoff with full jitter.
func (e *Engine) backoff(attempt int, pe *provider.Error) time.Duration {
	if pe != nil && pe.RetryAfter > 0 {
		jitter := min(pe.RetryAfter/10, time.Second)
		return pe.RetryAfter + time.Duration(rand.Int64N(int64(jitter)+1)) + time.Millisecond
	}
	ceiling := e.BackoffMax
	if shift := attempt - 1; shift < 30 {
		ceiling = min(e.BackoffBase<<shift, e.BackoffMax)
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}
