package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/provider"
)

func ptr[T any](v T) *T { return &v }

// runAll runs tasks through e and returns the committed outcomes by key.
func runAll(t *testing.T, e *engine.Engine, ks []string) (map[string]engine.Outcome, error) {
	t.Helper()
	got := map[string]engine.Outcome{}
	errc := start(context.Background(), e, buffered(ks), func(o engine.Outcome) error {
		got[o.Task.Key] = o
		return nil
	})
	return got, wait(t, errc, "Run")
}

func TestTransientFailuresAreRetriedUntilTheyPass(t *testing.T) {
	var calls sync.Map // key -> *atomic.Int32
	e := &engine.Engine{Concurrency: 2, BackoffBase: time.Millisecond, BackoffMax: 2 * time.Millisecond,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			n, _ := calls.LoadOrStore(req.Model, new(atomic.Int32))
			if n.(*atomic.Int32).Add(1) < 3 {
				return provider.Response{}, &provider.Error{Kind: provider.Transient, StatusCode: 500}
			}
			return answer(req), nil
		})}
	got, err := runAll(t, e, keys("t", 5))
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range got {
		if o.Err != nil || o.Attempts != 3 {
			t.Errorf("%s: err %v after %d attempts, want success on the 3rd", k, o.Err, o.Attempts)
		}
	}
	if s := e.Stats(); s.Retries != 10 || s.Requests != 15 {
		t.Errorf("stats %+v, want 10 retries of 15 requests", s)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, MaxAttempts: 4, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			return provider.Response{}, errors.New("connection reset")
		})}
	got, err := runAll(t, e, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	if o := got["a"]; o.Err == nil || o.Attempts != 4 || calls.Load() != 4 {
		t.Errorf("outcome %+v after %d calls, want failure after 4", o, calls.Load())
	}
}

func TestNotRetried(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  *provider.Error
	}{
		{"400", &provider.Error{Kind: provider.Permanent, StatusCode: 400}},
		{"404", &provider.Error{Kind: provider.Permanent, StatusCode: 404}},
		{"x-should-retry false on a 500", &provider.Error{Kind: provider.Transient, StatusCode: 500, ShouldRetry: ptr(false)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			e := &engine.Engine{Concurrency: 1, BackoffBase: time.Millisecond,
				Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
					calls.Add(1)
					return provider.Response{}, tt.err
				})}
			got, err := runAll(t, e, []string{"a"})
			if err != nil || got["a"].Err == nil || calls.Load() != 1 {
				t.Errorf("run %v, outcome %v, %d calls; want one call and a failed outcome", err, got["a"].Err, calls.Load())
			}
		})
	}
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, BackoffBase: time.Millisecond,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if calls.Add(1) == 1 {
				return provider.Response{}, &provider.Error{Kind: provider.Permanent, StatusCode: 409, ShouldRetry: ptr(true)}
			}
			return answer(req), nil
		})}
	if got, _ := runAll(t, e, []string{"a"}); got["a"].Err != nil || calls.Load() != 2 {
		t.Errorf("x-should-retry true was not honoured: %v after %d calls", got["a"].Err, calls.Load())
	}
}

func TestFatalErrorStopsTheRunAfterOneRequest(t *testing.T) {
	var calls atomic.Int32
	auth := &provider.Error{Provider: "openai", Kind: provider.Fatal, StatusCode: 401, Hint: "Try: export OPENAI_API_KEY=<your key>"}
	e := &engine.Engine{Concurrency: 1,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			return provider.Response{}, auth
		})}
	p := produce(context.Background(), keys("k", 50))
	committed := 0
	began := time.Now()
	err := wait(t, start(context.Background(), e, p.tasks, func(engine.Outcome) error { committed++; return nil }), "Run")
	var fe *engine.FatalError
	if !errors.As(err, &fe) || !errors.Is(err, auth) {
		t.Fatalf("Run = %v, want the fatal provider error", err)
	}
	if calls.Load() != 1 || committed != 0 {
		t.Errorf("%d calls, %d commits; want 1 call and nothing committed", calls.Load(), committed)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("stopping took %s, want under a second", d)
	}
}

// A 429 pauses the whole model: no worker sends until the Retry-After has
// passed, and then the run completes.
func TestRateLimitPausesEveryWorker(t *testing.T) {
	const retryAfter = 150 * time.Millisecond
	var mu sync.Mutex
	var limitedAt time.Time
	var sentDuringPause int
	var first atomic.Bool
	var e *engine.Engine
	e = &engine.Engine{Concurrency: 4,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			// The pause begins when the engine hears the 429, which is
			// before it counts it: a call that starts once the count is
			// seen, and within the Retry-After, started during the pause
			// (unless it had been admitted before, as at most 3 may be).
			if e.Stats().RateLimited > 0 && time.Since(limitedAt) < retryAfter {
				sentDuringPause++
			}
			if first.CompareAndSwap(false, true) {
				limitedAt = time.Now()
				return provider.Response{}, &provider.Error{Kind: provider.RateLimited, StatusCode: 429, RetryAfter: retryAfter}
			}
			return answer(req), nil
		})}
	got, err := runAll(t, e, keys("k", 20))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 {
		t.Fatalf("%d outcomes, want 20", len(got))
	}
	for k, o := range got {
		if o.Err != nil {
			t.Errorf("%s failed: %v", k, o.Err)
		}
	}
	// Calls already in flight when the 429 came may land; none may start after.
	if sentDuringPause > 3 {
		t.Errorf("%d calls started during the pause, want at most the 3 already in flight", sentDuringPause)
	}
	if s := e.Stats(); s.RateLimited != 1 {
		t.Errorf("stats %+v, want one 429", s)
	}
}

