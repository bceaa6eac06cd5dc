package engine_test

// Unit tests of the dispatcher with provider.Func fakes. Every wait on the
// engine goes through a channel or barrier; the only timeout is guard, a
// deadlock guard that turns a hang into a failure.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/provider"
)

const guard = 10 * time.Second

// task names its request after its key, so the provider can tell which
// task it is answering.
func task(key string) engine.Task {
	return engine.Task{Key: key, Request: provider.Request{Model: key, Messages: []provider.Message{{Role: "user", Content: "diff of " + key}}}}
}

func keys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// producer feeds tasks the way Run's contract asks: on an unbuffered
// channel, giving up as soon as ctx is done.
type producer struct {
	tasks chan engine.Task
	sent  atomic.Int64
	done  chan struct{}
}

func produce(ctx context.Context, ks []string) *producer {
	p := &producer{tasks: make(chan engine.Task), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer close(p.tasks)
		for _, k := range ks {
			select {
			case <-ctx.Done():
				return
			case p.tasks <- task(k):
				p.sent.Add(1)
			}
		}
	}()
	return p
}

// buffered is a task channel filled up front and closed.
func buffered(ks []string) chan engine.Task {
	ch := make(chan engine.Task, len(ks))
	for _, k := range ks {
		ch <- task(k)
	}
	close(ch)
	return ch
}

// start runs e.Run in the background; wait collects its result.
func start(ctx context.Context, e *engine.Engine, tasks <-chan engine.Task, commit func(engine.Outcome) error) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx, tasks, commit) }()
	return errc
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s (deadlock?)", what)
		panic("unreachable")
	}
}

// blockUntil is wait for use inside fakes, which run off the test goroutine.
func blockUntil(t *testing.T, ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(guard):
		t.Errorf("timed out waiting for %s (deadlock?)", what)
	}
}

func answer(req provider.Request) provider.Response {
	return provider.Response{Text: "summary of " + req.Model, Usage: provider.Usage{InputTokens: len(req.Model), OutputTokens: 1}}
}

func TestRunCommitsEveryOutcomeOnceAndOneAtATime(t *testing.T) {
	const n, concurrency = 50, 4
	var returned atomic.Int64
	allReturned := make(chan struct{})
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		if returned.Add(1) == concurrency {
			close(allReturned)
		}
		return answer(req), nil
	})

	var inCommit, overlaps atomic.Int64
	var mu sync.Mutex
	counts := map[string]int{}
	first := true
	commit := func(o engine.Outcome) error {
		if inCommit.Add(1) != 1 {
			overlaps.Add(1)
		}
		defer inCommit.Add(-1)
		mu.Lock()
		isFirst := first
		first = false
		mu.Unlock()
		if isFirst {
			// Hold the first commit until every worker has an answer in
			// hand: a Run that committed from the workers would enter
			// commit again now, and the overlap would be seen.
			blockUntil(t, allReturned, "every worker's first call")
		}
		if o.Err != nil {
			t.Errorf("outcome of %s: unexpected error %v", o.Task.Key, o.Err)
		}
		if o.Task.Request.Model != o.Task.Key || o.Response.Text != "summary of "+o.Task.Key {
			t.Errorf("outcome of task %q carries request %q and response %q", o.Task.Key, o.Task.Request.Model, o.Response.Text)
		}
		mu.Lock()
		counts[o.Task.Key]++
		mu.Unlock()
		return nil
	}

	ks := keys("t", n)
	p := produce(context.Background(), ks)
	e := &engine.Engine{Provider: prov, Concurrency: concurrency}
	if err := wait(t, start(context.Background(), e, p.tasks, commit), "Run"); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if got := overlaps.Load(); got != 0 {
		t.Errorf("commit was entered %d times while another commit was running", got)
	}
	for _, k := range ks {
		if counts[k] != 1 {
			t.Errorf("task %s committed %d times, want once", k, counts[k])
		}
	}
	if len(counts) != n {
		t.Errorf("committed %d distinct tasks, want %d", len(counts), n)
	}
	if got := returned.Load(); got != n {
		t.Errorf("provider called %d times, want %d", got, n)
	}
}

