// Package memlimit keeps the Go heap small while the live heap is small,
// without ever starving it.
//
// Go's collector lets the heap grow to twice what is live, and keeps freed
// pages long after a burst: over git.git's history that left digest's
// resident memory at 210 MB with 30 MB live. A soft memory limit bounds
// both, but a live heap near the limit would have the collector run
// without pause; so the limit always leaves the heap room to grow by 40%
// of the default limit, or by half the live heap if that is more (as in a
// run whose report holds a long history's summaries).
package memlimit

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Default is the soft limit when GOMEMLIMIT does not set one.
const Default = 72 << 20

// Apply sets the soft limit to Default unless GOMEMLIMIT is set (getenv
// reads the environment), and watches the live heap until stop is called.
func Apply(getenv func(string) string) (stop func()) {
	if getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	return watch(Default, 100*time.Millisecond)
}

func watch(base int64, every time.Duration) (stop func()) {
	previous := debug.SetMemoryLimit(base)
	limit := base
	done := make(chan struct{})
	var watching sync.WaitGroup
	watching.Go(func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() != metrics.KindUint64 {
				return
			}
			live := sample[0].Value.Uint64()
			if live > math.MaxInt64/2 {
				continue
			}
			want := max(base, int64(live)+max(base/5*2, int64(live)/2))
			if want != limit {
				limit = want
				debug.SetMemoryLimit(limit)
			}
		}
	})
	return func() {
		close(done)
		watching.Wait()
		debug.SetMemoryLimit(previous)
	}
}
