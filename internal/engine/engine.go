// Package engine pushes requests through a provider as fast as its limits
// allow and no faster: paced request and token buckets, one retry loop
// that honours Retry-After with capped, jittered backoff, a model-wide
// pause on 429 with a gradual ramp back, a circuit breaker, and every
// outcome handed to the caller the moment it lands, so results are
// committed one by one and an interrupted run keeps all it got.
//
// A run never waits in silence and never waits for ever: every wait of
// VisibleWait or more is logged, a provider that asks for more than
// MaxWait or fails MaxFailures requests in a row stops the run with a
// *FatalError that says why and what to try.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
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
	// Members name the pieces of work the request holds, when it holds
	// several (the commits of a summarize request) and they may be asked
	// for again in other groupings: a batch run finds an earlier batch's
	// answer by them. Empty: the request is Key's alone.
	Members []string
}

// Runner is what a pipeline sends its tasks through: an *Engine, which
// calls the provider now under its rate limits, or a batch run, which
// sends them through the provider's batch API and answers within the day
// at half the price. Run and Do keep the Engine's contract (see them);
// a batch run may also end a task with ErrPending.
type Runner interface {
	Run(ctx context.Context, tasks <-chan Task, commit func(Outcome) error) error
	Do(ctx context.Context, t Task) Outcome
	Stats() Stats
}

var _ Runner = (*Engine)(nil)

// ErrPending ends a task whose request sits in a provider's batch that
// had not ended when the run stopped waiting (--no-wait): it is neither
// answered nor failed, and the same command run again collects it.
var ErrPending = errors.New("pending in a provider's batch")

// Outcome is what became of a task.
type Outcome struct {
	Task     Task
	Response provider.Response
	Err      error
	Latency  time.Duration // of the attempt that answered
	Attempts int
	// Batched is set on an answer that came through a provider's batch
	// API, billed at its batch price; a retry sent at once is not.
	Batched bool
}

// Defaults for the zero values of Engine's knobs.
const (
	DefaultMaxAttempts = 8
	// DefaultMaxFailures stops a run after 8 failed requests in a row. The
	// breaker opens after 5 and probes after 5, 10 and 20 s, so the 8th
	// comes about 35-45 s after the first: a dead server, a wrong port or
	// base URL ends the run within a minute, while an outage shorter than
	// about half a minute (a restart, a deploy) is ridden out. Failures
	// that land together count once (see breaker), so the count holds at
	// any concurrency.
	DefaultMaxFailures = 8
	// DefaultMaxWait is the longest wait the provider may ask for before
	// the run stops instead: per-minute limits never ask for more than a
	// minute or two, a daily quota asks for hours.
	DefaultMaxWait = 5 * time.Minute
	// VisibleWait is the shortest wait that is logged (at Warn) and told
	// to OnWait: shorter ones are the ordinary pace of a run.
	VisibleWait = 5 * time.Second

	// maxUnreadable is how many unreadable answers an item may get: one
	// retry, since a cut body may be a glitch, the same shape twice is the
	// server's habit, and every try is billed.
	maxUnreadable      = 2
	defaultBackoffBase = 500 * time.Millisecond
	defaultBackoffMax  = 30 * time.Second
	breakerThreshold   = 5
	breakerBase        = 5 * time.Second
	breakerMax         = 2 * time.Minute
)

