package engine_test

// A provider that is dead, refuses every request, asks for a day's wait or
// answers what cannot be read stops the run, soon and in one clear line;
// every long wait on the way is said out loud. Waits of the engine's own
// making run on a virtual clock, so minutes of cooldown take no time.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
)

const model = "openai:gpt-test"

// virtualClock never sleeps: a wait moves its time on. Waits of workers
// running side by side add up, so its elapsed time is an upper bound on
// what the run would take, and a loose one: how many workers sleep on one
// deadline is the scheduler's choice (one or two, under -race, doubling
// the figure). A bound on time is checked with one worker.
type virtualClock struct {
	mu    sync.Mutex
	start time.Time
	now   time.Time
}

func newVirtualClock(e *engine.Engine) *virtualClock {
	c := &virtualClock{start: time.Now(), now: time.Now()}
	engine.SetClock(e, c.Now, c.Sleep)
	return c
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	return nil
}

func (c *virtualClock) elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now.Sub(c.start)
}

// logBuffer collects what the engine logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func logTo(l *logBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// closedPort is a base URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	return base
}

func oneLine(t *testing.T, err error, wants ...string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("the message is not one line: %q", msg)
	}
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("the message %q does not say %q", msg, w)
		}
	}
}

// At the defaults, a server nobody listens on stops the run within a
// minute of (virtual) time and eight requests, with one line naming the
// model, the last error and what to try; the breaker's waits on the way
// are logged.
func TestDeadServerStopsTheRunWithinAMinute(t *testing.T) {
	base := closedPort(t)
	var logs logBuffer
	e := &engine.Engine{Provider: openai.New(openai.Options{Name: "openai", BaseURL: base}), Model: model,
		Concurrency: 4, SlowStart: true, Log: logTo(&logs)}
	clock := newVirtualClock(e)
	committed, err := runTasks(t, e, prompts(20))
	var fe *engine.FatalError
	var streak *engine.FailureStreakError
	if !errors.As(err, &fe) || !errors.As(err, &streak) {
		t.Fatalf("Run = %v, want a *FatalError holding a *FailureStreakError", err)
	}
	oneLine(t, err, model+" failed 8 requests in a row", "connection refused", "Try: is the server running at "+base+"?", "Stored results are kept")
	if n := e.Stats().Requests; n != engine.DefaultMaxFailures {
		t.Errorf("%d requests sent, want %d", n, engine.DefaultMaxFailures)
	}
	// The virtual clock adds up the waits of workers that wait side by
	// side, so at concurrency 4 its figure is a loose upper bound (38 s
	// or 78 s from run to run, as the scheduler puts one or two workers to
	// sleep on one deadline); one worker waits alone, and its figure is
	// the breaker's own schedule.
	if d := clock.elapsed(); d > 2*time.Minute {
		t.Errorf("the run stopped after %s of waiting at concurrency 4, want under two minutes even added up", d)
	}
	alone := &engine.Engine{Provider: openai.New(openai.Options{Name: "openai", BaseURL: base}), Model: model,
		Concurrency: 1, SlowStart: true}
	aloneClock := newVirtualClock(alone)
	if _, err := runTasks(t, alone, prompts(20)); !errors.As(err, new(*engine.FailureStreakError)) {
		t.Fatalf("one worker: Run = %v, want a failure streak", err)
	}
	if d := aloneClock.elapsed(); d > time.Minute {
		t.Errorf("one worker stopped after %s of waiting, want under a minute", d)
	} else {
		t.Logf("one worker stopped after %s of waiting", d.Round(time.Second))
	}
	if len(committed) != 0 {
		t.Errorf("%d outcomes committed; a stopped run commits no failure", len(committed))
	}
	if !strings.Contains(logs.String(), model+": 5 requests failed in a row, waiting 5s") {
		t.Errorf("the breaker's wait was not logged:\n%s", logs.String())
	}
}

// Every request refused the same way (a base URL without /v1: 404) stops
// the run after MaxFailures requests, with the provider's own hint.
func TestEveryRequestRefusedStopsTheRun(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	e := &engine.Engine{Provider: openai.New(openai.Options{Name: "openai", BaseURL: srv.URL(), HTTPClient: srv.Client()}), Model: model,
		Concurrency: 4, SlowStart: true, MaxFailures: 3}
	newVirtualClock(e)
	_, err := runTasks(t, e, prompts(30))
	if !errors.As(err, new(*engine.FailureStreakError)) {
		t.Fatalf("Run = %v, want a failure streak", err)
	}
	oneLine(t, err, model+" failed 3 requests in a row", "HTTP 404", "Try: check the base URL "+srv.URL())
	if n := srv.Stats().Requests; n != 3 {
		t.Errorf("%d requests reached the server, want 3", n)
	}
}

