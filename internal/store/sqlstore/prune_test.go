package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/store/sqlstore"
)

// TestPruneRunsInChunks removes a run of more result rows than one
// transaction deletes, in windows of lines, and leaves the other run whole.
func TestPruneRunsInChunks(t *testing.T) {
	defer sqlstore.SetPruneChunk(7)()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "digest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for i, id := range []string{"old", "new"} {
		if err := s.StartRun(ctx, store.EvalRun{ID: id, Dataset: "d.jsonl", Models: []string{"m1", "m2"}, CreatedAt: now.Add(time.Duration(i) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
		var rrs []store.RunResult
		for _, m := range []string{"m1", "m2"} {
			for line := 3; line <= 52; line += 1 + line%3 { // lines with gaps
				for repeat := range 3 {
					rrs = append(rrs, store.RunResult{RunID: id, Model: m, Item: "i", Line: line, Repeat: repeat, Key: "k"})
				}
			}
		}
		if err := s.SaveRunResults(ctx, rrs); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishRun(ctx, id, now, nil); err != nil {
			t.Fatal(err)
		}
	}
	total, err := s.RunTotals(ctx, "old", "m1")
	if err != nil || total.Items < 60 {
		t.Fatalf("old run: %+v, %v; want dozens of rows", total, err)
	}
	p, err := s.PruneRuns(ctx, store.RunPrune{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.IDs) != 1 || p.IDs[0] != "old" || p.Results != 2*total.Items {
		t.Errorf("pruned %+v, want the old run's %d rows", p, 2*total.Items)
	}
	for _, id := range []string{"old", "new"} {
		for _, m := range []string{"m1", "m2"} {
			got, err := s.RunTotals(ctx, id, m)
			if want := map[string]int{"old": 0, "new": total.Items}[id]; err != nil || got.Items != want {
				t.Errorf("%s %s: %d rows, %v; want %d", id, m, got.Items, err, want)
			}
		}
	}
}
