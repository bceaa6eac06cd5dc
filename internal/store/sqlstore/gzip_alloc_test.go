//go:build !race

// The race detector has sync.Pool drop items at random on purpose.

package sqlstore

import (
	"bytes"
	"runtime"
	"testing"
)

// TestPayloadCompressionReusesItsState: a writer's compressor state is
// most of a megabyte; made per payload it was 14 GB of garbage in a
// 10,000-item eval.
func TestPayloadCompressionReusesItsState(t *testing.T) {
	p := bytes.Repeat([]byte("What is 2 + 3? 5. "), 100)
	gunzip(gz(p))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 100
	for range n {
		if _, err := gunzip(gz(p)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 64<<10 {
		t.Errorf("%d bytes allocated per payload compressed and read back, want under 64 KB", per)
	}
}