// A server answering 500 to everything stops the run, as a dead one does.
func TestServerFailingEveryRequestStopsTheRun(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Faults: fakeprovider.FaultConfig{Status500: 1}})
	e := &engine.Engine{Provider: openaiClient(srv, "k"), Model: model, Concurrency: 4, SlowStart: true}
	clock := newVirtualClock(e)
	_, err := runTasks(t, e, prompts(10))
	if !errors.As(err, new(*engine.FailureStreakError)) {
		t.Fatalf("Run = %v, want a failure streak", err)
	}
	oneLine(t, err, model+" failed 8 requests in a row", "HTTP 500", "Try: check that the server is up")
	// Added up over workers waiting side by side (see
	// TestDeadServerStopsTheRunWithinAMinute, which times one worker).
	if n := srv.Stats().Requests; n != 8 || clock.elapsed() > 2*time.Minute {
		t.Errorf("%d requests over %s, want 8 within two minutes of waits added up", n, clock.elapsed())
	}
}

// Which failures count toward the stop: a 429, an overload that says when
// to come back and a bad request do not; a 5xx, an overload that does not
// say, and a 404 do. An answer resets the count.
func TestWhatCountsAsAFailureInARow(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   *provider.Error
		stops bool
	}{
		{"429", &provider.Error{Provider: "p", Kind: provider.RateLimited, StatusCode: 429, RetryAfter: time.Second}, false},
		{"503 with Retry-After", &provider.Error{Provider: "p", Kind: provider.Overloaded, StatusCode: 503, RetryAfter: time.Second}, false},
		{"400", &provider.Error{Provider: "p", Kind: provider.Permanent, StatusCode: 400}, false},
		{"422", &provider.Error{Provider: "p", Kind: provider.Permanent, StatusCode: 422}, false},
		{"529 without Retry-After", &provider.Error{Provider: "p", Kind: provider.Overloaded, StatusCode: 529}, true},
		{"500", &provider.Error{Provider: "p", Kind: provider.Transient, StatusCode: 500}, true},
		{"404", &provider.Error{Provider: "p", Kind: provider.Permanent, StatusCode: 404}, true},
		{"unreadable", &provider.Error{Provider: "p", Kind: provider.Malformed, StatusCode: 200, Message: "x"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			e := &engine.Engine{Concurrency: 1, Model: model, MaxFailures: 4, MaxAttempts: 30,
				Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
					if calls.Add(1) <= 6 {
						return provider.Response{}, c.err
					}
					return answer(req), nil
				})}
			newVirtualClock(e)
			_, err := runAll(t, e, keys("k", 6))
			if stopped := errors.As(err, new(*engine.FailureStreakError)); stopped != c.stops {
				t.Errorf("six in a row: Run = %v, want a stop: %v", err, c.stops)
			}
		})
	}
	// Failures broken up by answers never add up to a stop.
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, Model: model, MaxFailures: 3,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if calls.Add(1)%3 != 0 {
				return provider.Response{}, &provider.Error{Provider: "p", Kind: provider.Transient, StatusCode: 500}
			}
			return answer(req), nil
		})}
	newVirtualClock(e)
	if _, err := runAll(t, e, keys("k", 10)); err != nil {
		t.Errorf("two failures between answers: Run = %v, want the run done", err)
	}
}

// Calls in flight together when a server blips fail together: that is one
// event, and at any concurrency it does not stop the run.
func TestFailuresThatLandTogetherCountOnce(t *testing.T) {
	const n = 8
	var entered atomic.Int32
	allIn := make(chan struct{})
	e := &engine.Engine{Concurrency: n, Model: model, MaxFailures: 3, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			switch k := entered.Add(1); {
			case k < n:
				blockUntil(t, allIn, "every call in flight")
				return provider.Response{}, &provider.Error{Provider: "p", Kind: provider.Transient, StatusCode: 502}
			case k == n:
				close(allIn)
				return provider.Response{}, &provider.Error{Provider: "p", Kind: provider.Transient, StatusCode: 502}
			}
			return answer(req), nil
		})}
	got, err := runAll(t, e, keys("k", n))
	if err != nil || len(got) != n {
		t.Fatalf("Run = %v with %d outcomes, want the %d items done", err, len(got), n)
	}
	for k, o := range got {
		if o.Err != nil {
			t.Errorf("%s: %v", k, o.Err)
		}
	}
}

