package batchrun

import (
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// TestQueueLearnsItsRoom: a refusal with units queued learns that much
// room, with nothing queued half the refused batch; the room only
// shrinks on refusals and doubles as the run's batches end; the wait
// doubles with refusals in a row and an accepted batch ends the row.
func TestQueueLearnsItsRoom(t *testing.T) {
	var q queue
	one := func(provider.Request) int { return 10 }
	items := make([]provider.BatchItem, 5)
	if fits, rest := q.fit(items, 0, one); len(fits) != 5 || rest != nil {
		t.Fatalf("before any refusal %d fit, want all", len(fits))
	}
	wait, n := q.refused(0, 100, time.Second, time.Minute, 0)
	if q.room != 50 || n != 1 || wait != 2*time.Second || !q.holding(time.Now()) {
		t.Fatalf("refused with nothing queued: room %d, %d in a row, wait %v; want 50, 1, 2s", q.room, n, wait)
	}
	if _, n = q.refused(0, 100, time.Second, time.Minute, 0); n != 2 {
		t.Errorf("%d refusals in a row, want 2", n)
	}
	if wait, _ = q.refused(30, 100, time.Second, time.Minute, 5*time.Minute); q.room != 30 || wait != 5*time.Minute {
		t.Errorf("refused with 30 queued: room %d, wait %v; want 30 and the provider's 5m", q.room, wait)
	}
	if q.refused(0, 0, time.Second, time.Minute, 0); q.room != 30 {
		t.Errorf("an earlier run's batch (0 units) taught room %d; want 30 kept", q.room)
	}
	if fits, rest := q.fit(items, 10, one); len(fits) != 2 || len(rest) != 3 {
		t.Errorf("room 30 with 10 queued: %d fit, %d rest; want 2 and 3", len(fits), len(rest))
	}
	if fits, _ := q.fit([]provider.BatchItem{{}}, 0, func(provider.Request) int { return 1000 }); len(fits) != 1 {
		t.Error("with nothing queued, the first item must go whatever its size")
	}
	q.ended(0)
	if q.room != 30 {
		t.Errorf("another run's batch ending changed the room to %d", q.room)
	}
	q.ended(10)
	q.accepted()
	if q.room != 60 || q.refusals != 0 {
		t.Errorf("after one of the run's batches ended and one was accepted: room %d, %d in a row; want 60, 0", q.room, q.refusals)
	}
}
