package spend

import (
	"context"
	"sync"
	"testing"
)

func TestCapBooksWorstCasesAndSettlesWhatWasPaid(t *testing.T) {
	c := New(1.0)
	if !c.TryReserve("a", 0.6) || c.TryReserve("b", 0.6) {
		t.Fatal("0.6 + 0.6 fits under 1.0")
	}
	if !c.Fits(0.4) || c.Fits(0.41) {
		t.Error("Fits ignores the worst case in flight")
	}
	c.Record("a", 0.1, true)
	if !c.TryReserve("b", 0.6) || c.Spent() != 0.1 {
		t.Errorf("after a paid 0.1: spent %v", c.Spent())
	}
	c.Record("b", 0.5, false) // failed: nothing paid
	if c.Spent() != 0.1 || !c.Fits(0.9) {
		t.Errorf("an unpaid request counted: spent %v", c.Spent())
	}
	unlimited := New(0)
	if !unlimited.TryReserve("x", 1e9) || !unlimited.Fits(1e9) || unlimited.Limited() {
		t.Error("no limit refused a request")
	}
}

// TestReserveWhenSettledWaitsForRequestsInFlight: a request that does not
// fit waits for the one in flight, and goes once it settled cheaply.
func TestReserveWhenSettledWaitsForRequestsInFlight(t *testing.T) {
	c := New(1.0)
	c.Reserve("a", 0.9)
	waits := make(chan struct{}, 1)
	c.beforeWait = func() { waits <- struct{}{} }
	var wg sync.WaitGroup
	var ok bool
	wg.Go(func() { ok = c.ReserveWhenSettled(context.Background(), "b", 0.5) })
	<-waits // it found no room, and waits
	c.Record("a", 0.2, true)
	wg.Wait()
	if !ok {
		t.Error("refused though the request in flight settled at 0.2")
	}
	c.Record("b", 0, false)
	if New(0.1).ReserveWhenSettled(context.Background(), "c", 0.5) {
		t.Error("nothing in flight: a request over the limit waited and went")
	}
}

// TestOweKeepsTheWorstCaseSpent: a request left in a batch is billed
// later; its worst case stays counted, so the next does not fit.
func TestOweKeepsTheWorstCaseSpent(t *testing.T) {
	c := New(1.0)
	c.Reserve("a", 0.6)
	c.Owe("a")
	if c.Fits(0.5) || c.Spent() != 0.6 {
		t.Errorf("after Owe: spent %v, fits 0.5: %v; want 0.6 and no", c.Spent(), c.Fits(0.5))
	}
}
