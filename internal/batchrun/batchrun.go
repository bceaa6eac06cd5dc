// Package batchrun sends a pipeline's tasks through a provider's batch
// API (half the price, answers within a day) under the same contract as
// the engine's Run and Do, and keeps every batch durable: a batch and its
// requests are recorded before the provider hears of them, its id the
// moment the provider gives it, every result as it is read. A rerun, or
// another process on the same store, finds the work an earlier batch holds
// by the members of each task and waits for that batch instead of paying
// for the work again; a batch whose creation was cut short is looked for
// among the provider's batches before anything is sent again.
package batchrun

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store"
)

// Defaults for the zero values of Config.
const (
	// DefaultGather is how long a run waits for more tasks after the last
	// one before it submits what it has: a pipeline hands its tasks on as
	// fast as it makes them, and a batch per task would poll per task.
	DefaultGather = time.Second
	// DefaultPollMin and DefaultPollMax bound the wait between two looks
	// at a running batch: it starts at seconds (a small batch may end in
	// a minute) and grows by half each look to minutes (a large one takes
	// hours, and every look is a request).
	DefaultPollMin = 5 * time.Second
	DefaultPollMax = 5 * time.Minute
	// DefaultMaxAttempts is how many batches one task is sent in before
	// its error is its outcome: items come back errored or expired for
	// the provider's reasons, rarely twice.
	DefaultMaxAttempts = 3
	// maxLookFailures stops a run whose provider failed that many looks
	// at a batch in a row: the batch is kept, a rerun goes on with it.
	maxLookFailures = 8
	// saveChunk is how many results share a transaction: each stored as it
	// is read, without a commit per answer of a 50,000-item batch.
	saveChunk = 64
	// createSlack is how far from its record's time a batch whose creation
	// was cut short may have been created, as the provider's clock says.
	createSlack = 10 * time.Minute
	// maxQueueRefusals stops a run whose provider's batch queue refused a
	// lone request that many times in a row with nothing of the run's own
	// queued: other work on the account fills the queue, or the request
	// alone is larger than the queue holds. About 15 minutes of waiting
	// with the default looks.
	maxQueueRefusals = 8
)

// Statuses of a recorded batch besides the provider's (provider.BatchStatus).
const (
	// StatusCreating is a batch recorded, and maybe being created: the
	// provider's answer has not been stored.
	StatusCreating = "creating"
	// StatusUnknown is a batch the key that last looked could not see (a
	// look answered 404 or 403: see Unseen). It may run, and bill, under
	// the key that sent it, so it stays open, listed and cancellable; its
	// requests are not sent again unless Config.RetryUnknown says so, and
	// a look that sees it records what the provider says of it.
	StatusUnknown = "unknown"
)

// Config is what a batch run needs.
type Config struct {
	Batcher provider.Batcher
	Spec    provider.Spec
	BaseURL string // as the user gave it; "" for the provider's own
	Store   store.BatchStore
	// Gather, PollMin, PollMax and MaxAttempts: see the defaults above.
	Gather           time.Duration
	PollMin, PollMax time.Duration
	MaxAttempts      int
	// NoWait ends every task whose batch is still running with
	// engine.ErrPending after one look, instead of waiting for it.
	NoWait bool
	// Sync, when set, takes the items a batch left unanswered (errored,
	// canceled, expired) instead of the next batch: --batch-retry sync.
	Sync engine.Runner
	// RetryUnknown sends the requests of a batch the key cannot see (see
	// StatusUnknown) again, as unanswered items are (next batch, or Sync):
	// --batch-retry unknown. Without it their tasks end with an
	// *UnseenError, for a batch that may still run is not paid for twice
	// unasked.
	RetryUnknown bool
	// OnLook hears of every look at a batch, with the batch as recorded:
	// the progress a run that waits for hours must show.
	OnLook func(store.Batch)
	// Tokens estimates a request's tokens as the engine's pacing does: the
	// room the account's batch queue has is learned in them. nil counts a
	// request as one.
	Tokens func(provider.Request) int
	Log    *slog.Logger
}

// Runner is a batch run; it implements engine.Runner. Its methods are safe
// for concurrent use.
type Runner struct {
	cfg Config

	mu       sync.Mutex
	incoming []*waiter
	wake     chan struct{} // signalled when incoming grows or a caller ends
	// The serving loop runs while a caller (a Run, a Do) is in: it lives
	// on a context of its own, cancelled when the last caller leaves, so
	// that no caller's cancellation strands another's tasks. A new caller
	// waits for a loop on its way out (exited) before starting the next.
	serving    bool
	leaving    bool
	endServing context.CancelFunc
	exited     chan struct{}
	active     int // callers in: Runs and Dos
	stopped    *engine.FatalError
	halted     chan struct{}
	stats      engine.Stats
	seq        int
	batchIDs   int

	// The serving loop's own, touched by it alone.
	buffer   []*waiter
	lastIn   time.Time
	watched  map[string]*watch // by digest's batch id
	known    map[string]store.Batch
	tidied   map[string]bool              // batches not marked collected whose stored answers were served: checked once
	used     map[string]map[string]string // member -> item whose answer was given for it in this run -> to which task
	customID map[string][]*waiter         // batch id + "/" + custom id -> the tasks waiting for it
	unseen   map[string]*UnseenError      // batches this run's key could not see, by digest's id: not looked at again

	// What the account's batch queue was seen to take, from its refusals.
	queue queue
}

// waiter is a task and where its outcome goes.
type waiter struct {
	ctx      context.Context // its caller's: once done, nothing more is sent for it
	task     engine.Task
	deliver  func(engine.Outcome)
	attempts int // batches it was sent in
	sent     time.Time
}

// watch is a batch being waited for.
type watch struct {
	b        store.Batch
	next     time.Time
	interval time.Duration
	failures int
	units    int // what it takes of the account's batch queue; 0 for another run's
}

var _ engine.Runner = (*Runner)(nil)

