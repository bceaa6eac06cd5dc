package batchrun

import (
	"math"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// queue is what a run learns of the account's batch queue (OpenAI's
// enqueued tokens, Anthropic's requests in processing) from its refusals.
// It is the serving loop's alone, so it needs no lock.
type queue struct {
	// room is how much of this run's work the queue took at most, in
	// units (tokens or requests); 0 until a refusal.
	room int
	// hold is when the next batch may be sent; zero: now.
	hold time.Time
	// refusals are the refusals in a row with nothing of the run's queued.
	refusals int
}

// fit cuts chunk to the room learned, less queued (what the run's running
// batches take): the first items that fit, and the rest. With nothing of
// the run's queued, the first item goes whatever its size, so that a
// request larger than the room learned still gets its chance.
func (q *queue) fit(chunk []provider.BatchItem, queued int, units func(provider.Request) int) (fits, rest []provider.BatchItem) {
	if q.room == 0 {
		return chunk, nil
	}
	room := q.room - queued
	n, used := 0, 0
	for n < len(chunk) {
		u := units(chunk[n].Request)
		if used+u > room && (n > 0 || queued > 0) {
			break
		}
		used += u
		n++
	}
	return chunk[:n], chunk[n:]
}

// refused records a batch the queue refused, whole, while the run had
// queued units in it: the room learned is what the run had queued, or,
// with nothing queued, half the refused batch's units. A batch of 0 units
// is an earlier run's: refused when it was made, for what the queue held
// then, it tells nothing of the room now; learned, it would be a queue of
// one token and send the rest of the run a request at a time. It returns
// how long to hold the next batch back, growing with each refusal in a
// row with nothing queued (at least retryAfter), and the refusals in a
// row so far.
func (q *queue) refused(queued, units int, pollMin, pollMax, retryAfter time.Duration) (wait time.Duration, inARow int) {
	room := queued
	if queued == 0 {
		q.refusals++
		room = max(units/2, 1)
	}
	if units > 0 && (q.room == 0 || room < q.room) {
		q.room = room
	}
	wait = max(min(pollMin<<min(q.refusals, 16), pollMax), retryAfter)
	q.hold = time.Now().Add(wait)
	return wait, q.refusals
}

// accepted records a batch the queue took: refusals are no longer in a
// row.
func (q *queue) accepted() { q.refusals = 0 }

// ended records that one of the run's batches (units > 0) ended: the room
// learned doubles, so that a queue another process filled for a while
// does not keep the rest of the run in small batches. Too much is refused
// at no cost and halves it.
func (q *queue) ended(units int) {
	if q.room > 0 && units > 0 {
		q.room = min(2*q.room, math.MaxInt/4)
	}
}

// holding reports whether the next batch must wait.
func (q *queue) holding(now time.Time) bool { return !q.hold.IsZero() && now.Before(q.hold) }
