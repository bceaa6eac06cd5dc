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

// verdict is what a finished call says of the model's health.
type verdict int

const (
	healthy   verdict = iota
	unhealthy         // a 5xx, a timeout: the model may be down
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
		if d := time.Until(b.openUntil); d > 0 {
			b.mu.Unlock()
			if err := Sleep(ctx, d); err != nil {
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

// finish notes how an allowed call went. A probe that ends without a
// verdict on health frees the way for the next probe.
func (b *breaker) finish(probe bool, v verdict) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch v {
	case healthy:
		b.failures = 0
		b.cooldown = b.base
	case unhealthy:
		b.failures++
		if b.failures >= b.threshold {
			b.openUntil = time.Now().Add(b.cooldown)
			b.cooldown = min(2*b.cooldown, b.max)
		}
	}
	if probe {
		b.probing = false
		close(b.probeFreed)
		b.probeFreed = make(chan struct{})
	}
}
