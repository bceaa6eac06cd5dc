package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGOMEMLIMITIsLeftAlone(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	stop := Apply(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	})
	defer stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d with GOMEMLIMIT set, want it left at %d", got, before)
	}
}

func TestDefaultLimitAndItsUndoing(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	stop := Apply(func(string) string { return "" })
	if got := debug.SetMemoryLimit(-1); got != Default {
		t.Errorf("limit %d, want %d", got, Default)
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after stop, want %d back", got, before)
	}
}

// TestLimitRisesWithTheLiveHeap: the limit leaves a live heap room to grow
// by half, so the collector never runs without pause against it.
func TestLimitRisesWithTheLiveHeap(t *testing.T) {
	stop := watch(64<<20, 5*time.Millisecond)
	defer stop()
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 1<<20)) // 64 MiB live, past the limit
	}
	var got int64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		if got = debug.SetMemoryLimit(-1); got >= 96<<20 {
			break
		}
	}
	runtime.KeepAlive(held)
	if got < 96<<20 || got == math.MaxInt64 {
		t.Errorf("limit %d MiB with 64 MiB live, want at least 96 MiB", got>>20)
	}
}

// TestLimitComesBackAfterABurst: once the live heap is small again, so is
// the limit.
func TestLimitComesBackAfterABurst(t *testing.T) {
	stop := watch(64<<20, 5*time.Millisecond)
	defer stop()
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 1<<20))
	}
	waitFor := func(ok func(int64) bool) int64 {
		var got int64
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			runtime.GC()
			if got = debug.SetMemoryLimit(-1); ok(got) {
				break
			}
		}
		return got
	}
	if got := waitFor(func(l int64) bool { return l >= 96<<20 }); got < 96<<20 {
		t.Fatalf("limit %d MiB with 64 MiB live, want at least 96 MiB", got>>20)
	}
	runtime.KeepAlive(held)
	held = nil
	if got := waitFor(func(l int64) bool { return l == 64<<20 }); got != 64<<20 {
		t.Errorf("limit %d MiB once the burst is gone, want 64 MiB back", got>>20)
	}
}