// A failed probe of an open breaker is the model's failure, not the
// item's: an item outlives an outage longer than its attempts.
func TestFailedProbeDoesNotUseUpAnItemsAttempts(t *testing.T) {
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, Model: model, MaxAttempts: 6, MaxFailures: 50,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if calls.Add(1) <= 9 {
				return provider.Response{}, &provider.Error{Provider: "p", Kind: provider.Transient, StatusCode: 500}
			}
			return answer(req), nil
		})}
	newVirtualClock(e)
	got, err := runAll(t, e, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	// 5 failures open the breaker; the 4 failed probes after them do not
	// count, so the item has its 6th attempt when the model is back.
	if o := got["a"]; o.Err != nil || o.Attempts != 10 {
		t.Errorf("outcome %v after %d requests, want success on the 10th", o.Err, o.Attempts)
	}
}

// A negative MaxFailures never stops: the run waits for the model.
func TestNegativeMaxFailuresNeverStops(t *testing.T) {
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, Model: model, MaxFailures: -1, MaxAttempts: 100,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if calls.Add(1) <= 40 {
				return provider.Response{}, &provider.Error{Provider: "p", Kind: provider.Transient, StatusCode: 500}
			}
			return answer(req), nil
		})}
	newVirtualClock(e)
	if got, err := runAll(t, e, []string{"a"}); err != nil || got["a"].Err != nil {
		t.Errorf("Run = %v, outcome %v; want the item done after 40 failures", err, got["a"].Err)
	}
}

// rateLimitServer answers the first ok requests, then 429s with header.
func rateLimitServer(t *testing.T, ok int, header map[string]string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if int(calls.Add(1)) <= ok {
			io.WriteString(w, `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
			return
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"You exceeded your daily request quota.","type":"requests","code":"rate_limit_exceeded"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// A Retry-After of a day (a daily quota) stops the run at once instead of
// a silent day's wait, even on an item's last attempt; the answer that
// came before it is kept.
func TestRetryAfterBeyondMaxWaitStopsTheRun(t *testing.T) {
	for i, h := range []map[string]string{{"retry-after": "86400"}, {"retry-after-ms": "86400000"}} {
		srv, calls := rateLimitServer(t, 1, h)
		e := &engine.Engine{Provider: openai.New(openai.Options{BaseURL: srv.URL}), Model: model, Concurrency: 1, MaxAttempts: 1 + i}
		committed, err := runTasks(t, e, prompts(5))
		var we *engine.WaitError
		if !errors.As(err, new(*engine.FatalError)) || !errors.As(err, &we) || we.Wait != 24*time.Hour {
			t.Fatalf("%v: Run = %v, want a *WaitError of 24h", h, err)
		}
		oneLine(t, err, model+": the provider asks to wait 24h0m (quota?)", "stored results kept", "run again later", "--max-wait 5m0s")
		if calls.Load() != 2 || len(committed) != 1 || committed[0].Err != nil {
			t.Errorf("%v: %d requests, %d committed; want 2 and the answer before the 429 kept", h, calls.Load(), len(committed))
		}
	}
}

// A rate-limit reset with nothing left that is a day away stops the run
// too, for either wire format; the answer that carried it is kept.
func TestResetBeyondMaxWaitStopsTheRun(t *testing.T) {
	anthropicReset := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name   string
		header map[string]string
		body   string
		client func(url string) provider.Provider
	}{
		{"openai", map[string]string{"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "24h0m0s"},
			`{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
			func(url string) provider.Provider { return openai.New(openai.Options{BaseURL: url}) }},
		{"anthropic", map[string]string{"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": anthropicReset},
			`{"type":"message","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3,"output_tokens":1}}`,
			func(url string) provider.Provider { return anthropic.New(anthropic.Options{BaseURL: url}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				io.Copy(io.Discard, r.Body)
				for k, v := range c.header {
					w.Header().Set(k, v)
				}
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			e := &engine.Engine{Provider: c.client(srv.URL), Model: model, Concurrency: 1}
			committed, err := runTasks(t, e, prompts(5))
			if !errors.As(err, new(*engine.WaitError)) {
				t.Fatalf("Run = %v, want a *WaitError", err)
			}
			oneLine(t, err, "the provider asks to wait 2", "(quota?) by its rate-limit reset", "stored results kept")
			if calls.Load() != 1 || len(committed) != 1 || committed[0].Err != nil {
				t.Errorf("%d requests, %d committed; want the one answer kept", calls.Load(), len(committed))
			}
		})
	}
}

// Waits the provider asks for within MaxWait are waited, and said: logged
// at Warn naming the model, the wait and why, and told to OnWait. A
// negative MaxWait takes any wait.
func TestLongWaitsAreShown(t *testing.T) {
	for _, c := range []struct {
		name    string
		header  map[string]string
		maxWait time.Duration
		want    string
	}{
		{"Retry-After", map[string]string{"retry-after": "30"}, 0, model + ": rate limited, waiting 30s (Retry-After)"},
		{"a day, allowed", map[string]string{"retry-after": "86400"}, -1, model + ": rate limited, waiting 24h0m (Retry-After)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, calls := rateLimitServer(t, 0, c.header)
			var logs logBuffer
			var heard []string
			var mu sync.Mutex
			e := &engine.Engine{Provider: openai.New(openai.Options{BaseURL: srv.URL}), Model: model, Concurrency: 1,
				MaxWait: c.maxWait, MaxAttempts: 2, Log: logTo(&logs),
				OnWait: func(d time.Duration, why string) {
					mu.Lock()
					defer mu.Unlock()
					heard = append(heard, fmt.Sprint(d.Round(time.Second), " ", why))
				}}
			newVirtualClock(e)
			got, err := runTasks(t, e, prompts(1))
			if err != nil || len(got) != 1 || got[0].Err == nil || calls.Load() != 2 {
				t.Fatalf("Run = %v, %d outcomes, %d requests; want one item failed after 2 tries", err, len(got), calls.Load())
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), c.want) {
				t.Errorf("log does not say %q:\n%s", c.want, logs.String())
			}
			if len(heard) != 1 || !strings.Contains(heard[0], "rate limited (Retry-After)") {
				t.Errorf("OnWait heard %q, want the one wait", heard)
			}
		})
	}
}