// Engine dispatches tasks to one model's provider.
type Engine struct {
	Provider provider.Provider
	// Model names the model in every message the engine writes, as the
	// user wrote it ("openai:gpt-4o-mini"); "the model" when empty.
	Model       string
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
	Timeout time.Duration
	// Grace is how long a call in flight when the run is stopped (an
	// interrupt, another model's fatal error) may go on to bring back its
	// answer, which is committed: a provider bills a request it has begun,
	// so cutting it off would pay for it twice, once now and once on the
	// rerun. 0 cuts calls off at once.
	Grace       time.Duration
	MaxAttempts int
	// BackoffBase and BackoffMax shape the exponential backoff between
	// retries that the provider gave no Retry-After for.
	BackoffBase, BackoffMax time.Duration
	// BreakerCooldown is how long a failing model is first left alone.
	BreakerCooldown time.Duration
	// MaxWait is the longest wait the provider may ask for (Retry-After,
	// retry-after-ms, a rate-limit reset with nothing left); a longer one
	// stops the run with a *WaitError. 0 means DefaultMaxWait; negative
	// accepts any wait. It also caps the breaker's cooldown.
	MaxWait time.Duration
	// MaxFailures is how many failed requests in a row stop the run with a
	// *FailureStreakError: 5xx, timeouts, refused connections, unreadable
	// answers, and refusals that hold for every request (404, 405). A 429,
	// an overloaded answer that says when to come back, and a refusal of
	// the request itself (400, 413, 422) neither count nor reset the count;
	// any answer does reset it. 0 means DefaultMaxFailures; negative never
	// stops, and a dead server then holds the run until it comes back.
	MaxFailures int
	// OnWait, when set, hears of every wait of VisibleWait or longer, with
	// what it is for; it is called from the workers, concurrently.
	OnWait func(d time.Duration, why string)
	Log    *slog.Logger
	// Shared, when set, paces the model by the limit every process using
	// the same account shares, in place of this engine's own buckets; the
	// limits and pauses this engine learns are written there. A run whose
	// shared limit cannot be reached stops with a *FatalError around a
	// *SharedLimitError: alone, it would overrun the others' limit.
	Shared SharedLimit

	once    sync.Once
	clock   clock
	budget  *budget
	gate    *gate
	breaker *breaker
	recent  recent
	stats   stats
	// inFlight counts the calls made and not answered yet.
	inFlight atomic.Int64
	// stopped is the error that stopped the engine; halted is closed when
	// it is set, and stops every Run and Do in progress.
	stopped atomic.Pointer[FatalError]
	halted  chan struct{}
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
		if e.clock == nil {
			e.clock = realClock{}
		}
		e.halted = make(chan struct{})
		e.budget = newBudget(e.Limits, e.clock)
		e.budget.shared, e.budget.model = e.Shared, e.name()
		e.budget.onSharedPause = func(d time.Duration) {
			e.showWait(d, "rate limited", "a pause another process heard", nil)
		}
		e.gate = newGate(e.Concurrency, e.SlowStart)
		if e.MaxWait == 0 {
			e.MaxWait = DefaultMaxWait
		}
		if e.MaxFailures == 0 {
			e.MaxFailures = DefaultMaxFailures
		}
		if e.BreakerCooldown <= 0 {
			e.BreakerCooldown = breakerBase
		}
		longest := breakerMax
		if e.MaxWait > 0 {
			longest = min(longest, e.MaxWait)
		}
		e.breaker = newBreaker(e.clock, breakerThreshold, e.BreakerCooldown, max(longest, e.BreakerCooldown))
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
// request would repeat (a bad key, an exhausted quota), failed too many
// requests in a row (a *FailureStreakError inside), or asked for a longer
// wait than the run allows (a *WaitError inside). Once an engine has
// stopped, every Run and Do returns the error that stopped it.
type FatalError struct{ Err error }

func (e *FatalError) Error() string { return e.Err.Error() }
func (e *FatalError) Unwrap() error { return e.Err }

// FailureStreakError is a model that failed MaxFailures requests in a row.
type FailureStreakError struct {
	Model    string
	Failures int
	Last     error // the last failure
}

func (e *FailureStreakError) Error() string {
	last, try := splitHint(e.Last)
	return fmt.Sprintf("%s failed %d requests in a row, the last: %s. %s Stored results are kept: run again to continue",
		e.Model, e.Failures, last, endSentence(try))
}

func (e *FailureStreakError) Unwrap() error { return e.Last }

// splitHint is a failure's text without its "Try: ...", and that advice,
// or advice fitting its kind when it has none.
func splitHint(err error) (text, try string) {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Hint != "" {
		bare := *pe
		bare.Hint = ""
		return strings.Replace(err.Error(), pe.Error(), bare.Error(), 1), pe.Hint
	}
	var ne net.Error
	switch kind := provider.KindOf(err); {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		try = "Try: check that the server is up, or a longer --timeout"
	case kind == provider.Overloaded:
		try = "Try: run again later, or a lower --concurrency"
	case kind == provider.Malformed:
		try = "Try: check that --base-url points at a server of this API"
	case kind == provider.Permanent:
		try = "Try: check --base-url and the model name"
	default:
		try = "Try: check that the server is up, and --base-url if you set one"
	}
	return err.Error(), try
}

func endSentence(s string) string {
	if strings.HasSuffix(s, "?") || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// WaitError is a provider asking for a longer wait than MaxWait.
type WaitError struct {
	Model string
	Wait  time.Duration // what the provider asked for
	Max   time.Duration // MaxWait
	// Source is where the provider said so: "Retry-After", or "its
	// rate-limit reset" for a reset header with nothing left.
	Source string
}

func (e *WaitError) Error() string {
	quota := ""
	if e.Wait >= time.Hour {
		quota = " (quota?)" // per-minute limits never ask for hours
	}
	return fmt.Sprintf("%s: the provider asks to wait %s%s by %s, longer than --max-wait %s; stored results kept. Try: run again later, or a longer --max-wait",
		e.Model, roundWait(e.Wait), quota, e.Source, roundWait(e.Max))
}

// roundWait writes a wait as a person reads it: 24h0m, 6m0s, 30s, 1.5s.
func roundWait(d time.Duration) string {
	switch {
	case d >= time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// halt stops the engine with fe, unless it stopped already; it returns fe.
func (e *Engine) halt(fe *FatalError) *FatalError {
	if e.stopped.CompareAndSwap(nil, fe) {
		close(e.halted)
	}
	return fe
}

// whenHalted cancels ctx's child when the engine stops.
func (e *Engine) whenHalted(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-e.halted:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func (e *Engine) name() string {
	if e.Model != "" {
		return e.Model
	}
	return "the model"
}

// showWait logs a wait of VisibleWait or more, and tells OnWait: a run
// that waits must say so, or it looks hung.
func (e *Engine) showWait(d time.Duration, cause, source string, err error) {
	if d < VisibleWait {
		return
	}
	msg := fmt.Sprintf("%s: %s, waiting %s (%s)", e.name(), cause, roundWait(d), source)
	if err != nil {
		e.Log.Warn(msg, "error", err)
	} else {
		e.Log.Warn(msg)
	}
	if e.OnWait != nil {
		e.OnWait(d, cause+" ("+source+")")
	}
}

// pauseAll pauses the whole model for d because the provider's reset
// headers say it has nothing left, or stops the run when d is longer than
// MaxWait.
func (e *Engine) pauseAll(ctx context.Context, d time.Duration) *FatalError {
	if e.MaxWait > 0 && d > e.MaxWait {
		return e.halt(&FatalError{&WaitError{Model: e.name(), Wait: d, Max: e.MaxWait, Source: "its rate-limit reset"}})
	}
	if e.budget.pause(d) >= VisibleWait {
		e.showWait(d, "no requests left", "rate-limit reset", nil)
	}
	return e.haltShared(e.budget.sharePause(ctx, d))
}

// haltShared stops the engine when the shared limit could not be reached.
func (e *Engine) haltShared(err error) *FatalError {
	if fe := (*FatalError)(nil); errors.As(err, &fe) {
		return e.halt(fe)
	}
	return nil
}

// Run sends every task received on tasks until the channel closes and calls
// commit with each outcome, one at a time, in the order they finish. If
// commit fails, Run stops sending and returns that error. A fatal provider
// error, too many failures in a row or too long a wait stop the run (and
// the engine) and are returned as a *FatalError; answers that arrived are
// still committed. If ctx is cancelled, calls in flight are cancelled,
// outcomes that already arrived are still committed, and Run returns ctx's
// error. The producer of tasks must stop sending when ctx is done.
func (e *Engine) Run(ctx context.Context, tasks <-chan Task, commit func(Outcome) error) error {
	e.init()
	runCtx, cancel := e.whenHalted(ctx)
	defer cancel()
	// A failed commit cuts the calls in flight off at once: nothing more
	// is committed, so their answers would be awaited only to be dropped.
	cutCtx, cut := context.WithCancel(context.Background())
	defer cut()
	runCtx = context.WithValue(runCtx, cutKey{}, cutCtx)
	// Any stop but a failed commit awaits the calls in flight: an
	// interrupt, and a fatal error as well, which must not look hung.
	// The line is written before Run returns: after, it would come behind
	// the caller's own last line, and race with it for standard error.
	told := make(chan struct{})
	stopTelling := context.AfterFunc(runCtx, func() {
		defer close(told)
		if cutCtx.Err() == nil {
			e.tellGrace(ctx.Err() != nil)
		}
	})
	defer func() {
		if !stopTelling() {
			<-told
		}
	}()
	outcomes := make(chan Outcome)
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
					return // the engine has stopped; Run reports why
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
			cut()
			cancel()
		}
	}
	if commitErr != nil {
		return commitErr
	}
	if fe := e.stopped.Load(); fe != nil {
		return fe
	}
	return ctx.Err()
}

// Do sends one task and waits for its outcome, under the same limits,
// retries and breaker as Run: for calls made while handling other
// outcomes, such as a grading model's verdict. Its error is a *FatalError
// when the engine has stopped (now or before), like Run's.
func (e *Engine) Do(ctx context.Context, t Task) Outcome {
	e.init()
	doCtx, cancel := e.whenHalted(ctx)
	defer cancel()
	o := e.send(doCtx, t)
	if o.Err != nil && ctx.Err() == nil && doCtx.Err() != nil {
		if fe := e.stopped.Load(); fe != nil {
			o.Err = fe // cut short by another call's stop
		}
	}
	return o
}

// tries counts what one task has been through.
type tries struct {
	sent       int // requests made
	counted    int // of them, those that count against MaxAttempts: all but failed breaker probes
	unreadable int // answers that could not be read
}

// send makes the attempts for one task.
func (e *Engine) send(ctx context.Context, t Task) Outcome {
	if fe := e.stopped.Load(); fe != nil {
		return Outcome{Task: t, Err: fe}
	}
	tokens := 0
	if e.Tokens != nil {
		tokens = e.Tokens(t.Request)
	}
	if err := e.budget.check(tokens); err != nil {
		return Outcome{Task: t, Err: err}
	}
	var tr tries
	for {
		o, wait, done := e.attempt(ctx, t, tokens, &tr)
		if done {
			if fe := (*FatalError)(nil); errors.As(o.Err, &fe) {
				e.halt(fe)
			}
			return o
		}
		if err := e.clock.Sleep(ctx, wait); err != nil {
			return Outcome{Task: t, Err: err, Attempts: tr.sent}
		}
	}
}

// verdictOf is what a call's result says of the model's health.
func verdictOf(err error, pe *provider.Error) verdict {
	if err == nil {
		return healthy
	}
	switch provider.KindOf(err) {
	case provider.Transient:
		return unhealthy
	case provider.Overloaded:
		if pe != nil && pe.RetryAfter > 0 {
			return neutral // alive, and saying when to come back
		}
		return unhealthy
	case provider.Malformed:
		return refused
	case provider.Permanent:
		switch pe.StatusCode {
		case 0, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return neutral // this request's own fault (or none was sent)
		}
		return refused // 404, 405, 415: every request would get the same
	}
	return neutral // rate limited, fatal
}

// attempt makes one try at a task. It returns the outcome when the task is
// done with, or the wait before the next try.
func (e *Engine) attempt(ctx context.Context, t Task, tokens int, tr *tries) (o Outcome, wait time.Duration, done bool) {
	end := func(err error) (Outcome, time.Duration, bool) {
		return Outcome{Task: t, Err: err, Attempts: tr.sent}, 0, true
	}
	probe, err := e.breaker.allow(ctx)
	if err != nil {
		return end(err)
	}
	// The slot first, then the pace: a request paced and then kept
	// waiting for a slot would go out bunched with others.
	if err := e.gate.acquire(ctx); err != nil {
		e.breaker.finish(probe, time.Time{}, neutral)
		return end(err)
	}
	if err := e.budget.admit(ctx, tokens); err != nil {
		e.gate.release(false, false)
		e.breaker.finish(probe, time.Time{}, neutral)
		return end(err)
	}
	if fe := e.stopped.Load(); fe != nil {
		// Stopped while this call waited its turn: send nothing more.
		e.gate.release(false, false)
		e.breaker.finish(probe, time.Time{}, neutral)
		return end(fe)
	}
	if err := ctx.Err(); err != nil {
		// Stopped before this call went out: the grace is for the calls in
		// flight, which are paid for, never for a new one.
		e.gate.release(false, false)
		e.breaker.finish(probe, time.Time{}, neutral)
		return end(err)
	}
	sent := e.clock.Now()
	e.recent.add(time.Now())
	resp, latency, err := e.call(ctx, t.Request)
	kind := provider.KindOf(err)
	var pe *provider.Error
	errors.As(err, &pe)
	// A 429 pauses every worker, and first of all: answers to the others'
	// calls may come back in microseconds, and each would send again before
	// the bookkeeping below was done.
	var paused time.Duration
	if kind == provider.RateLimited && ctx.Err() == nil {
		asked := time.Duration(0)
		if pe != nil {
			asked = pe.RetryAfter
		}
		paused = e.budget.pause(max(asked, minRateLimitWait))
	}
	// An overloaded server wants fewer calls at once, like a 429. The slot
	// is given back only once the stop, if any, is decided: the next call
	// must not go out behind the one that stops the run.
	defer e.gate.release(err != nil && (kind == provider.RateLimited || kind == provider.Overloaded), err == nil)
	if err != nil && ctx.Err() != nil {
		e.breaker.finish(probe, sent, neutral)
		tr.sent++
		return end(ctx.Err())
	}
	// An answer that arrived is kept even if the run is stopping: it is paid for.
	tr.sent++
	e.stats.requests.Add(1)

	health := verdictOf(err, pe)
	streak, opened := e.breaker.finish(probe, sent, health)
	if e.MaxFailures > 0 && (health == unhealthy || health == refused) && streak >= e.MaxFailures {
		return end(e.halt(&FatalError{&FailureStreakError{Model: e.name(), Failures: streak, Last: err}}))
	}
	// A failed probe tells of the model, not of this task: the task keeps
	// its attempts for when the model is back.
	if !probe || health != unhealthy {
		tr.counted++
	}
	if err == nil {
		pause := e.budget.learn(resp.Limits)
		e.budget.reconcile(tokens, resp.Usage.InputTokens+resp.Usage.OutputTokens, resp.Limits == nil || resp.Limits.TokensRemaining < 0)
		e.stats.inputTokens.Add(int64(resp.Usage.InputTokens))
		e.stats.outputTokens.Add(int64(resp.Usage.OutputTokens))
		if pause > 0 {
			e.pauseAll(ctx, pause) // a stop lets this answer through first
		}
		e.haltShared(e.budget.share(ctx)) // likewise
		return Outcome{Task: t, Response: resp, Latency: latency, Attempts: tr.sent}, 0, true
	}
	if pe != nil {
		if d := e.budget.learn(pe.Limits); d > 0 {
			if fe := e.pauseAll(ctx, d); fe != nil {
				return end(fe)
			}
		}
		if fe := e.haltShared(e.budget.share(ctx)); fe != nil {
			return end(fe)
		}
	}
	if opened > 0 {
		stops := "the breaker"
		if e.MaxFailures > 0 {
			stops = fmt.Sprintf("the breaker; the run stops at %d", e.MaxFailures)
		}
		e.showWait(opened, fmt.Sprintf("%d requests failed in a row", streak), stops, err)
	}
	retryable := pe == nil || pe.Retryable()
	switch {
	case kind == provider.Fatal:
		return end(&FatalError{err})
	case !retryable:
		return end(err)
	case kind == provider.Malformed:
		if tr.unreadable++; tr.unreadable >= maxUnreadable {
			return end(fmt.Errorf("gave up after %d unreadable answers: %w", tr.unreadable, err))
		}
	}
	// A wait that long is the model's, not this task's: it stops the run
	// even on the task's last attempt.
	if pe != nil && e.MaxWait > 0 && pe.RetryAfter > e.MaxWait {
		return end(&FatalError{&WaitError{Model: e.name(), Wait: pe.RetryAfter, Max: e.MaxWait, Source: "Retry-After"}})
	}
	if tr.counted >= e.MaxAttempts {
		return end(fmt.Errorf("gave up after %d attempts: %w", tr.counted, err))
	}

	wait = e.backoff(tr.counted, pe)
	// What the provider asked for is what is shown: the jitter on top is
	// the engine's business.
	source, shown := "backoff", wait
	if pe != nil && pe.RetryAfter > 0 {
		source, shown = "Retry-After", pe.RetryAfter
	}
	if kind == provider.RateLimited {
		// The budget was wrong: everyone waits, and the tokens were not spent.
		e.stats.rateLimited.Add(1)
		e.budget.reconcile(tokens, 0, true)
		// With no header to go by, what went out in the last window is the
		// best guess of a request limit, once a whole window has been seen
		// and unless the 429 was about tokens.
		// A shared limit is not guessed so: this process saw only its own
		// share of what went out.
		if e.Shared == nil && (pe == nil || pe.Limits == nil && !strings.Contains(pe.Type, "token")) && e.recent.seen(time.Now(), e.budget.window) {
			e.budget.learn429(e.recent.count(time.Now(), e.budget.window))
		}
		// Workers that hear the same 429 at once report it once.
		if paused+e.budget.pause(max(wait, minRateLimitWait)) >= VisibleWait {
			e.showWait(max(shown, minRateLimitWait), "rate limited", source, nil)
		}
		// Every process using the account holds off too: each of them
		// would otherwise hear a 429 of its own before learning.
		if fe := e.haltShared(e.budget.sharePause(ctx, max(wait, minRateLimitWait))); fe != nil {
			return end(fe)
		}
		wait = 0
	} else {
		cause := "request failed"
		switch kind {
		case provider.Overloaded:
			cause = "overloaded"
		case provider.Malformed:
			cause = "unreadable answer"
		}
		e.showWait(shown, cause, source, err)
	}
	e.stats.retries.Add(1)
	e.Log.Debug("retrying", "model", e.name(), "key", t.Key, "attempt", tr.sent, "kind", kind, "wait", wait, "error", err)
	return Outcome{}, wait, false
}

// minRateLimitWait keeps a 429 without Retry-After from being retried at
// once by the jittered backoff's luck of the draw.
const minRateLimitWait = 500 * time.Millisecond

// call makes one attempt under the per-attempt timeout. A timeout is a
// transient failure of this attempt; the run's own cancellation is not.
func (e *Engine) call(ctx context.Context, req provider.Request) (provider.Response, time.Duration, error) {
	gctx, stop := withGrace(ctx, e.Grace)
	defer stop()
	actx, cancel := gctx, context.CancelFunc(func() {})
	if e.Timeout > 0 {
		actx, cancel = context.WithTimeout(gctx, e.Timeout)
	}
	defer cancel()
	e.inFlight.Add(1)
	defer e.inFlight.Add(-1)
	start := time.Now()
	resp, err := e.Provider.Complete(actx, req)
	latency := time.Since(start)
	if err != nil && gctx.Err() == nil && actx.Err() != nil {
		err = &provider.Error{Provider: e.name(), Kind: provider.Transient, Message: fmt.Sprintf("no answer within %s", e.Timeout), Err: err}
	}
	return resp, latency, err
}

// tellGrace says, when a run is stopped (an interrupt, a fatal error) with
// calls in flight, that their answers are awaited: a stopped run that does
// not end at once must not look hung.
func (e *Engine) tellGrace(interrupted bool) {
	// Main restores the default handler at the first signal: a run stopped
	// by an error has not had it yet.
	stopNow := "interrupt twice to stop now"
	if interrupted {
		stopNow = "interrupt again to stop now"
	}
	if n := e.inFlight.Load(); n > 0 && e.Grace > 0 {
		e.Log.Warn("stopping: awaiting the answers in flight, which are paid for; "+stopNow,
			"model", e.name(), "calls", n, "at_most", e.Grace)
	}
}

// cutKey holds, in a run's context, the context whose end cuts its calls
// off at once, grace or not.
type cutKey struct{}

// withGrace is ctx for a call that may outlive ctx by grace: it ends grace
// after ctx does, at once when ctx's cut (cutKey) ends, or when stop is
// called.
func withGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	if grace <= 0 {
		return ctx, func() {}
	}
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopCut := func() bool { return false }
	if cut, ok := ctx.Value(cutKey{}).(context.Context); ok {
		stopCut = context.AfterFunc(cut, cancel)
	}
	var mu sync.Mutex
	var timer *time.Timer
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if gctx.Err() == nil {
			timer = time.AfterFunc(grace, cancel)
		}
	})
	return gctx, func() {
		stopAfter()
		stopCut()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
		cancel()
	}
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

// clock is the engine's time, for the waits a test must not sit through:
// the breaker's cooldowns, the backoff between tries and the model-wide
// pause. The request buckets keep real time.
type clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time                                   { return time.Now() }
func (realClock) Sleep(ctx context.Context, d time.Duration) error { return Sleep(ctx, d) }
