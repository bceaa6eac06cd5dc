package eval

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// heldStore is an SQLite store whose SaveEval can be held at its start, to
// let writes queue behind a transaction, and made to fail; it records each
// SaveEval it was given.
type heldStore struct {
	store.Store
	hold chan struct{} // while open, SaveEval waits; nil: it does not
	fail error

	mu     sync.Mutex
	writes []store.EvalWrite
	begun  chan struct{} // gets a token as each SaveEval begins
}

func (s *heldStore) SaveEval(ctx context.Context, w store.EvalWrite) error {
	s.begun <- struct{}{}
	if s.hold != nil {
		<-s.hold
	}
	s.mu.Lock()
	s.writes = append(s.writes, w)
	s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	return s.Store.SaveEval(ctx, w)
}

func newHeldStore(t *testing.T) *heldStore {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "eval.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.StartRun(context.Background(), store.EvalRun{ID: "run", Models: []string{"m"}, Params: map[string]any{}, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	return &heldStore{Store: st, begun: make(chan struct{}, 100)}
}

func answerWrite(i int, stored func()) write {
	k := fmt.Sprint("key-", i)
	return write{
		answers: []store.EvalResult{{Key: k, Model: "m", Request: []byte(`{}`), Answer: fmt.Sprint("answer ", i)}},
		rows:    []store.RunResult{{RunID: "run", Model: "m", Item: k, Line: i + 1, Key: k, Pass: true}},
		release: []string{k},
		stored:  stored,
	}
}

// Writes that queue while a transaction commits are committed together in
// the next, in the order they came, each told once it is committed, with
// the leases they give back.
func TestWriterBatchesWhatQueuesBehindATransaction(t *testing.T) {
	st := newHeldStore(t)
	st.hold = make(chan struct{})
	holder := lease.NewHolder(st, "me", time.Minute, nil)
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = fmt.Sprint("key-", i)
	}
	if won, err := holder.ClaimAll(context.Background(), keys); err != nil || slices.Contains(won, false) {
		t.Fatalf("claims: %v %v", won, err)
	}
	w := newWriter(st, holder, func() { t.Error("the run was stopped, though no write failed") })
	var mu sync.Mutex
	var told []int
	tell := func(i int) func() {
		return func() {
			mu.Lock()
			told = append(told, i)
			mu.Unlock()
		}
	}
	if err := w.add(answerWrite(0, tell(0))); err != nil {
		t.Fatal(err)
	}
	<-st.begun // the first write's transaction has begun, and waits
	for i := 1; i < 10; i++ {
		if err := w.add(answerWrite(i, tell(i))); err != nil {
			t.Fatal(err)
		}
	}
	close(st.hold)
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	if len(st.writes) != 2 || len(st.writes[0].Answers) != 1 || len(st.writes[1].Answers) != 9 || len(st.writes[1].Rows) != 9 {
		t.Fatalf("%d transactions; want 2: the first write alone, then the 9 that queued behind it together", len(st.writes))
	}
	if !slices.Equal(told, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("writes told committed in the order %v", told)
	}
	if holder.Held() != 0 {
		t.Errorf("%d leases still counted as held after their answers' writes gave them back", holder.Held())
	}
	holders, err := st.LeaseHolders(context.Background(), keys)
	if err != nil || len(holders) != 0 {
		t.Errorf("leases left in the database: %v %v", holders, err)
	}
	got, err := st.EvalResults(context.Background(), keys)
	if err != nil || len(got) != 10 {
		t.Errorf("%d answers stored of 10: %v", len(got), err)
	}
}

// A producer waits while maxQueued writes wait behind the transaction:
// what a kill can lose stays bounded however fast answers come.
func TestWriterQueueIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newHeldStore(t)
		st.hold = make(chan struct{})
		w := newWriter(st, lease.NewHolder(st, "me", time.Minute, nil), func() {})
		if err := w.add(answerWrite(0, nil)); err != nil {
			t.Fatal(err)
		}
		<-st.begun
		for i := 1; i <= maxQueued; i++ {
			if err := w.add(answerWrite(i, nil)); err != nil {
				t.Fatal(err)
			}
		}
		added := make(chan error, 1)
		go func() { added <- w.add(answerWrite(maxQueued+1, nil)) }()
		synctest.Wait() // everything that can move has moved
		select {
		case err := <-added:
			t.Fatalf("a write was queued behind %d others: %v", maxQueued, err)
		default:
		}
		close(st.hold) // the first commits, the queue goes in the next transaction, and makes room
		if err := <-added; err != nil {
			t.Fatal(err)
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		if len(st.writes) != 3 || len(st.writes[1].Answers) != maxQueued || len(st.writes[2].Answers) != 1 {
			t.Errorf("%d transactions; want 3: the first write, the %d queued behind it, and the one that waited for room", len(st.writes), maxQueued)
		}
	})
}

// A write that fails stops the run, and every write after it says why;
// nothing of the failed transaction counts as committed.
func TestWriterFailureStopsTheRun(t *testing.T) {
	st := newHeldStore(t)
	st.fail = errors.New("disk full")
	stopped := make(chan struct{})
	w := newWriter(st, lease.NewHolder(st, "me", time.Minute, nil), func() { close(stopped) })
	told := false
	err := w.do(answerWrite(0, func() { told = true }))
	if !errors.Is(err, st.fail) {
		t.Fatalf("do: %v, want the write's failure", err)
	}
	<-stopped
	if err := w.add(answerWrite(1, nil)); !errors.Is(err, st.fail) {
		t.Errorf("add after the failure: %v, want the failure", err)
	}
	if err := w.close(); !errors.Is(err, st.fail) {
		t.Errorf("close: %v, want the failure", err)
	}
	if told {
		t.Error("a write that failed was told committed")
	}
}
