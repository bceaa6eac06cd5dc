package lease

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// Holder is the leases one run holds, whatever the work they guard
// (commits to summarize, eval answers, judge verdicts, highlights):
// claimed as the work is reached, given back one by one as its result is
// stored or failed, and all together however the run ends, so that a
// rerun or another process need not wait them out. Safe for concurrent
// use.
type Holder struct {
	st    store.ClaimStore
	owner string
	ttl   time.Duration
	warn  *Warner

	mu   sync.Mutex
	held map[string]bool
}

// NewHolder returns the leases of owner on st, each claimed for ttl.
func NewHolder(st store.ClaimStore, owner string, ttl time.Duration, log *slog.Logger) *Holder {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Holder{st: st, owner: owner, ttl: ttl, warn: NewWarner(log), held: map[string]bool{}}
}

// Claim claims key (see Claim), and reports whether this run holds it now.
func (h *Holder) Claim(ctx context.Context, key string) (bool, error) {
	won, err := Claim(ctx, h.st, key, h.owner, h.ttl)
	if won || err != nil {
		h.mu.Lock()
		h.held[key] = true // on an error, maybe held: see ClaimAll
		h.mu.Unlock()
	}
	return won, err
}

// ClaimAll claims keys in one transaction (see ClaimAll); won[i] reports
// whether this run holds keys[i] now.
func (h *Holder) ClaimAll(ctx context.Context, keys []string) ([]bool, error) {
	won, err := ClaimAll(ctx, h.st, keys, h.owner, h.ttl)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		// A claim's statement may have committed before the error reached
		// it: an interrupt while its RETURNING rows were read leaves the
		// keys claimed and the caller told nothing. They count as held, so
		// that Release and ReleaseAll give them back; giving back a key
		// this owner does not hold changes nothing.
		for _, k := range keys {
			h.held[k] = true
		}
		return nil, err
	}
	for i, k := range keys {
		if won[i] {
			h.held[k] = true
		}
	}
	return won, nil
}

// Release gives keys back, those this run holds, in one statement. A
// failure is warned of, once per cause: the leases expire on their own.
func (h *Holder) Release(keys ...string) {
	h.mu.Lock()
	var held []string
	for _, k := range keys {
		if h.held[k] {
			held = append(held, k)
			delete(h.held, k)
		}
	}
	h.mu.Unlock()
	if len(held) == 0 {
		return
	}
	if err := h.st.ReleaseAll(context.Background(), held, h.owner); err != nil {
		h.warn.Warn("could not release a lease; it expires on its own", err, "key", held[0])
	}
}

// ForgetReleased notes keys given back by a transaction of the caller's own, which
// stored their results in the same breath (store.EvalWrite's Release):
// they are no longer this run's to give back.
func (h *Holder) ForgetReleased(keys ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		delete(h.held, k)
	}
}

// Owner is the owner this run claims as.
func (h *Holder) Owner() string { return h.owner }

// ReleaseAll gives back every lease still held: at the end of a run,
// whether it finished, failed or was interrupted.
func (h *Holder) ReleaseAll() {
	h.mu.Lock()
	keys := make([]string, 0, len(h.held))
	for k := range h.held {
		keys = append(keys, k)
	}
	h.mu.Unlock()
	h.Release(keys...)
}

// Held counts the leases this run holds.
func (h *Holder) Held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

// Await finishes the work other processes held the leases of when this
// run reached it. Every poll interval (see Poll) it takes what waits and
// hands it to settle, which reads the results those processes stored and
// claims again what is still missing: an expired lease is won and its
// work done here, a live one deferred anew, to be taken at the next round.
// It returns once nothing waits, or when ctx ends.
func Await[T any](ctx context.Context, ttl time.Duration, take func() []T, settle func(waiting []T) error) error {
	poll := Poll(ttl)
	for {
		waiting := take()
		if len(waiting) == 0 {
			return nil
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if err := settle(waiting); err != nil {
			return err
		}
	}
}

// Keep renews every lease of this run's owner until the returned stop is
// called (see Keep): work that takes longer than the lease's ttl is not
// taken for abandoned.
func (h *Holder) Keep(ctx context.Context, log *slog.Logger) (stop func()) {
	return Keep(ctx, h.st, h.owner, h.ttl, log)
}
