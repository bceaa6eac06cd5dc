package engine

import (
	"context"
	"sync"
	"time"
)

// breaker watches a model's failures in a row. It stops hammering a model
// that keeps failing: after threshold failures it opens for a cooldown,
// then lets a single probe through; the probe's success closes it, a
// failure reopens it for twice as long (up to max). It also counts the
// failures that tell the run to stop, which include answers that are no
// sign of an overloaded server (a 404, an unreadable body) and so do not
// open it.
//
// Failures that land together count once: a failure counts only if its
// request went out after the last counted failure came back. Eight calls
// in flight when a server restarts are one event, not eight, so the count
// means the same at any concurrency, and a blip the breaker rides out does
// not stop a run.
type breaker struct {
	mu          sync.Mutex
	clock       clock
	threshold   int
	cooldown    time.Duration
	base, max   time.Duration
	failures    int // unhealthy in a row: they open the breaker
	streak      int // unhealthy or refused in a row: they stop the run
	lastCounted time.Time
	openUntil   time.Time
	probing     bool
	probeFreed  chan struct{}
}

func newBreaker(c clock, threshold int, base, max time.Duration) *breaker {
	return &breaker{clock: c, threshold: threshold, cooldown: base, base: base, max: max, probeFreed: make(chan struct{})}
}

// verdict is what a finished call says of the model's health.
type verdict int

const (
	healthy   verdict = iota
	unhealthy         // a 5xx, a timeout, a refused connection: the model may be down
	refused           // answered, but not usably (a 404, an unreadable body): counts toward the stop only
	neutral           // the request's own fault, a 429, a stop: nothing about health
)

// allow waits until a call may be made. probe is true for the one call let
// through a half-open breaker; the caller must report every call it was
// allowed, probe or not, to finish.
func (b *breaker) allow(ctx context.Context) (probe bool, err error) {
	for {
		b.mu.Lock()
		if b.failures < b.threshold {
			b.mu.Unlock()
			return false, nil
		}
		if d := b.openUntil.Sub(b.clock.Now()); d > 0 {
			b.mu.Unlock()
			if err := b.clock.Sleep(ctx, d); err != nil {
				return false, err
			}
			continue
		}
		if !b.probing {
			b.probing = true // half open: this call is the probe
			b.mu.Unlock()
			return true, nil
		}
		freed := b.probeFreed
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-freed:
		}
	}
}

// finish notes how an allowed call, sent at sent, went. It returns the
// failures in a row counted so far and, when this call opened the
// breaker, for how long. A probe that ends without a verdict on health
// frees the way for the next probe.
func (b *breaker) finish(probe bool, sent time.Time, v verdict) (streak int, opened time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
		close(b.probeFreed)
		b.probeFreed = make(chan struct{})
	}
	switch v {
	case healthy:
		b.failures, b.streak = 0, 0
		b.cooldown = b.base
	case unhealthy, refused:
		if sent.Before(b.lastCounted) {
			return b.streak, 0 // in flight when a failure was counted: the same event
		}
		now := b.clock.Now()
		b.lastCounted = now
		b.streak++
		if v == refused {
			return b.streak, 0
		}
		b.failures++
		if b.failures >= b.threshold {
			opened = b.cooldown
			b.openUntil = now.Add(b.cooldown)
			b.cooldown = min(2*b.cooldown, b.max)
		}
	}
	return b.streak, opened
}
