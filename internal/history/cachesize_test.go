package history

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
)

// TestObjectCacheFollowsPacksAndMemoryLimit: the cache of delta bases grows
// with the packed history up to 32 MiB, and takes at most a quarter of a
// memory limit.
func TestObjectCacheFollowsPacksAndMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pack := filepath.Join(packDir, "pack-a.pack")
	if err := os.WriteFile(pack, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, tt := range []struct {
		packed, limit, want int64
	}{
		{14 << 20, math.MaxInt64, 8 << 20},
		{256 << 20, math.MaxInt64, 16 << 20},
		{1 << 30, math.MaxInt64, 32 << 20},
		{1 << 30, 96 << 20, 24 << 20},
		{14 << 20, 24 << 20, 6 << 20},
	} {
		if err := os.Truncate(pack, tt.packed); err != nil { // sparse: only the size is read
			t.Fatal(err)
		}
		debug.SetMemoryLimit(tt.limit)
		if got := int64(objectCacheBytes(osfs.New(dir))); got != tt.want {
			t.Errorf("%d MiB packed, limit %d: cache %d MiB, want %d", tt.packed>>20, tt.limit, got>>20, tt.want>>20)
		}
	}
}