// New returns a batch run over cfg.
func New(cfg Config) *Runner {
	if cfg.Gather <= 0 {
		cfg.Gather = DefaultGather
	}
	if cfg.PollMin <= 0 {
		cfg.PollMin = DefaultPollMin
	}
	if cfg.PollMax < cfg.PollMin {
		cfg.PollMax = max(DefaultPollMax, cfg.PollMin)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg, wake: make(chan struct{}, 1), halted: make(chan struct{}),
		watched: map[string]*watch{}, known: map[string]store.Batch{}, tidied: map[string]bool{}, used: map[string]map[string]string{}, customID: map[string][]*waiter{},
		unseen: map[string]*UnseenError{}}
}

// Stats counts the items sent (Requests), sent again (Retries) and the
// tokens their answers used.
func (r *Runner) Stats() engine.Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Runner) model() string { return r.cfg.Spec.String() }

// Run sends every task received on tasks through batches until the
// channel closes and each task has its outcome, calling commit with each
// outcome, one at a time, as results are read. Like the engine's Run, a
// failed commit stops it with that error, a fatal provider error stops it
// (and the runner) with a *engine.FatalError, and a cancelled ctx returns
// ctx's error once the outcomes that arrived are committed; batches left
// running are recorded and a rerun collects them.
func (r *Runner) Run(ctx context.Context, tasks <-chan engine.Task, commit func(engine.Outcome) error) error {
	// A failed commit stops the intake at once, as the engine's Run stops
	// sending: nothing more is taken, so nothing more is paid for.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := newOutbox()
	if fe := r.begin(nil); fe != nil {
		return fe
	}
	defer r.end()
	intakeDone := make(chan struct{})
	go func() {
		defer close(intakeDone)
		for {
			select {
			case <-ctx.Done():
				return
			case <-r.halted:
				return
			case t, ok := <-tasks:
				if !ok {
					return
				}
				out.expect()
				r.enqueue(&waiter{ctx: ctx, task: t, deliver: out.put})
			}
		}
	}()
	var commitErr error
	for {
		o, ok := out.next(ctx, r.halted, intakeDone)
		if !ok {
			break
		}
		if commitErr != nil {
			continue
		}
		if err := commit(o); err != nil {
			commitErr = err
			cancel()
			break
		}
	}
	if commitErr != nil {
		return commitErr
	}
	if fe := r.fatal(); fe != nil {
		return fe
	}
	return ctx.Err()
}

// Do sends one task and waits for its outcome: tasks given to Do while
// others wait share batches, as the verdicts asked while a batch's answers
// are scored do.
func (r *Runner) Do(ctx context.Context, t engine.Task) engine.Outcome {
	got := make(chan engine.Outcome, 1)
	if fe := r.begin(&waiter{ctx: ctx, task: t, deliver: func(o engine.Outcome) { got <- o }}); fe != nil {
		return engine.Outcome{Task: t, Err: fe}
	}
	defer r.end()
	select {
	case o := <-got:
		return o
	case <-ctx.Done():
		return engine.Outcome{Task: t, Err: ctx.Err()}
	case <-r.halted:
		return engine.Outcome{Task: t, Err: r.fatal()}
	}
}

func (r *Runner) fatal() *engine.FatalError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped
}

// begin counts a caller in, with its task if it has one (Do's), and
// starts the serving loop unless it runs; it returns the error that
// stopped the runner, if one did.
func (r *Runner) begin(w *waiter) *engine.FatalError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped != nil {
		return r.stopped
	}
	for r.serving && r.leaving {
		exited := r.exited
		r.mu.Unlock()
		<-exited
		r.mu.Lock()
	}
	r.active++
	if w != nil {
		r.incoming = append(r.incoming, w)
	}
	if !r.serving {
		ctx, cancel := context.WithCancel(context.Background())
		r.serving, r.endServing, r.exited = true, cancel, make(chan struct{})
		go r.serve(ctx)
	}
	r.signal()
	return nil
}

// end counts a caller out; the last one ends the serving loop, which is
// there for callers alone.
func (r *Runner) end() {
	r.mu.Lock()
	r.active--
	var exited chan struct{}
	if r.active == 0 && r.serving {
		r.leaving = true
		r.endServing()
		exited = r.exited
	}
	r.mu.Unlock()
	r.signal()
	if exited != nil {
		// The last caller waits for the loop: a line it logs after the
		// caller returned would race the caller's own last line.
		<-exited
	}
}

func (r *Runner) enqueue(w *waiter) {
	r.mu.Lock()
	r.incoming = append(r.incoming, w)
	r.mu.Unlock()
	r.signal()
}

// arriving reports whether tasks wait to be taken by the serving loop;
// each of them signalled wake, so the loop takes them without waiting.
func (r *Runner) arriving() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.incoming) > 0
}

func (r *Runner) signal() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// stop ends the runner with fe; every caller waiting hears of it.
func (r *Runner) stop(fe *engine.FatalError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped == nil {
		r.stopped = fe
		close(r.halted)
	}
}

// serve is the loop that places tasks, submits batches and looks at them,
// until no caller is left with anything to wait for.
func (r *Runner) serve(ctx context.Context) {
	for {
		r.mu.Lock()
		in := r.incoming
		r.incoming = nil
		r.mu.Unlock()
		if len(in) > 0 {
			r.lastIn = time.Now()
		}
		for _, w := range in {
			if err := r.findEarlier(ctx, w); err != nil {
				r.halt(ctx, err)
			}
		}
		if r.fatal() != nil || ctx.Err() != nil {
			r.endLoop()
			return
		}
		now := time.Now()
		// Tasks that came while the last ones were placed (a store lookup
		// each, which can outlast Gather) came within Gather of them: they
		// are taken first, and go in the same batch.
		if len(r.buffer) > 0 && now.Sub(r.lastIn) >= r.cfg.Gather && !now.Before(r.queue.hold) && !r.arriving() {
			if err := r.submit(ctx); err != nil {
				r.halt(ctx, err)
				continue
			}
		}
		next := time.Time{}
		for _, id := range slices.Sorted(maps.Keys(r.watched)) {
			w := r.watched[id]
			if !w.next.After(now) {
				if err := r.look(ctx, w); err != nil {
					r.halt(ctx, err)
					break
				}
			}
		}
		for _, w := range r.watched {
			if next.IsZero() || w.next.Before(next) {
				next = w.next
			}
		}
		if len(r.buffer) > 0 {
			at := r.lastIn.Add(r.cfg.Gather)
			if r.queue.hold.After(at) {
				at = r.queue.hold
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
		}

		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(max(time.Until(next), time.Millisecond))
			timer = t.C
		}
		select {
		case <-r.wake:
		case <-timer:
		case <-ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
	}
}

// endLoop ends the serving loop: its callers are gone (or the runner has
// stopped), and what they waited for is dropped; batches stay recorded
// for a rerun.
func (r *Runner) endLoop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buffer, r.incoming = nil, nil
	clear(r.watched)
	clear(r.customID)
	r.serving, r.leaving = false, false
	r.endServing()
	close(r.exited)
}