// An answer that cannot be read is retried once, not eight times: each
// try is billed. The item's error names what was wrong.
func TestUnreadableAnswerIsRetriedOnce(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"choices":[{"message":{"content":{"parts":["ok"]}}}]}`)
	}))
	defer srv.Close()
	e := &engine.Engine{Provider: openai.New(openai.Options{Name: "openai", BaseURL: srv.URL}), Model: model, Concurrency: 1}
	got, err := runTasks(t, e, prompts(3))
	if err != nil || len(got) != 3 {
		t.Fatalf("Run = %v with %d outcomes, want 3 failed items", err, len(got))
	}
	for _, o := range got {
		if o.Err == nil || o.Attempts != 2 {
			t.Fatalf("%s: %v after %d requests, want failure after 2", o.Task.Key, o.Err, o.Attempts)
		}
		oneLine(t, o.Err, "gave up after 2 unreadable answers", "openai: HTTP 200 with an unreadable body: choices[0].message.content is an object, not a string")
	}
	if calls.Load() != 6 {
		t.Errorf("%d requests for 3 items, want 6", calls.Load())
	}
}

// A per-attempt timeout names the model.
func TestTimeoutNamesTheModel(t *testing.T) {
	e := &engine.Engine{Model: model, Concurrency: 1, Timeout: 20 * time.Millisecond, MaxAttempts: 1,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			<-ctx.Done()
			return provider.Response{}, ctx.Err()
		})}
	got, err := runAll(t, e, []string{"a"})
	if err != nil || got["a"].Err == nil || !strings.Contains(got["a"].Err.Error(), model+": no answer within 20ms") {
		t.Errorf("Run = %v, outcome %v; want a timeout naming %s", err, got["a"].Err, model)
	}
}

// Do stops like Run, and a stopped engine answers every later Do with the
// same error without a request.
func TestDoStopsAndStaysStopped(t *testing.T) {
	var calls atomic.Int32
	e := &engine.Engine{Model: model, Concurrency: 1,
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			return provider.Response{}, &provider.Error{Provider: "p", Kind: provider.Transient, Err: errors.New("connection reset")}
		})}
	newVirtualClock(e)
	first := e.Do(context.Background(), task("a"))
	var fe *engine.FatalError
	if !errors.As(first.Err, &fe) || !errors.As(first.Err, new(*engine.FailureStreakError)) {
		t.Fatalf("Do = %v, want the failure streak", first.Err)
	}
	sent := calls.Load()
	second := e.Do(context.Background(), task("b"))
	if !errors.Is(second.Err, fe) || calls.Load() != sent {
		t.Errorf("Do after the stop = %v with %d more requests, want the same error and none", second.Err, calls.Load()-sent)
	}
	if err := e.Run(context.Background(), buffered([]string{"c"}), func(engine.Outcome) error { return nil }); !errors.Is(err, fe) {
		t.Errorf("Run after the stop = %v, want the same error", err)
	}
}

// A key the fake server's model echoes back is not in the answer the
// engine hands over to be stored.
func TestEchoedKeyIsNotStored(t *testing.T) {
	const key = "sk-proj-ENGINETEST-5e1d0c9b8a7f6e5d4c3b2a19"
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: key,
		Answer: func(r fakeprovider.Received) string {
			k := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			return "I was sent " + k + " (or " + strings.ToLower(k) + ")."
		}})
	e := &engine.Engine{Provider: openaiClient(srv, key), Model: model, Concurrency: 2}
	tasks := prompts(3)
	for i := range tasks {
		tasks[i].Request.MaxTokens = 200
	}
	got, err := runTasks(t, e, tasks)
	if err != nil || len(got) != 3 {
		t.Fatalf("Run = %v with %d outcomes", err, len(got))
	}
	for _, o := range got {
		if o.Err != nil || o.Response.Text != "I was sent <redacted> (or <redacted>)." {
			t.Errorf("%s: %q, %v; want the key scrubbed", o.Task.Key, o.Response.Text, o.Err)
		}
	}
}

// A usage count far past any request must not run the token bucket into
// a debt of years (nor spin paying it off): at most one window's worth.
func TestAbsurdUsageDoesNotStallTheBudget(t *testing.T) {
	const window = 200 * time.Millisecond
	var calls atomic.Int32
	e := &engine.Engine{Concurrency: 1, Limits: engine.Limits{TPM: 1000, Window: window},
		Tokens: func(provider.Request) int { return 10 },
		Provider: provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if calls.Add(1) == 1 {
				return provider.Response{Text: "ok", Usage: provider.Usage{InputTokens: 1 << 40}}, nil
			}
			return answer(req), nil
		})}
	began := time.Now()
	if _, err := runAll(t, e, keys("k", 3)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(began); d > 4*window {
		t.Errorf("3 requests took %s after an absurd usage count, want about a window", d)
	}
}

// The stop's one line says what to try, fitting the last failure: the
// provider's own hint when it has one.
func TestFailureStreakSaysWhatToTry(t *testing.T) {
	for _, c := range []struct {
		last error
		want string
	}{
		{&provider.Error{Provider: "openai", Kind: provider.Permanent, StatusCode: 404, Hint: "Try: check the base URL http://h/v1"},
			"the last: openai: HTTP 404. Try: check the base URL http://h/v1. Stored results are kept"},
		{&provider.Error{Provider: "ollama", Kind: provider.Transient, Err: errors.New("connection refused"), Hint: "Try: is the server running at http://h/v1?"},
			"the last: ollama: connection refused. Try: is the server running at http://h/v1? Stored results are kept"},
		{&provider.Error{Provider: model, Kind: provider.Transient, Message: "no answer within 2m0s", Err: context.DeadlineExceeded},
			"Try: check that the server is up, or a longer --timeout."},
		{&provider.Error{Provider: "anthropic", Kind: provider.Overloaded, StatusCode: 529}, "Try: run again later, or a lower --concurrency."},
		{&provider.Error{Provider: "openai", Kind: provider.Malformed, StatusCode: 200, Message: "the body is empty"},
			"the last: openai: HTTP 200 with an unreadable body: the body is empty. Try: check that --base-url points at a server of this API."},
		{&provider.Error{Provider: "openai", Kind: provider.Transient, StatusCode: 500}, "Try: check that the server is up, and --base-url if you set one."},
	} {
		err := &engine.FailureStreakError{Model: model, Failures: 8, Last: c.last}
		oneLine(t, err, model+" failed 8 requests in a row", c.want, "run again to continue")
		if !errors.Is(err, c.last) {
			t.Errorf("%v does not wrap its last failure", err)
		}
	}
}

// "(quota?)" is said of waits per-minute limits never ask for.
func TestWaitErrorGuessesAQuotaOnlyForHours(t *testing.T) {
	long := &engine.WaitError{Model: model, Wait: 26*time.Hour + 29*time.Second, Max: 5 * time.Minute, Source: "Retry-After"}
	oneLine(t, long, model+": the provider asks to wait 26h0m (quota?) by Retry-After, longer than --max-wait 5m0s")
	short := &engine.WaitError{Model: model, Wait: 10 * time.Minute, Max: 5 * time.Minute, Source: "Retry-After"}
	if msg := short.Error(); strings.Contains(msg, "quota") || !strings.Contains(msg, "wait 10m0s by Retry-After") {
		t.Errorf("a 10-minute wait: %q", msg)
	}
}