func TestRequestLargerThanTheTokenLimitIsRefusedUpFront(t *testing.T) {
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, Limits: engine.Limits{TPM: 1000},
		Tokens: func(provider.Request) int { return 5000 },
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			return answer(req), nil
		})}
	done := make(chan struct{})
	var got map[string]engine.Outcome
	go func() {
		got, _ = runAll(t, e, []string{"big"})
		close(done)
	}()
	wait(t, done, "a refusal instead of a wait")
	if o := got["big"]; o.Err == nil || calls.Load() != 0 || provider.KindOf(o.Err) != provider.Permanent {
		t.Errorf("outcome %v after %d calls, want a permanent refusal and no call", o.Err, calls.Load())
	}
}

// With a declared limit the engine paces: in steady state no window holds
// more requests than the limit, and the first window is not a burst.
func TestPacingKeepsEveryWindowUnderTheLimit(t *testing.T) {
	const window, rpm, n = 500 * time.Millisecond, 20, 45
	var mu sync.Mutex
	var sent []time.Time
	e := &engine.Engine{Concurrency: 8, Limits: engine.Limits{RPM: rpm, Window: window},
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			sent = append(sent, time.Now())
			mu.Unlock()
			return answer(req), nil
		})}
	if _, err := runAll(t, e, keys("k", n)); err != nil {
		t.Fatal(err)
	}
	for i := range sent {
		inWindow := 0
		for _, s := range sent[i:] {
			if s.Sub(sent[i]) < window {
				inWindow++
			}
		}
		if inWindow > rpm {
			t.Fatalf("%d requests within one window from request %d, limit %d", inWindow, i, rpm)
		}
	}
	if got := sent[rpm-1].Sub(sent[0]); got < window/2 {
		t.Errorf("the first %d requests went out within %s: a burst, not a pace", rpm, got)
	}
}

// Tokens reserved but not used are credited to later requests, so a run
// whose estimates are generous still uses the token limit.
func TestUnusedTokensAreCredited(t *testing.T) {
	const window = 400 * time.Millisecond
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 4, Limits: engine.Limits{TPM: 1000, Window: window},
		Tokens: func(provider.Request) int { return 100 }, // reserves 100, uses 10
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			return provider.Response{Text: "ok", Usage: provider.Usage{InputTokens: 8, OutputTokens: 2}}, nil
		})}
	began := time.Now()
	if _, err := runAll(t, e, keys("k", 60)); err != nil {
		t.Fatal(err)
	}
	// 60 requests at 100 reserved tokens would need 6 windows without credit;
	// at 10 used tokens each they fit in one.
	if d := time.Since(began); d > 3*window {
		t.Errorf("60 requests using 600 tokens of a 1000-per-window limit took %s", d)
	}
}

// A limit the headers report paces the requests that follow, and a
// provider with nothing left pauses the model until it has room.
func TestHeadersTeachTheLimit(t *testing.T) {
	const window = 300 * time.Millisecond
	var mu sync.Mutex
	var sent []time.Time
	// One at a time, so that only the first request goes out before any
	// answer has taught the limit.
	e := &engine.Engine{Concurrency: 1, Limits: engine.Limits{Window: window},
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, time.Now())
			l := provider.NoLimits()
			l.RequestsLimit, l.RequestsRemaining = 4, 3
			return provider.Response{Text: "ok", Limits: &l}, nil
		})}
	if _, err := runAll(t, e, keys("k", 6)); err != nil {
		t.Fatal(err)
	}
	// 4 per 300ms, paced 2% under and one at a time: about 100ms apart.
	for i := 2; i < len(sent); i++ {
		if gap := sent[i].Sub(sent[i-1]); gap < 70*time.Millisecond {
			t.Errorf("request %d went out %s after the one before: not paced by the learned limit", i, gap)
		}
	}
}

func TestNothingLeftPausesUntilThereIsRoom(t *testing.T) {
	var mu sync.Mutex
	var sent []time.Time
	const reset = 200 * time.Millisecond
	e := &engine.Engine{Concurrency: 1,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			sent = append(sent, time.Now())
			l := provider.NoLimits() // the limit itself unknown: wait out the whole reset
			l.RequestsRemaining, l.RequestsReset = 0, reset
			return provider.Response{Text: "ok", Limits: &l}, nil
		})}
	if _, err := runAll(t, e, keys("k", 2)); err != nil {
		t.Fatal(err)
	}
	if gap := sent[1].Sub(sent[0]); gap < reset*9/10 {
		t.Errorf("the request after remaining=0 went out after %s, want the %s reset", gap, reset)
	}
}

// A breaker probe whose request is bad (a 400) must not leave the breaker
// waiting for a verdict forever.
func TestProbeWithABadRequestDoesNotHangTheRun(t *testing.T) {
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, MaxAttempts: 6, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
		BreakerCooldown: 50 * time.Millisecond,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			switch n := calls.Add(1); {
			case n <= 5:
				return provider.Response{}, &provider.Error{Kind: provider.Transient, StatusCode: 500}
			case req.Model == "k0":
				return provider.Response{}, &provider.Error{Kind: provider.Permanent, StatusCode: 400}
			}
			return answer(req), nil
		})}
	got, err := runAll(t, e, keys("k", 3))
	if err != nil {
		t.Fatal(err)
	}
	if got["k0"].Err == nil || got["k1"].Err != nil || got["k2"].Err != nil {
		t.Errorf("outcomes %v, %v, %v: want k0 failed, the others done", got["k0"].Err, got["k1"].Err, got["k2"].Err)
	}
}