// halt stops the runner: a fatal error stops it with that error; the run's
// own cancellation stops the loop and lets the callers see their ctx.
func (r *Runner) halt(ctx context.Context, err error) {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return
	}
	fe := (*engine.FatalError)(nil)
	if !errors.As(err, &fe) {
		fe = &engine.FatalError{Err: err}
	}
	r.stop(fe)
}

// members names what a task holds.
func members(t engine.Task) []string {
	if len(t.Members) > 0 {
		return t.Members
	}
	return []string{t.Key}
}

// findEarlier finds what an earlier batch holds of a task's work: an answer
// stored, or a batch still running to wait for. Otherwise the task waits
// for the next batch.
func (r *Runner) findEarlier(ctx context.Context, w *waiter) error {
	if w.attempts > 0 || r.cfg.Store == nil {
		r.buffer = append(r.buffer, w)
		return nil
	}
	ms := members(w.task)
	found, err := r.cfg.Store.BatchMembers(ctx, r.model(), ms)
	if err != nil {
		return err
	}
	for _, m := range ms {
		it, ok := found[m]
		if given, ok2 := r.used[m][it.CustomID]; !ok || ok2 && given != w.task.Key {
			continue
		}
		b, ok, err := r.batch(ctx, it.BatchID)
		if err != nil {
			return err
		}
		if !ok || b.BaseURL != key.BaseURL(r.cfg.BaseURL) {
			continue
		}
		held := 0
		for _, m2 := range ms {
			if f, ok := found[m2]; ok && f.BatchID == it.BatchID && f.CustomID == it.CustomID {
				held++
			}
		}
		switch {
		case it.Done && it.Error == "":
			// Paid for by an earlier batch: its share of the tokens.
			r.given(w, it.CustomID)
			if !b.Collected && !r.tidied[b.ID] {
				// Its collector stopped before marking it: marked before the
				// answer is given, so that a caller ending with it leaves the
				// batch listed as it is.
				r.tidied[b.ID] = true
				if err := r.markIfCollected(ctx, b.ID); err != nil {
					return err
				}
			}
			w.deliver(engine.Outcome{Task: w.task, Attempts: 1, Batched: true, Response: provider.Response{Text: it.Answer,
				Finish: provider.Finish(it.Finish), Usage: share(itemUsage(it), held, len(it.Members))}})
			return nil
		case !it.Done && !b.Collected && b.Status != string(provider.BatchFailed):
			if ue := r.unseen[b.ID]; ue != nil {
				// Seen unseen already in this run: told once, not asked again.
				r.unseenTask(w, ue)
				return nil
			}
			r.await(b, it.CustomID, w)
			return nil
		}
	}
	r.buffer = append(r.buffer, w)
	return nil
}

// share is the part of an item's usage that held of its members are.
func share(u provider.Usage, held, of int) provider.Usage {
	if of <= held || of == 0 {
		return u
	}
	return provider.Usage{InputTokens: u.InputTokens * held / of, OutputTokens: u.OutputTokens * held / of,
		CacheReadTokens: u.CacheReadTokens * held / of, CacheWriteTokens: u.CacheWriteTokens * held / of}
}

// itemUsage is a stored item's usage.
func itemUsage(it store.BatchItem) provider.Usage {
	return provider.Usage{InputTokens: it.InputTokens, OutputTokens: it.OutputTokens,
		CacheReadTokens: it.CacheReadTokens, CacheWriteTokens: it.CacheWriteTokens}
}

// batch returns the recorded batch id, reading the records again when it
// is not known yet (another process's).
func (r *Runner) batch(ctx context.Context, id string) (store.Batch, bool, error) {
	if b, ok := r.known[id]; ok {
		return b, true, nil
	}
	all, err := r.cfg.Store.Batches(ctx, false)
	if err != nil {
		return store.Batch{}, false, err
	}
	for _, b := range all {
		r.known[b.ID] = b
	}
	b, ok := r.known[id]
	return b, ok, nil
}

// await makes w wait for the item customID of batch b, watching b.
func (r *Runner) await(b store.Batch, customID string, w *waiter) {
	r.mu.Lock()
	k := b.ID + "/" + customID
	r.customID[k] = append(r.customID[k], w)
	r.mu.Unlock()
	if _, ok := r.watched[b.ID]; !ok {
		r.watched[b.ID] = &watch{b: b, next: time.Now(), interval: r.cfg.PollMin}
	}
}

// newBatchID names a batch before the provider does: the time, for people
// reading `digest batches`, and randomness, for processes on other
// machines recording theirs at the same moment.
func (r *Runner) newBatchID() string {
	var b [4]byte
	rand.Read(b[:])
	r.mu.Lock()
	r.batchIDs++
	n := r.batchIDs
	r.mu.Unlock()
	return "digest-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]) + "-" + strconv.Itoa(n)
}

