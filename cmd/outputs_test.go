package cmd

// Report paths: what -o, --html and --junit may not name. The README's
// Guarantees section names these tests.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestOutputsNeverDestroyWhatTheRunReads: a report path that names the
// database, the dataset, or another report of the same run is refused
// before anything is sent, exit 2, and every file is left as it was
// (cmdutil.TestCheckOutputsRefusesWhatTheRunDependsOn checks links, the
// write-ahead log and the other paths that name them).
func TestOutputsNeverDestroyWhatTheRunReads(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	says(t, h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl"), 0, nil)
	db, err := os.ReadFile(h.db)
	if err != nil {
		t.Fatal(err)
	}
	dataset := writeDataset(t, `{"prompt":"What is 1 + 1?","expected":"2"}`)
	data, _ := os.ReadFile(dataset)
	h.calls.Store(0)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"summarize -o the database", []string{"summarize", f.Dir, "-o", h.db}, "is the database"},
		{"eval -o the dataset", []string{"eval", dataset, "-f", "jsonl", "-o", dataset}, "is the dataset"},
		{"eval --html the database", []string{"eval", dataset, "--html", h.db}, "is the database"},
		{"eval -o and --junit one file", []string{"eval", dataset, "-o", filepath.Join(filepath.Dir(dataset), "r.xml"), "--junit", filepath.Join(filepath.Dir(dataset), "r.xml")}, "the same file"},
		{"runs show --junit the database", []string{"runs", "show", "x", "--junit", h.db}, "is the database"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := h.run(context.Background(), tt.args...)
			oneLineError(t, res, 2, tt.want)
		})
	}
	if h.calls.Load() != 0 {
		t.Errorf("%d requests sent by runs that were refused", h.calls.Load())
	}
	if after, _ := os.ReadFile(h.db); !bytes.Equal(after, db) {
		t.Error("the database changed")
	}
	if after, _ := os.ReadFile(dataset); !bytes.Equal(after, data) {
		t.Error("the dataset changed")
	}
}
