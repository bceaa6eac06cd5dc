// Package goldentest compares what a test produced with a golden file,
// or rewrites the file under the -update flag it registers: the one
// comparison every package with golden files uses (cmd, summarize,
// changelog, evalreport). It is imported by tests only.
package goldentest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Updating reports whether the test binary runs with -update: the golden
// files are being rewritten, not compared.
func Updating() bool { return *update }

// Check compares got with the file at path, failing t with both when they
// differ; with -update it writes got there instead (its folder too).
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed (go test -update rewrites it if that is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