// submit sends the buffered tasks in as many batches as the provider's
// limits make them, each recorded before it is created.
func (r *Runner) submit(ctx context.Context) error {
	var ws []*waiter
	for _, w := range r.buffer {
		// A caller gone (interrupted, or stopped by a failed commit) asks
		// for nothing more to be paid.
		if err := w.ctx.Err(); err != nil {
			w.deliver(engine.Outcome{Task: w.task, Err: err, Attempts: w.attempts})
			continue
		}
		ws = append(ws, w)
	}
	r.buffer = nil
	if len(ws) == 0 {
		return nil
	}
	items := make([]provider.BatchItem, len(ws))
	byCustom := make(map[string]*waiter, len(ws))
	for i, w := range ws {
		r.mu.Lock()
		r.seq++
		id := key.Of(w.task.Key)[:24] + "-" + strconv.Itoa(r.seq)
		r.mu.Unlock()
		items[i] = provider.BatchItem{CustomID: id, Request: w.task.Request}
		byCustom[id] = w
	}
	chunks, err := r.cfg.Batcher.SplitBatch(items)
	if err != nil {
		for _, w := range ws {
			w.deliver(engine.Outcome{Task: w.task, Err: err, Attempts: w.attempts})
		}
		return nil
	}
	for i, chunk := range chunks {
		chunk, rest := r.fit(chunk)
		if len(chunk) > 0 {
			if err := r.create(ctx, chunk, byCustom); err != nil {
				if !errors.Is(err, errQueueFull) {
					return err
				}
				// create held the chunk back; the rest waits with it.
			}
		}
		if len(rest) > 0 || r.queue.holding(time.Now()) {
			var back []*waiter
			for _, it := range rest {
				back = append(back, byCustom[it.CustomID])
			}
			for _, c := range chunks[i+1:] {
				for _, it := range c {
					back = append(back, byCustom[it.CustomID])
				}
			}
			r.holdBack(back)
			return nil
		}
	}
	return nil
}

// errQueueFull is create's word for a batch the account's queue refused:
// its tasks are held back for later, nothing is wrong with the run.
var errQueueFull = errors.New("the account's batch queue is full")

// units is what a request takes of the account's batch queue.
func (r *Runner) units(req provider.Request) int {
	if r.cfg.Tokens == nil {
		return 1
	}
	return max(r.cfg.Tokens(req), 1)
}

// queued is what this run's running batches take of the queue.
func (r *Runner) queued() int {
	n := 0
	for _, w := range r.watched {
		n += w.units
	}
	return n
}

// fit cuts chunk to the room the queue was seen to have, less what this
// run has queued (see queue.fit).
func (r *Runner) fit(chunk []provider.BatchItem) (fits, rest []provider.BatchItem) {
	return r.queue.fit(chunk, r.queued(), r.units)
}

// holdBack keeps tasks the queue has no room for until it has: the next
// look at a batch of the run's (one may have ended), or the end of a
// wait after a refusal. With --no-wait they end pending: the same command
// again sends them.
func (r *Runner) holdBack(ws []*waiter) {
	if len(ws) == 0 {
		return
	}
	if r.cfg.NoWait {
		r.cfg.Log.Warn("the account's batch queue has no room for more now; the same command again sends the rest", "model", r.model(), "requests", len(ws))
		for _, w := range ws {
			w.deliver(engine.Outcome{Task: w.task, Err: engine.ErrPending, Attempts: w.attempts})
		}
		return
	}
	r.buffer = append(r.buffer, ws...)
	if now := time.Now(); !r.queue.hold.After(now) {
		r.queue.hold = time.Time{}
		for _, w := range r.watched {
			if r.queue.hold.IsZero() || w.next.Before(r.queue.hold) {
				r.queue.hold = w.next
			}
		}
		if r.queue.hold.IsZero() {
			r.queue.hold = now.Add(r.cfg.PollMin)
		}
	}
}

// queueFull takes a batch the account's queue refused, whole: nothing in
// it ran or is billed, so its tasks are held back until the queue has
// room. The room is learned from this run's own batches (units > 0): what
// this run had queued when refused, or, with nothing queued, half the
// refused batch; each of the run's batches that ends doubles it again
// (look). The wait grows with each refusal in a row with nothing queued,
// and a lone request refused maxQueueRefusals times so stops the run.
func (r *Runner) queueFull(ws []*waiter, items, units int, why string, retryAfter time.Duration) error {
	queued := r.queued()
	wait, inARow := r.queue.refused(queued, units, r.cfg.PollMin, r.cfg.PollMax, retryAfter)
	if queued == 0 && items <= 1 && inARow >= maxQueueRefusals {
		return &engine.FatalError{Err: fmt.Errorf("%s: the account's batch queue refused %d batches in a row, the last a single request, with nothing of this run queued: %s. Try: let the account's other batches end, or run without --batch-api",
			r.model(), inARow, why)}
	}
	r.cfg.Log.Warn("the account's batch queue has no room; sending again when it has", "model", r.model(), "requests", len(ws),
		"queued", queued, "room", r.queue.room, "wait", wait.Round(time.Millisecond), "provider", why)
	r.holdBack(ws)
	return nil
}

