package eval

import (
	"context"
	"errors"
	"sync"

	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/store"
)

// writer stores what a run produces (paid answers, run rows, the leases to
// give back once the answers they guard are stored) from one goroutine,
// in batches: each transaction takes everything that queued while the one
// before it committed. A process is then held to a transaction per batch,
// not to the several round trips to the database each answer took when it
// was stored by the goroutine that received it: through 5 ms to a server,
// 11 answers a second. Nothing waits for a batch to fill: an idle writer
// commits the first write at once, and batches grow only as fast as
// answers come.
//
// What is queued and not yet committed is lost if the process is killed,
// and paid for again by the rerun: the queue is kept short (maxQueued), a
// producer waits for room, and close commits what remains, so that an
// interrupt loses nothing.
type writer struct {
	st     store.EvalStore
	leases *lease.Holder
	fail   context.CancelFunc // stops the run when a write fails

	mu      sync.Mutex
	room    *sync.Cond // signalled when the queue shrinks or the writer fails
	queue   []write
	closing bool
	err     error
	wake    chan struct{} // holds a token while writes wait
	failed  chan struct{} // closed when err is set
	done    chan struct{} // closed when the goroutine ends
}

// write is what one producer stores together.
type write struct {
	answers []store.EvalResult
	rows    []store.RunResult
	// release are keys whose answers are stored by now, in this write or
	// an earlier one: their leases go in the same transaction.
	release []string
	// stored, when set, is called once the write is committed, on the
	// writer's goroutine, so it must not wait for the writer.
	stored func()
}

// maxQueued is how many writes may wait behind the transaction being
// committed before producers wait. A kill loses at most these and the
// batch in the transaction; through 10 ms to a server a transaction of
// 60 ms holds 30 answers at 500 a second.
const maxQueued = 64

func newWriter(st store.EvalStore, leases *lease.Holder, fail context.CancelFunc) *writer {
	w := &writer{st: st, leases: leases, fail: fail, wake: make(chan struct{}, 1), failed: make(chan struct{}), done: make(chan struct{})}
	w.room = sync.NewCond(&w.mu)
	go w.loop()
	return w
}

// add queues wr, waiting while the queue is full. It returns the error of
// an earlier write that failed, once one has: the run stops.
func (w *writer) add(wr write) error {
	w.mu.Lock()
	for len(w.queue) >= maxQueued && w.err == nil {
		w.room.Wait()
	}
	if w.err != nil {
		w.mu.Unlock()
		return w.err
	}
	if w.closing {
		w.mu.Unlock()
		return errWriterClosed
	}
	w.queue = append(w.queue, wr)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default: // a token waits already
	}
	return nil
}

var errWriterClosed = errors.New("eval: a write after the run's writer closed")

// do stores wr and returns once it is committed: for what must be stored
// before the caller goes on.
func (w *writer) do(wr write) error {
	committed := make(chan struct{})
	then := wr.stored
	wr.stored = func() {
		if then != nil {
			then()
		}
		close(committed)
	}
	if err := w.add(wr); err != nil {
		return err
	}
	select {
	case <-committed:
		return nil
	case <-w.failed:
		return w.failure()
	}
}

func (w *writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// close commits what is queued and stops the writer, returning the first
// error of a write.
func (w *writer) close() error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	<-w.done
	return w.failure()
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		batch, closing := w.drain()
		if len(batch) > 0 {
			if err := w.commit(batch); err != nil {
				w.mu.Lock()
				w.err = err
				w.queue = nil
				w.room.Broadcast()
				w.mu.Unlock()
				close(w.failed)
				w.fail()
				return
			}
			continue
		}
		if closing {
			return
		}
		<-w.wake
	}
}

// drain empties the queue.
func (w *writer) drain() (batch []write, closing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	batch, w.queue = w.queue, nil
	w.room.Broadcast()
	return batch, w.closing
}

// commit stores a batch in one transaction. It goes on whatever the run's
// context: what is queued is paid for, and an interrupted run keeps it.
func (w *writer) commit(batch []write) error {
	all := store.EvalWrite{Owner: w.leases.Owner()}
	for _, wr := range batch {
		all.Answers = append(all.Answers, wr.answers...)
		all.Rows = append(all.Rows, wr.rows...)
		all.Release = append(all.Release, wr.release...)
	}
	if err := w.st.SaveEval(context.Background(), all); err != nil {
		return err
	}
	// Before the callbacks: one may let a key be claimed again.
	w.leases.ForgetReleased(all.Release...)
	for _, wr := range batch {
		if wr.stored != nil {
			wr.stored()
		}
	}
	return nil
}