func TestRunBoundsConcurrency(t *testing.T) {
	tests := []struct {
		name        string
		concurrency int
		tasks       int
		wantMax     int
	}{
		{"one at a time", 1, 3, 1},
		{"four of eight", 4, 8, 4},
		{"more workers than tasks", 8, 3, 3},
		{"zero means one", 0, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inFlight, maxInFlight atomic.Int64
			entered := make(chan struct{}, tt.tasks)
			release := make(chan struct{})
			prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
				n := inFlight.Add(1)
				for {
					m := maxInFlight.Load()
					if n <= m || maxInFlight.CompareAndSwap(m, n) {
						break
					}
				}
				entered <- struct{}{}
				blockUntil(t, release, "release")
				inFlight.Add(-1)
				return answer(req), nil
			})
			var commits atomic.Int64
			tasks := buffered(keys("t", tt.tasks))
			e := &engine.Engine{Provider: prov, Concurrency: tt.concurrency}
			errc := start(context.Background(), e, tasks, func(engine.Outcome) error {
				commits.Add(1)
				return nil
			})

			// Barrier: wantMax calls are in flight together, all blocked.
			for i := range tt.wantMax {
				wait(t, (<-chan struct{})(entered), fmt.Sprintf("call %d of %d to be in flight", i+1, tt.wantMax))
			}
			// With every worker blocked in the provider nobody else can take
			// a task, so exactly wantMax have left the channel.
			if left := len(tasks); left != tt.tasks-tt.wantMax {
				t.Errorf("%d tasks taken while %d calls are blocked, want %d", tt.tasks-left, tt.wantMax, tt.wantMax)
			}
			close(release)

			if err := wait(t, errc, "Run"); err != nil {
				t.Fatalf("Run = %v, want nil", err)
			}
			if got := maxInFlight.Load(); got != int64(tt.wantMax) {
				t.Errorf("max calls in flight = %d, want exactly %d", got, tt.wantMax)
			}
			if got := commits.Load(); got != int64(tt.tasks) {
				t.Errorf("committed %d outcomes, want %d", got, tt.tasks)
			}
		})
	}
}

func TestRunWithoutTasks(t *testing.T) {
	prov := provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
		t.Error("provider called without a task")
		return provider.Response{}, nil
	})
	e := &engine.Engine{Provider: prov, Concurrency: 4}
	err := wait(t, start(context.Background(), e, buffered(nil), func(engine.Outcome) error {
		t.Error("commit called without a task")
		return nil
	}), "Run")
	if err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

func TestRunPassesProviderErrorsToCommitAndContinues(t *testing.T) {
	errBoom := errors.New("provider exploded")
	const n = 10
	failing := func(key string) bool {
		var i int
		fmt.Sscanf(key, "t%d", &i)
		return i%2 == 1
	}
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		if failing(req.Model) {
			// Permanent: the engine hands it over at once instead of retrying.
			return provider.Response{}, &provider.Error{Kind: provider.Permanent, Message: "call for " + req.Model, Err: errBoom}
		}
		return answer(req), nil
	})
	var mu sync.Mutex
	got := map[string]engine.Outcome{}
	p := produce(context.Background(), keys("t", n))
	e := &engine.Engine{Provider: prov, Concurrency: 3}
	err := wait(t, start(context.Background(), e, p.tasks, func(o engine.Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		got[o.Task.Key] = o
		return nil
	}), "Run")
	if err != nil {
		t.Fatalf("Run = %v, want nil: provider errors belong to their outcomes", err)
	}
	if len(got) != n {
		t.Fatalf("committed %d outcomes, want all %d", len(got), n)
	}
	for k, o := range got {
		if failing(k) {
			if !errors.Is(o.Err, errBoom) || !strings.Contains(o.Err.Error(), k) {
				t.Errorf("outcome of %s: Err = %v, want the provider's error for it", k, o.Err)
			}
		} else if o.Err != nil || o.Response.Text != "summary of "+k {
			t.Errorf("outcome of %s: Err = %v, Text = %q, want its answer", k, o.Err, o.Response.Text)
		}
	}
}