// create records one batch, creates it and watches it.
func (r *Runner) create(ctx context.Context, chunk []provider.BatchItem, byCustom map[string]*waiter) error {
	b := store.Batch{ID: r.newBatchID(), Model: r.model(), BaseURL: key.BaseURL(r.cfg.BaseURL), Status: StatusCreating,
		Items: len(chunk), CreatedAt: time.Now().UTC()}
	rows := make([]store.BatchItem, len(chunk))
	for i, it := range chunk {
		body, err := json.Marshal(it.Request)
		if err != nil {
			return err
		}
		rows[i] = store.BatchItem{BatchID: b.ID, CustomID: it.CustomID, Request: body, Members: members(byCustom[it.CustomID].task)}
	}
	if err := r.cfg.Store.CreateBatch(context.WithoutCancel(ctx), b, rows); err != nil {
		return err
	}
	units := 0
	for _, it := range chunk {
		units += r.units(it.Request)
	}
	pb, err := r.createOnce(ctx, b, chunk)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // the record stays "creating": a rerun looks for it
		}
		b.Status, b.Message, b.Collected = string(provider.BatchFailed), provider.CleanMessage(err.Error(), ""), true
		if uerr := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); uerr != nil {
			return errors.Join(err, uerr)
		}
		if provider.KindOf(err) == provider.RateLimited {
			// Anthropic's answer to a batch its queue has no room for.
			var pe *provider.Error
			retryAfter := time.Duration(0)
			if errors.As(err, &pe) {
				retryAfter = pe.RetryAfter
			}
			ws := make([]*waiter, len(chunk))
			for i, it := range chunk {
				ws[i] = byCustom[it.CustomID]
			}
			if qerr := r.queueFull(ws, len(chunk), units, b.Message, retryAfter); qerr != nil {
				return qerr
			}
			return errQueueFull
		}
		return &engine.FatalError{Err: fmt.Errorf("%s: the batch API refused %d requests: %w", r.model(), len(chunk), err)}
	}
	b = recorded(b, pb)
	if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	r.known[b.ID] = b
	now := time.Now()
	r.mu.Lock()
	r.stats.Requests += int64(len(chunk))
	r.mu.Unlock()
	for _, it := range chunk {
		w := byCustom[it.CustomID]
		if w.attempts > 0 {
			r.mu.Lock()
			r.stats.Retries++
			r.mu.Unlock()
		}
		w.attempts++
		w.sent = now
		r.await(b, it.CustomID, w)
	}
	r.watched[b.ID].units = units
	if !r.cfg.NoWait {
		// A batch is not done within seconds; with --no-wait it is looked at
		// once, now.
		r.watched[b.ID].next = now.Add(r.cfg.PollMin)
	}
	r.cfg.Log.Info("batch submitted", "model", r.model(), "batch", b.ProviderID, "items", len(chunk))
	return nil
}

// createOnce creates the batch b records, once: a failure that may have
// come after the provider made it (a timeout, a 5xx, a cut connection) is
// followed by a look among the provider's batches, and only a batch not
// found there is submitted again.
func (r *Runner) createOnce(ctx context.Context, b store.Batch, chunk []provider.BatchItem) (provider.Batch, error) {
	var last error
	for attempt := range 4 {
		if attempt > 0 {
			if err := engine.Sleep(ctx, time.Duration(1<<attempt)*time.Second); err != nil {
				return provider.Batch{}, err
			}
		}
		pb, err := r.cfg.Batcher.Submit(ctx, b.ID, chunk)
		if err == nil {
			return pb, nil
		}
		last = err
		if ctx.Err() != nil || !maybeCreated(err) {
			return provider.Batch{}, err
		}
		found, ok, ferr := r.find(ctx, b)
		if ferr != nil {
			return provider.Batch{}, errors.Join(err, ferr)
		}
		if ok {
			r.cfg.Log.Info("batch creation answered with a failure, found it made", "model", r.model(), "batch", found.ID, "error", err)
			return found, nil
		}
	}
	return provider.Batch{}, last
}

// maybeCreated reports whether a failed creation may have made the batch.
func maybeCreated(err error) bool {
	switch provider.KindOf(err) {
	case provider.Permanent, provider.Fatal, provider.RateLimited:
		return false
	}
	return true
}

// find looks among the provider's batches for the one b records: by its
// label where the provider keeps one (OpenAI), otherwise by its size and
// time among the batches no record names (Anthropic).
func (r *Runner) find(ctx context.Context, b store.Batch) (provider.Batch, bool, error) {
	list, err := r.cfg.Batcher.List(ctx, b.CreatedAt.Add(-createSlack))
	if err != nil {
		return provider.Batch{}, false, err
	}
	recordedIDs := map[string]bool{}
	if all, err := r.cfg.Store.Batches(ctx, false); err == nil {
		for _, rb := range all {
			recordedIDs[rb.ProviderID] = true
		}
	} else {
		return provider.Batch{}, false, err
	}
	var best provider.Batch
	bestGap := time.Duration(math.MaxInt64)
	for _, pb := range list {
		if pb.Label != "" {
			if pb.Label == b.ID {
				return pb, true, nil
			}
			continue
		}
		if recordedIDs[pb.ID] || pb.Total != b.Items {
			continue
		}
		gap := pb.CreatedAt.Sub(b.CreatedAt).Abs()
		if gap <= createSlack && gap < bestGap {
			best, bestGap = pb, gap
		}
	}
	return best, best.ID != "", nil
}

// recorded is b with what the provider says of it.
func recorded(b store.Batch, pb provider.Batch) store.Batch {
	b.ProviderID = pb.ID
	b.Status = string(pb.Status)
	b.Message = pb.Message
	c := pb.Counts
	b.Succeeded, b.Errored, b.Canceled, b.Expired = c.Succeeded, c.Errored, c.Canceled, c.Expired
	return b
}

// Refresh asks the provider where a recorded batch stands and records the
// answer, for a listing between runs. Its results are left for the command
// that sent it: only that command knows what they answer. A batch not yet
// named by its provider, or collected, is returned as it is.
func Refresh(ctx context.Context, st store.BatchStore, b provider.Batcher, rec store.Batch) (store.Batch, error) {
	if rec.ProviderID == "" || rec.Collected {
		return rec, nil
	}
	pb, err := b.Poll(ctx, rec.ProviderID)
	if err != nil {
		if ue := Unseen(rec, err); ue != nil {
			if uerr := st.UpdateBatch(context.WithoutCancel(ctx), ue.Batch); uerr != nil {
				return rec, errors.Join(ue, uerr)
			}
			return ue.Batch, ue
		}
		return rec, err
	}
	rec = recorded(rec, pb)
	// A failed batch ran nothing and has nothing to collect, and the run
	// that sent it sends its tasks anew without looking at it again: left
	// open, it would be listed as running for ever.
	rec.Collected = pb.Status == provider.BatchFailed
	return rec, st.UpdateBatch(context.WithoutCancel(ctx), rec)
}

