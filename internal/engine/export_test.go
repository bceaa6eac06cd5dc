package engine

import (
	"context"
	"time"
)

// SetClock makes e keep time by now and wait by sleep, so that a test
// runs the engine's minutes of cooldown and backoff in no time. It must be
// called before e is first used.
func SetClock(e *Engine, now func() time.Time, sleep func(context.Context, time.Duration) error) {
	e.clock = funcClock{now, sleep}
}

type funcClock struct {
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
}

func (c funcClock) Now() time.Time                                   { return c.now() }
func (c funcClock) Sleep(ctx context.Context, d time.Duration) error { return c.sleep(ctx, d) }