// commitErrorScenario runs ten tasks through one worker and fails the third
// commit at a moment where exactly one more call is in flight, blocked until
// its ctx is cancelled. It returns the keys the provider was called for,
// the keys committed, how many tasks the producer sent, and Run's error.
func commitErrorScenario(t *testing.T, errStop error) (called, committed []string, sent int64, runErr error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const stopAt = 2 // the commit of t2 stops the run, while t3 is in flight
	inFlight := make(chan struct{})
	var mu sync.Mutex
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		mu.Lock()
		called = append(called, req.Model)
		n := len(called)
		mu.Unlock()
		if n <= stopAt+1 {
			return answer(req), nil
		}
		if n == stopAt+2 {
			close(inFlight)
		}
		<-ctx.Done() // a well-behaved provider gives up when ctx does
		return provider.Response{}, ctx.Err()
	})
	commit := func(o engine.Outcome) error {
		mu.Lock()
		committed = append(committed, o.Task.Key)
		n := len(committed)
		mu.Unlock()
		if n != stopAt+1 {
			return nil
		}
		// The single worker handed this outcome over and took the next
		// task: wait until that call is in flight, then fail.
		blockUntil(t, inFlight, "the next call to be in flight")
		return errStop
	}
	p := produce(ctx, keys("t", 10))
	e := &engine.Engine{Provider: prov, Concurrency: 1}
	runErr = wait(t, start(ctx, e, p.tasks, commit), "Run")
	// Run has returned: the caller cancels, and the producer, selecting on
	// ctx.Done, stops sending.
	cancel()
	wait(t, (<-chan struct{})(p.done), "the producer to stop")
	mu.Lock()
	defer mu.Unlock()
	return called, committed, p.sent.Load(), runErr
}

func TestRunStopsOnCommitError(t *testing.T) {
	errStop := errors.New("disk full")
	// commitErrorScenario also waits for the producer, selecting on ctx.Done, to
	// stop once the caller cancels; what was sent after the failure is
	// checked by TestRunNoProviderCallAfterCommitError.
	called, committed, _, runErr := commitErrorScenario(t, errStop)
	if !errors.Is(runErr, errStop) {
		t.Fatalf("Run = %v, want the commit error %v", runErr, errStop)
	}
	if want := []string{"t0", "t1", "t2"}; strings.Join(committed, ",") != strings.Join(want, ",") {
		t.Errorf("committed %v, want %v: nothing after the failing commit", committed, want)
	}
	if len(called) < 4 || called[3] != "t3" {
		t.Errorf("provider calls %v, want t3 in flight when the commit failed", called)
	}
}

func TestRunCancelWhileCallsAreInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var inFlight atomic.Int64
	fast1Returned := make(chan struct{})
	slowEntered := make(chan string, 20)
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		inFlight.Add(1)
		defer inFlight.Add(-1)
		switch req.Model {
		case "fast0":
			return answer(req), nil
		case "fast1":
			defer close(fast1Returned)
			return answer(req), nil
		}
		slowEntered <- req.Model
		<-ctx.Done()
		return provider.Response{}, ctx.Err()
	})

	cancelled := make(chan struct{})
	fast0InCommit := make(chan struct{})
	var mu sync.Mutex
	committed := map[string]engine.Outcome{}
	commit := func(o engine.Outcome) error {
		mu.Lock()
		if _, dup := committed[o.Task.Key]; dup {
			t.Errorf("%s committed twice", o.Task.Key)
		}
		committed[o.Task.Key] = o
		mu.Unlock()
		if o.Task.Key == "fast0" {
			// Keep the committer busy across the cancellation, so fast1's
			// outcome is still waiting to be committed when ctx is done.
			close(fast0InCommit)
			blockUntil(t, cancelled, "cancellation")
		}
		return nil
	}

	p := produce(ctx, append([]string{"fast0", "fast1"}, keys("slow", 10)...))
	e := &engine.Engine{Provider: prov, Concurrency: 3}
	errc := start(ctx, e, p.tasks, commit)

	wait(t, (<-chan struct{})(fast0InCommit), "fast0 to be committed")
	wait(t, (<-chan struct{})(fast1Returned), "fast1 to complete")
	for range 2 { // the third worker and the first one, back from fast0
		wait(t, (<-chan string)(slowEntered), "slow calls to be in flight")
	}
	cancel()
	close(cancelled)

	err := wait(t, errc, "Run to return after cancellation")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	// Run waited for every worker: no call is still running behind it.
	if n := inFlight.Load(); n != 0 {
		t.Errorf("%d provider calls still running after Run returned", n)
	}
	wait(t, (<-chan struct{})(p.done), "the producer to stop")

	for _, k := range []string{"fast0", "fast1"} {
		o, ok := committed[k]
		if !ok {
			t.Errorf("%s completed before the cancellation but was not committed", k)
		} else if o.Err != nil || o.Response.Text != "summary of "+k {
			t.Errorf("%s: Err = %v, Text = %q, want its answer", k, o.Err, o.Response.Text)
		}
	}
	for k, o := range committed {
		if strings.HasPrefix(k, "slow") && !errors.Is(o.Err, context.Canceled) {
			t.Errorf("cancelled call %s committed with Err = %v, want context.Canceled", k, o.Err)
		}
	}
}

func TestRunMeasuresLatency(t *testing.T) {
	const n = 3
	entered := make(chan struct{})
	proceed := make(chan struct{})
	var mu sync.Mutex
	inside := map[string]time.Duration{} // how long each call took, seen from the provider
	prov := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		began := time.Now()
		entered <- struct{}{}
		<-proceed
		mu.Lock()
		inside[req.Model] = time.Since(began)
		mu.Unlock()
		return answer(req), nil
	})
	var outcomes []engine.Outcome
	e := &engine.Engine{Provider: prov, Concurrency: 1}
	errc := start(context.Background(), e, buffered(keys("t", n)), func(o engine.Outcome) error {
		outcomes = append(outcomes, o)
		return nil
	})
	for i := range n {
		wait(t, (<-chan struct{})(entered), fmt.Sprintf("call %d", i))
		proceed <- struct{}{}
	}
	if err := wait(t, errc, "Run"); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if len(outcomes) != n {
		t.Fatalf("committed %d outcomes, want %d", len(outcomes), n)
	}
	for _, o := range outcomes {
		// The engine's clock starts before the call and stops after it, so
		// its latency covers at least what the provider measured.
		if o.Latency <= 0 || o.Latency < inside[o.Task.Key] {
			t.Errorf("%s: Latency = %v, want > 0 and >= the %v spent inside the call", o.Task.Key, o.Latency, inside[o.Task.Key])
		}
	}
}

// After a commit error the caller's ctx, which the producer watches, is
// still live, so a task may be on offer when a worker returns to its select;
// Go picks a ready case at random, and a worker that took it would make a
// paid call whose outcome is thrown away. The race is a coin toss, so the
// scenario is repeated.
func TestRunNoProviderCallAfterCommitError(t *testing.T) {
	errStop := errors.New("stop")
	for i := range 100 {
		called, _, sent, _ := commitErrorScenario(t, errStop)
		// t0..t2 answered, t3 in flight when the commit failed.
		if len(called) != 4 || sent != 4 {
			t.Fatalf("run %d: provider called for %v and %d tasks sent, want [t0 t1 t2 t3] and 4: nothing after the failed commit",
				i, called, sent)
		}
	}
}