// look polls a watched batch and collects it once it has ended.
func (r *Runner) look(ctx context.Context, w *watch) error {
	b := w.b
	if !r.awaited(b.ID) {
		delete(r.watched, b.ID) // its callers are gone; a rerun collects it
		return nil
	}
	if b.ProviderID == "" {
		// Recorded by a process that stopped before the provider answered.
		pb, ok, err := r.find(ctx, b)
		if err != nil {
			if ue := Unseen(b, err); ue != nil {
				return r.unseeable(ctx, w, ue)
			}
			return r.lookFailed(ctx, w, err)
		}
		if !ok {
			r.cfg.Log.Warn("a batch recorded while being created was never made; sending its requests again", "model", r.model(), "batch", b.ID)
			return r.abandon(ctx, w, "the provider never made it")
		}
		b = recorded(b, pb)
	}
	pb, err := r.cfg.Batcher.Poll(ctx, b.ProviderID)
	if err != nil {
		// A batch this run made with this key is not another key's: a 404
		// on it is the provider's lag (seen right after a creation), and
		// is looked at again as any failed look is.
		if ue := Unseen(b, err); ue != nil && w.units == 0 {
			return r.unseeable(ctx, w, ue)
		}
		return r.lookFailed(ctx, w, err)
	}
	w.failures = 0
	b = recorded(b, pb)
	w.b = b
	r.known[b.ID] = b
	if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	if r.cfg.OnLook != nil {
		r.cfg.OnLook(b)
	}
	if pb.Status != provider.BatchFailed {
		r.queue.accepted()
	}
	switch {
	case pb.Status == provider.BatchFailed && pb.QueueFull:
		b.Collected = true
		if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
			return err
		}
		delete(r.watched, b.ID)
		ws := r.waitingOn(b.ID)
		for _, wt := range ws {
			wt.attempts = max(wt.attempts-1, 0) // nothing in it ran
		}
		if w.units > 0 {
			// This run's own batch, counted as sent when it was made: none
			// of it was.
			r.mu.Lock()
			r.stats.Requests -= int64(b.Items)
			r.mu.Unlock()
		}
		return r.queueFull(ws, b.Items, w.units, provider.CleanMessage(pb.Message, ""), 0)
	case pb.Status == provider.BatchFailed:
		b.Collected = true
		if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
			return err
		}
		delete(r.watched, b.ID)
		return &engine.FatalError{Err: fmt.Errorf("%s: batch %s failed: %s. Try: fix what the message names, or run without --batch-api",
			r.model(), pb.ID, provider.CleanMessage(pb.Message, ""))}
	case !pb.Status.Done():
		if r.cfg.NoWait {
			r.leave(b.ID)
			return nil
		}
		w.next = time.Now().Add(w.interval)
		w.interval = min(w.interval*3/2, r.cfg.PollMax)
		return nil
	}
	r.queue.ended(w.units)
	return r.collect(ctx, w, pb)
}

// lookFailed counts a failed look and stops the run after too many.
func (r *Runner) lookFailed(ctx context.Context, w *watch, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if provider.KindOf(err) == provider.Fatal {
		return &engine.FatalError{Err: err}
	}
	if r.cfg.NoWait {
		r.cfg.Log.Warn("looking at a batch failed; the same command again looks again", "model", r.model(), "batch", w.b.ProviderID, "error", err)
		r.leave(w.b.ID)
		return nil
	}
	w.failures++
	if w.failures >= maxLookFailures {
		return &engine.FatalError{Err: fmt.Errorf("%s: %d looks at batch %s failed in a row, the last: %w. Stored results are kept: run again to go on", r.model(), w.failures, w.b.ProviderID, err)}
	}
	w.next = time.Now().Add(w.interval)
	w.interval = min(w.interval*2, r.cfg.PollMax)
	r.cfg.Log.Warn("looking at a batch failed; looking again later", "model", r.model(), "batch", w.b.ProviderID, "error", err)
	return nil
}

// UnseenError is a look at a recorded batch answered HTTP 404 or 403: the
// key asking cannot see the batch. It may be another OpenAI project's or
// Anthropic workspace's, where it runs and bills under the key that sent
// it, or one the server forgot: nobody here can tell which, so its
// requests are not sent again unasked.
type UnseenError struct {
	// Batch is the record marked StatusUnknown, with the provider's answer
	// as its Message.
	Batch store.Batch
	// Err is the provider's answer to the look.
	Err error
}

func (e *UnseenError) Error() string {
	return fmt.Sprintf("batch %s %s cannot be seen with this API key (%s); it may still run, and bill, under the key that sent it. Try: the API key of the run that sent it (digest batches cancel %s with it stops the batch), or --batch-retry unknown to send its requests again and pay twice",
		e.Batch.Model, cmp.Or(e.Batch.ProviderID, e.Batch.ID), e.Batch.Message, e.Batch.ID)
}

// Unseen is what a failed look at rec means, the same for a run's look
// and for `digest batches --refresh`: a 404 or 403 from the provider (on
// Poll, or on List for a batch whose creation was cut short) says the key
// asking cannot see the batch, and Unseen returns rec marked StatusUnknown
// in an *UnseenError; any other failure says nothing of the batch, and
// Unseen returns nil.
func Unseen(rec store.Batch, err error) *UnseenError {
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.StatusCode != http.StatusNotFound && pe.StatusCode != http.StatusForbidden {
		return nil
	}
	bare := *pe
	bare.Hint = "" // the hint is the UnseenError's
	rec.Status, rec.Message = StatusUnknown, provider.CleanMessage(bare.Error(), "")
	return &UnseenError{Batch: rec, Err: err}
}

