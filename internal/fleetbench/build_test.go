package fleetbench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// buildDigest compiles the module's main package, the real digest binary,
// once per test run: each build costs seconds on a small machine, and no
// plain test needs it.
func buildDigest(tb testing.TB) string {
	tb.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "digest-fleetbench-bin")
		if err != nil {
			built.err = err
			return
		}
		built.dir, built.bin = dir, filepath.Join(dir, "digest")
		if out, err := exec.Command("go", "build", "-o", built.bin, "github.com/digest-cli/digest").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		tb.Fatal(built.err)
	}
	return built.bin
}

// built is the binary the benchmarks share.
var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

// TestMain removes the shared binary; the test wrapper exits with m.Run's code.
func TestMain(m *testing.M) {
	m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}