// TestNewStartsHostedModelsSlowly: one constructor decides, for every
// command, that hosted models start slow and reserve their whole request,
// and that the offline model does neither.
func TestNewStartsHostedModelsSlowly(t *testing.T) {
	count := func(s string) int { return len(s) }
	hosted := engine.New(engine.Setup{Spec: provider.Spec{Provider: "openai", Model: "m"}, Concurrency: 4, Count: count})
	if !hosted.SlowStart || hosted.Tokens == nil || hosted.Model != "openai:m" {
		t.Fatalf("hosted: slow start %v, tokens %v, model %q", hosted.SlowStart, hosted.Tokens != nil, hosted.Model)
	}
	req := provider.Request{Model: "m", System: "sys", Messages: []provider.Message{{Role: "user", Content: "hello"}}, MaxTokens: 10}
	if got, want := hosted.Tokens(req), 3+5+provider.OutputCap(provider.Request{Model: "m", MaxTokens: 10}); got != want {
		t.Errorf("reserved %d tokens, want %d", got, want)
	}
	offline := engine.New(engine.Setup{Spec: provider.Spec{Provider: provider.Offline, Model: provider.Offline}, Concurrency: 4, Count: count})
	if offline.SlowStart || offline.Tokens != nil {
		t.Errorf("offline: slow start %v, tokens %v; want neither", offline.SlowStart, offline.Tokens != nil)
	}
}

// TestCancelAwaitsCallsInFlightForTheGrace: a call in flight when the run
// is interrupted is paid for; within Grace its answer is waited for and
// committed, no new call starts, and a call that outlasts Grace is cut off.
func TestCancelAwaitsCallsInFlightForTheGrace(t *testing.T) {
	for _, tt := range []struct {
		name      string
		grace     time.Duration
		committed bool
	}{
		{"within the grace", guard, true},
		{"without a grace", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			entered, release := make(chan struct{}), make(chan struct{})
			var calls atomic.Int64
			prov := provider.Func(func(cctx context.Context, req provider.Request) (provider.Response, error) {
				if calls.Add(1) > 1 {
					t.Errorf("a call started after the interrupt: %s", req.Model)
				}
				close(entered)
				select {
				case <-release:
					return answer(req), nil
				case <-cctx.Done():
					return provider.Response{}, cctx.Err()
				}
			})
			var committed []engine.Outcome
			e := &engine.Engine{Provider: prov, Concurrency: 1, Grace: tt.grace}
			errc := start(ctx, e, buffered(keys("t", 3)), func(o engine.Outcome) error {
				committed = append(committed, o)
				return nil
			})
			wait(t, (<-chan struct{})(entered), "the first call")
			cancel()
			if tt.committed {
				close(release) // the answer comes after the interrupt
			}
			if err := wait(t, errc, "Run to return"); !errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v, want context.Canceled", err)
			}
			if got := len(committed) == 1 && committed[0].Err == nil && committed[0].Response.Text == "summary of t0"; got != tt.committed {
				t.Errorf("committed %+v; want the answer in flight committed: %v", committed, tt.committed)
			}
		})
	}
}

// TestGraceEndsACallThatOutlastsIt: a call still unanswered Grace after the
// interrupt is cut off, and Run returns.
func TestGraceEndsACallThatOutlastsIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	entered := make(chan struct{})
	prov := provider.Func(func(cctx context.Context, req provider.Request) (provider.Response, error) {
		close(entered)
		<-cctx.Done()
		return provider.Response{}, cctx.Err()
	})
	e := &engine.Engine{Provider: prov, Concurrency: 1, Grace: 20 * time.Millisecond}
	errc := start(ctx, e, buffered(keys("t", 1)), func(o engine.Outcome) error {
		t.Errorf("committed %+v", o)
		return nil
	})
	wait(t, (<-chan struct{})(entered), "the call")
	cancel()
	if err := wait(t, errc, "Run to return once the grace ran out"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
}