// unseeable records a batch this run's key cannot see as unknown and ends
// what waits for it: results stored meanwhile (by a process that could see
// it) are served, and the other tasks end with ue, or are sent again with
// RetryUnknown. The batch is not looked at again in this run.
func (r *Runner) unseeable(ctx context.Context, w *watch, ue *UnseenError) error {
	b := ue.Batch
	if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	r.known[b.ID] = b
	r.unseen[b.ID] = ue
	delete(r.watched, b.ID)
	items, err := r.cfg.Store.BatchItems(ctx, b.ID)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Done {
			for i, wt := range r.waitersFor(b.ID, it.CustomID) {
				r.stored(wt, it, i == 0)
			}
		}
	}
	ws := r.waitingOn(b.ID)
	if r.cfg.RetryUnknown {
		r.cfg.Log.Warn("a batch cannot be seen with this API key; sending its requests again (--batch-retry unknown): if it still runs under the key that sent it, they are paid twice. It stays listed as unknown: digest batches cancel with that key stops it",
			"model", r.model(), "batch", cmp.Or(b.ProviderID, b.ID), "id", b.ID, "items", b.Items, "provider", b.Message)
	} else {
		r.cfg.Log.Warn(ue.Error(), "items", b.Items)
	}
	for _, wt := range ws {
		r.unseenTask(wt, ue)
	}
	return nil
}

// unseenTask ends a task waiting for a batch the key cannot see: with ue,
// or sent again with RetryUnknown.
func (r *Runner) unseenTask(w *waiter, ue *UnseenError) {
	if r.cfg.RetryUnknown {
		r.retry(w, ue)
		return
	}
	w.deliver(engine.Outcome{Task: w.task, Err: ue, Attempts: w.attempts})
}

// abandon closes the record of a batch the provider does not have, and
// sends the tasks waiting for it again.
func (r *Runner) abandon(ctx context.Context, w *watch, why string) error {
	b := w.b
	b.Status, b.Message, b.Collected = string(provider.BatchFailed), why, true
	if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	r.known[b.ID] = b
	delete(r.watched, b.ID)
	for _, wt := range r.waitingOn(b.ID) {
		r.buffer = append(r.buffer, wt)
		r.lastIn = time.Now()
	}
	return nil
}

// awaited reports whether a live caller waits for batch id, dropping the
// tasks of callers that are gone.
func (r *Runner) awaited(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	live := false
	for k, ws := range r.customID {
		if len(k) <= len(id) || k[:len(id)] != id || k[len(id)] != '/' {
			continue
		}
		kept := ws[:0]
		for _, w := range ws {
			if w.ctx.Err() == nil {
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			delete(r.customID, k)
		} else {
			r.customID[k], live = kept, true
		}
	}
	return live
}

// waitingOn takes the tasks waiting for batch id's items.
func (r *Runner) waitingOn(id string) []*waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*waiter
	for k, ws := range r.customID {
		if len(k) > len(id) && k[:len(id)] == id && k[len(id)] == '/' {
			out = append(out, ws...)
			delete(r.customID, k)
		}
	}
	return out
}

// leave ends the tasks waiting for a running batch with ErrPending.
func (r *Runner) leave(id string) {
	delete(r.watched, id)
	for _, w := range r.waitingOn(id) {
		w.deliver(engine.Outcome{Task: w.task, Err: engine.ErrPending, Attempts: w.attempts})
	}
}

// collect reads an ended batch's results, stores each as it is read, and
// hands each task waiting for one its outcome; items left unanswered are
// sent again.
func (r *Runner) collect(ctx context.Context, w *watch, pb provider.Batch) error {
	b := w.b
	items, err := r.cfg.Store.BatchItems(ctx, b.ID)
	if err != nil {
		return err
	}
	sent := make(map[string]provider.Request, len(items))
	open := map[string]bool{}
	for _, it := range items {
		var req provider.Request
		if it.Request != nil {
			if err := json.Unmarshal(it.Request, &req); err != nil {
				return fmt.Errorf("batch %s item %s: the stored request cannot be read: %w", b.ID, it.CustomID, err)
			}
		} else {
			req.Model = r.cfg.Spec.Model
		}
		sent[it.CustomID] = req
		if !it.Done {
			open[it.CustomID] = true
			continue
		}
		// Stored before this look (by another process, or a look cut
		// short): the tasks waiting for it take the stored result.
		for i, wt := range r.waitersFor(b.ID, it.CustomID) {
			r.stored(wt, it, i == 0)
		}
	}
	var chunk []store.BatchItem
	var outcomes []func()
	// The last chunk's outcomes wait for the batch to be marked collected:
	// a caller that ends with its last outcome must not leave the batch
	// listed as running.
	flush := func(last bool) error {
		if len(chunk) > 0 {
			if err := r.cfg.Store.SaveBatchResults(context.WithoutCancel(ctx), b.ID, chunk); err != nil {
				return err
			}
		}
		if !last {
			for _, f := range outcomes {
				f()
			}
			outcomes = outcomes[:0]
		}
		chunk = chunk[:0]
		return nil
	}
	var readErr error
	// An answer is taken only from a line whose custom_id is one this batch
	// was sent, and from the first such line: lines naming another are
	// told, and answer nothing.
	seen := make(map[string]bool, len(sent))
	var unsent, repeated []string
	for res, err := range r.cfg.Batcher.Results(ctx, pb, sent) {
		if err != nil {
			switch {
			case errors.Is(err, provider.ErrUnsentCustomID):
				unsent = append(unsent, err.Error())
				continue
			case provider.KindOf(err) == provider.Malformed:
				r.cfg.Log.Warn("a batch result line could not be read; the item it answers, unless another line does, is sent again", "model", r.model(), "batch", pb.ID, "error", err)
				continue
			}
			readErr = err
			break
		}
		if seen[res.CustomID] {
			repeated = append(repeated, res.CustomID)
			continue
		}
		seen[res.CustomID] = true
		if !open[res.CustomID] {
			continue // stored before: by a look cut short, or another process
		}
		delete(open, res.CustomID)
		row := store.BatchItem{BatchID: b.ID, CustomID: res.CustomID, Done: true}
		if res.Err != nil {
			row.Error = res.Err.Error()
		} else {
			u := res.Response.Usage
			row.Answer, row.Finish, row.InputTokens, row.OutputTokens = res.Response.Text, string(res.Response.Finish), u.InputTokens, u.OutputTokens
			row.CacheReadTokens, row.CacheWriteTokens = u.CacheReadTokens, u.CacheWriteTokens
		}
		chunk = append(chunk, row)
		for i, wt := range r.waitersFor(b.ID, res.CustomID) {
			if i > 0 {
				res.Response.Usage = provider.Usage{} // paid once, by the first
			}
			outcomes = append(outcomes, r.outcomeOf(wt, res))
		}
		if len(chunk) >= saveChunk {
			if err := flush(false); err != nil {
				return err
			}
		}
	}
	if err := flush(readErr == nil); err != nil {
		return err
	}
	r.tellStrayLines(pb.ID, unsent, repeated)
	if readErr != nil {
		return r.lookFailed(ctx, w, readErr)
	}
	// Items with no line at all: the provider's files left them out.
	var missing []store.BatchItem
	for id := range open {
		missing = append(missing, store.BatchItem{BatchID: b.ID, CustomID: id, Done: true, Error: "the batch's results have no line for this item"})
		for _, wt := range r.waitersFor(b.ID, id) {
			outcomes = append(outcomes, func() { r.retry(wt, errors.New("batch item has no result")) })
		}
	}
	if len(missing) > 0 {
		if err := r.cfg.Store.SaveBatchResults(context.WithoutCancel(ctx), b.ID, missing); err != nil {
			return err
		}
	}
	b.Collected = true
	if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	r.known[b.ID] = b
	delete(r.watched, b.ID)
	for _, f := range outcomes {
		f()
	}
	// Every item's task had its outcome above; one waiting for an item the
	// record does not hold would otherwise wait for ever: it goes out again.
	for _, wt := range r.waitingOn(b.ID) {
		r.buffer = append(r.buffer, wt)
		r.lastIn = time.Now()
	}
	return nil
}

