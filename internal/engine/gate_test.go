package engine

import (
	"context"
	"testing"
	"time"
)

func TestGateHalvesOn429AndGrowsBackAfterRoundsOfSuccess(t *testing.T) {
	g := newGate(8)
	ctx := context.Background()
	for range 8 {
		if err := g.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	g.release(true, false)
	if g.current() != 4 {
		t.Fatalf("after a 429 the limit is %d, want 4", g.current())
	}
	for range 7 {
		g.release(false, true)
	}
	// Seven successes at a limit of 4: one full round (4) grew it to 5.
	if g.current() != 5 {
		t.Errorf("limit %d after 7 successes, want 5", g.current())
	}
	blocked, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	for range 5 {
		if err := g.acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.acquire(blocked); err == nil {
		t.Error("a sixth call went in flight under a limit of 5")
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
	b := newBreaker(3, 60*time.Millisecond, time.Second)
	ctx := context.Background()
	for range 3 {
		b.allow(ctx)
		b.record(false)
	}
	if !b.open() {
		t.Fatal("three failures in a row did not open the breaker")
	}
	began := time.Now()
	if err := b.allow(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited < 50*time.Millisecond {
		t.Errorf("allowed after %s, want the 60ms cooldown", waited)
	}
	// This call is the probe: nobody else may pass until it reports.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	if err := b.allow(short); err == nil {
		t.Error("a second call passed while the probe was out")
	}
	b.record(false) // the probe failed: open again, for twice as long
	began = time.Now()
	b.allow(ctx)
	if waited := time.Since(began); waited < 100*time.Millisecond {
		t.Errorf("reopened for %s, want the doubled 120ms", waited)
	}
	b.record(true)
	if b.open() {
		t.Error("a successful probe did not close the breaker")
	}
	if err := b.allow(short); err != nil {
		t.Errorf("closed breaker refused: %v", err)
	}
}
