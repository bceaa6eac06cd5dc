package engine

import (
	"context"
	"testing"
	"time"
)

func TestGateStartsSlowThenHalvesOn429AndGrowsByOne(t *testing.T) {
	g := newGate(8, true)
	ctx := context.Background()
	if fast := newGate(8, false); fast.current() != 8 {
		t.Errorf("without slow start the gate allows %d calls, want 8", fast.current())
	}
	round := func(n int) {
		for range n {
			if err := g.acquire(ctx); err != nil {
				t.Fatal(err)
			}
			g.release(false, true)
		}
	}
	if g.current() != 1 {
		t.Fatalf("a new gate allows %d calls, want 1: a bad key must cost one request", g.current())
	}
	round(1)
	round(2)
	if g.current() != 4 {
		t.Fatalf("after rounds of 1 and 2 successes the limit is %d, want 4 (doubling)", g.current())
	}
	for range 4 {
		g.acquire(ctx)
	}
	g.release(true, false)
	if g.current() != 2 {
		t.Fatalf("after a 429 the limit is %d, want 2", g.current())
	}
	for range 3 {
		g.release(false, true)
	}
	if g.current() != 3 {
		t.Errorf("after a round of 2 successes past the 429 the limit is %d, want 3 (plus one)", g.current())
	}
	blocked, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	for range 3 {
		if err := g.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.acquire(blocked); err == nil {
		t.Error("a fourth call went in flight under a limit of 3")
	}
	for range 100 {
		g.release(false, true)
		g.acquire(ctx)
	}
	if g.current() != 8 {
		t.Errorf("limit %d after many successes, want the ceiling 8", g.current())
	}
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	b := newBreaker(realClock{}, 3, 60*time.Millisecond, time.Second)
	ctx := context.Background()
	for range 3 {
		b.allow(ctx)
		b.finish(false, time.Now(), unhealthy)
	}
	if !b.open() {
		t.Fatal("three failures in a row did not open the breaker")
	}
	began := time.Now()
	probe, err := b.allow(ctx)
	if err != nil || !probe {
		t.Fatalf("allow = %v, %v; want the probe", probe, err)
	}
	if waited := time.Since(began); waited < 50*time.Millisecond {
		t.Errorf("allowed after %s, want the 60ms cooldown", waited)
	}
	// This call is the probe: nobody else may pass until it reports.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if _, err := b.allow(short); err == nil {
		t.Error("a second call passed while the probe was out")
	}
	b.finish(true, time.Now(), unhealthy) // the probe failed: open again, for twice as long
	began = time.Now()
	probe, _ = b.allow(ctx)
	if waited := time.Since(began); waited < 100*time.Millisecond {
		t.Errorf("reopened for %s, want the doubled 120ms", waited)
	}
	// A probe whose request was bad (a 400) says nothing about the model:
	// the next probe may go, and the breaker stays half open.
	b.finish(probe, time.Now(), neutral)
	next, err := b.allow(short)
	if err != nil || !next {
		t.Fatalf("after a neutral probe: allow = %v, %v; want the next probe", next, err)
	}
	b.finish(next, time.Now(), healthy)
	if b.open() {
		t.Error("a successful probe did not close the breaker")
	}
	if probe, err := b.allow(short); err != nil || probe {
		t.Errorf("closed breaker: allow = %v, %v", probe, err)
	}
}

// Failures of calls that were in flight together count once: they saw one
// event. A call sent after a failure came back counts again, and an answer
// that is no sign of overload (refused) counts toward the stop without
// opening the breaker.
func TestBreakerCountsFailuresThatLandTogetherOnce(t *testing.T) {
	b := newBreaker(realClock{}, 3, time.Hour, time.Hour)
	together := time.Now()
	for range 8 {
		if streak, _ := b.finish(false, together, unhealthy); streak != 1 {
			t.Fatalf("streak %d after calls sent together failed, want 1", streak)
		}
	}
	streak, opened := b.finish(false, time.Now(), refused)
	if streak != 2 || opened != 0 {
		t.Errorf("a refusal sent after the failure: streak %d, opened %s; want 2 and closed", streak, opened)
	}
	streak, opened = b.finish(false, time.Now(), unhealthy)
	if streak != 3 || opened != 0 {
		t.Errorf("the second unhealthy failure: streak %d, opened %s; want 3 and still closed (2 of 3 unhealthy)", streak, opened)
	}
	if _, opened = b.finish(false, time.Now(), unhealthy); opened != time.Hour {
		t.Errorf("the third unhealthy failure opened the breaker for %s, want an hour", opened)
	}
	if streak, _ = b.finish(false, time.Now(), healthy); streak != 0 || b.open() {
		t.Errorf("an answer left streak %d, open %v", streak, b.open())
	}
}

// current is the limit now in force.
func (g *gate) current() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}

// open reports whether the breaker is refusing calls now.
func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures >= b.threshold && time.Now().Before(b.openUntil)
}
