package engine

import (
	"context"
	"sync"
	"time"
)

// breaker stops hammering a model that keeps failing: after threshold
// failures in a row it opens for a cooldown, then lets a single probe
// through; the probe's success closes it, a failure reopens it for twice
// as long (up to maxCooldown).
type breaker struct {
	mu         sync.Mutex
	threshold  int
	cooldown   time.Duration
	base, max  time.Duration
	failures   int
	openUntil  time.Time
	probing    bool
	probeFreed chan struct{}
}

func newBreaker(threshold int, base, max time.Duration) *breaker {
	return &breaker{threshold: threshold, cooldown: base, base: base, max: max, probeFreed: make(chan struct{})}
}

// allow waits until a call may be made.
func (b *breaker) allow(ctx context.Context) error {
	for {
		b.mu.Lock()
		if b.failures < b.threshold {
			b.mu.Unlock()
			return nil
		}
		if d := time.Until(b.openUntil); d > 0 {
			b.mu.Unlock()
			if err := sleep(ctx, d); err != nil {
				return err
			}
			continue
		}
		if !b.probing {
			b.probing = true // half open: this call is the probe
			b.mu.Unlock()
			return nil
		}
		freed := b.probeFreed
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-freed:
		}
	}
}

// record notes how a call went. Only failures that say something about the
// model's health count: the caller leaves out a bad request's own failure.
func (b *breaker) record(ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasProbe := b.probing
	b.probing = false
	if ok {
		b.failures = 0
		b.cooldown = b.base
	} else {
		b.failures++
		if b.failures >= b.threshold {
			b.openUntil = time.Now().Add(b.cooldown)
			b.cooldown = min(2*b.cooldown, b.max)
		}
	}
	if wasProbe {
		close(b.probeFreed)
		b.probeFreed = make(chan struct{})
	}
}

// open reports whether the breaker is refusing calls now.
func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures >= b.threshold && time.Now().Before(b.openUntil)
}