// tellStrayLines warns of the lines of a batch's results that answered
// nothing: those naming a custom_id the batch was not sent, and those
// repeating one an earlier line answered. Nothing is sent again for them.
func (r *Runner) tellStrayLines(batch string, unsent, repeated []string) {
	if len(unsent) > 0 {
		r.cfg.Log.Warn("batch results name custom_ids the batch was not sent: those lines answer nothing, and nothing is sent again for them",
			"model", r.model(), "batch", batch, "lines", len(unsent), "first", unsent[0])
	}
	if len(repeated) > 0 {
		r.cfg.Log.Warn("batch results hold a custom_id on more than one line: each item's answer is its first line's, the later lines are ignored",
			"model", r.model(), "batch", batch, "lines", len(repeated), "first", provider.CleanMessage(repeated[0], ""))
	}
}

// markIfCollected marks batch id collected when every item of it has its
// result stored: a process that stored them all and stopped before
// marking it would leave it listed as running for ever.
func (r *Runner) markIfCollected(ctx context.Context, id string) error {
	if _, watching := r.watched[id]; watching {
		return nil // the look collects it
	}
	items, err := r.cfg.Store.BatchItems(ctx, id)
	if err != nil {
		return err
	}
	for _, it := range items {
		if !it.Done {
			return nil
		}
	}
	b := r.known[id]
	b.Collected = true
	if err := r.cfg.Store.UpdateBatch(context.WithoutCancel(ctx), b); err != nil {
		return err
	}
	r.known[id] = b
	return nil
}

// waitersFor removes and returns the task waiting for an item.
func (r *Runner) waitersFor(batchID, customID string) []*waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := batchID + "/" + customID
	ws := r.customID[k]
	delete(r.customID, k)
	return ws
}

// outcomeOf is what becomes of a task once its item's result is stored: its
// answer delivered, or the item sent again.
func (r *Runner) outcomeOf(w *waiter, res provider.BatchResult) func() {
	if res.Err != nil {
		return func() { r.retry(w, res.Err) }
	}
	r.mu.Lock()
	r.stats.InputTokens += int64(res.Response.Usage.InputTokens)
	r.stats.OutputTokens += int64(res.Response.Usage.OutputTokens)
	r.mu.Unlock()
	r.given(w, res.CustomID)
	return func() {
		w.deliver(engine.Outcome{Task: w.task, Response: res.Response, Attempts: w.attempts, Latency: time.Since(w.sent), Batched: true})
	}
}

// stored hands w an item's stored result: its answer (the tokens to the
// first of the tasks sharing it), or the item sent again.
func (r *Runner) stored(w *waiter, it store.BatchItem, first bool) {
	if it.Error != "" {
		r.retry(w, errors.New(it.Error))
		return
	}
	u := provider.Usage{}
	if first {
		u = itemUsage(it)
	}
	r.given(w, it.CustomID)
	w.deliver(engine.Outcome{Task: w.task, Attempts: max(1, w.attempts), Batched: true, Response: provider.Response{Text: it.Answer, Finish: provider.Finish(it.Finish), Usage: u}})
}

// given notes that the answer of item customID was given for w's members:
// one it left out (a summary missing from a shared answer) comes back in
// another task (alone) and must be sent anew, not given the same answer
// again; the same task asking again gets it again.
func (r *Runner) given(w *waiter, customID string) {
	for _, m := range members(w.task) {
		if r.used[m] == nil {
			r.used[m] = map[string]string{}
		}
		r.used[m][customID] = w.task.Key
	}
}

// retry sends a task whose item went unanswered again: in the next batch,
// or through the synchronous engine with --batch-retry sync, until it has
// been sent MaxAttempts times.
func (r *Runner) retry(w *waiter, err error) {
	if w.attempts >= r.cfg.MaxAttempts {
		w.deliver(engine.Outcome{Task: w.task, Err: fmt.Errorf("gave up after %d batches: %w", w.attempts, err), Attempts: w.attempts})
		return
	}
	r.cfg.Log.Debug("batch item unanswered; sending it again", "model", r.model(), "key", w.task.Key, "error", err)
	if r.cfg.Sync != nil {
		go func() {
			o := r.cfg.Sync.Do(w.ctx, w.task)
			o.Attempts += w.attempts
			if fe := (*engine.FatalError)(nil); errors.As(o.Err, &fe) {
				r.stop(fe) // as the engine stops its own run
			}
			w.deliver(o)
		}()
		return
	}
	r.buffer = append(r.buffer, w)
	r.lastIn = time.Now()
}
