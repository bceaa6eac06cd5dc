package engine

import (
	"context"
	"sync"
)

// gate bounds the calls in flight and adapts the bound AIMD-style: halved
// on a 429, grown by one after each full round of successes, never above
// the configured concurrency. After a pause the model ramps back up
// instead of hitting the provider with every worker at once.
type gate struct {
	mu        sync.Mutex
	limit     int
	ceiling   int
	inFlight  int
	successes int
	freed     chan struct{} // closed, and replaced, whenever a slot may have opened
}

func newGate(maxN int) *gate {
	maxN = max(1, maxN)
	return &gate{limit: maxN, ceiling: maxN, freed: make(chan struct{})}
}

func (g *gate) acquire(ctx context.Context) error {
	for {
		g.mu.Lock()
		if g.inFlight < g.limit {
			g.inFlight++
			g.mu.Unlock()
			return nil
		}
		freed := g.freed
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-freed:
		}
	}
}

// release frees a slot, adjusting the limit by how the call went.
func (g *gate) release(rateLimited, succeeded bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	switch {
	case rateLimited:
		g.limit = max(1, g.limit/2)
		g.successes = 0
	case succeeded:
		g.successes++
		if g.successes >= g.limit && g.limit < g.ceiling {
			g.limit++
			g.successes = 0
		}
	}
	close(g.freed)
	g.freed = make(chan struct{})
}

// current is the limit now in force.
func (g *gate) current() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}
