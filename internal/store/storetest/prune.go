package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

// testPruneRunsKeepsAnswersAndRunningRuns prunes eval runs by count and by
// age: the runs selected go with their result rows, and nothing else does.
// Answers stay (a rerun still pays nothing), and so do the payloads a kept
// run or an answer names, summaries, and an unfinished run that another
// store is still writing to.
func testPruneRunsKeepsAnswersAndRunningRuns(t *testing.T, b Backend) {
	ctx := context.Background()
	where := b.Fresh(t)
	s, writer := open(t, b, where), open(t, b, where)
	saveRepo(t, s, testRepo, testRoot)
	sum := store.Summary{SummaryKey: key(hash(1)), Text: "a summary"}
	save(t, s, sum)

	now := time.Now()
	asked := []byte(`{"messages":[{"role":"user","content":"asked and failed, later answered"}]}`)
	lonely := []byte(`{"messages":[{"role":"user","content":"asked and failed, never answered"}]}`)
	// Runs of two datasets, oldest first; "b-" runs are of another one.
	type run struct {
		id       string
		dataset  string
		age      time.Duration
		finished bool
	}
	runs := []run{
		{"a-1", "a.jsonl", 40 * 24 * time.Hour, true},
		{"b-1", "b.jsonl", 30 * 24 * time.Hour, true},
		{"a-2", "a.jsonl", 20 * 24 * time.Hour, true},
		{"a-3", "a.jsonl", 10 * 24 * time.Hour, false}, // interrupted long ago
		{"a-4", "a.jsonl", time.Hour, false},           // still running, in writer
		{"a-5", "a.jsonl", time.Minute, true},
	}
	for _, r := range runs {
		if err := s.StartRun(ctx, store.EvalRun{ID: r.id, Dataset: r.dataset, Models: []string{"m"}, CreatedAt: now.Add(-r.age)}); err != nil {
			t.Fatal(err)
		}
		var rrs []store.RunResult
		for line := 1; line <= 3; line++ {
			k := fmt.Sprintf("answer-%d", line) // every run asked the same
			rrs = append(rrs, store.RunResult{RunID: r.id, Model: "m", Item: "i", Line: line, Key: k, Pass: true, Score: 1, Cached: r.id != "a-1"})
		}
		// Line 4 failed in every run; line 5 only in the oldest.
		rrs = append(rrs, store.RunResult{RunID: r.id, Model: "m", Item: "i", Line: 4, Key: "asked", Error: "HTTP 500", Request: asked})
		if r.id == "a-1" {
			rrs = append(rrs, store.RunResult{RunID: r.id, Model: "m", Item: "i", Line: 5, Key: "lonely", Error: "HTTP 500", Request: lonely})
		}
		if err := s.SaveRunResults(ctx, rrs); err != nil {
			t.Fatal(err)
		}
		if r.finished {
			if err := s.FinishRun(ctx, r.id, now.Add(-r.age+time.Second), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for line := 1; line <= 3; line++ {
		k := fmt.Sprintf("answer-%d", line)
		req := []byte(fmt.Sprintf(`{"line":%d}`, line))
		if line == 3 {
			req = asked // the request the failures asked, answered at last
		}
		if err := s.SaveEvalResult(ctx, store.EvalResult{Key: k, Model: "m", Request: req, Answer: "answer to " + k}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		t.Helper()
		all, err := s.Runs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range all {
			out = append(out, r.ID)
		}
		return out
	}
	rowsOf := func(id string) int {
		t.Helper()
		n := 0
		for _, err := range s.RunRows(ctx, id, []string{"m"}, true) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	week := now.Add(-7 * 24 * time.Hour)

	// A dry run counts, and removes nothing.
	p, err := s.PruneRuns(ctx, store.RunPrune{Keep: 1, UnfinishedBefore: week, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a-3", "a-2", "a-1"}; !slices.Equal(p.IDs, want) || p.Results != 4+4+5 || p.Kept != 3 || p.Unfinished != 1 {
		t.Errorf("dry run: %+v, want %v (13 rows), 3 kept of which 1 unfinished", p, want)
	}
	if got := ids(); len(got) != len(runs) {
		t.Fatalf("a dry run removed runs: %v left", got)
	}

	// By age alone: runs started more than 25 days ago, of any dataset.
	p, err = s.PruneRuns(ctx, store.RunPrune{Keep: -1, Before: now.Add(-25 * 24 * time.Hour), UnfinishedBefore: week})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b-1", "a-1"}; !slices.Equal(p.IDs, want) || p.Results != 4+5 || p.Kept != 4 {
		t.Errorf("older than 25 days: %+v, want %v removed (9 rows), 4 kept", p, want)
	}
	// By count and age together: a-2 is beyond the newest 2 but younger
	// than 25 days, so it stays.
	p, err = s.PruneRuns(ctx, store.RunPrune{Keep: 2, Before: now.Add(-25 * 24 * time.Hour), UnfinishedBefore: week})
	if err != nil || len(p.IDs) != 0 || p.Kept != 4 {
		t.Errorf("newest 2 kept, and every run of the last 25 days: %+v, %v; want none removed", p, err)
	}
	// By count: the newest of each dataset, and the run still going.
	p, err = s.PruneRuns(ctx, store.RunPrune{Keep: 1, UnfinishedBefore: week})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a-3", "a-2"}; !slices.Equal(p.IDs, want) || p.Results != 8 || p.Kept != 2 || p.Unfinished != 1 {
		t.Errorf("keep 1: %+v, want %v removed (8 rows), a-4 and a-5 kept", p, want)
	}
	if got, want := ids(), []string{"a-5", "a-4"}; !slices.Equal(got, want) {
		t.Errorf("runs left %v, want %v", got, want)
	}
	for _, id := range []string{"a-1", "a-2", "a-3", "b-1"} {
		if n := rowsOf(id); n != 0 {
			t.Errorf("%d rows of the removed run %s are left", n, id)
		}
	}

	// The run still going goes on being written, and finishes.
	if err := writer.SaveRunResults(ctx, []store.RunResult{{RunID: "a-4", Model: "m", Item: "i", Line: 6, Key: "answer-1", Pass: true}}); err != nil {
		t.Errorf("writing to the run still going after a prune: %v", err)
	}
	if err := writer.FinishRun(ctx, "a-4", time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	if n := rowsOf("a-4"); n != 5 {
		t.Errorf("the run still going has %d rows, want 5", n)
	}
	// Every answer is kept: a rerun pays for none of them.
	got, err := s.EvalResults(ctx, []string{"answer-1", "answer-2", "answer-3"})
	if err != nil || len(got) != 3 || got["answer-3"].Answer != "answer to answer-3" {
		t.Errorf("answers after pruning: %v, %v; want all 3", got, err)
	}
	// The request the removed runs' failures named is an answer's and a
	// kept run's: it is still read back.
	for row, err := range s.RunRows(ctx, "a-5", []string{"m"}, true) {
		if err != nil {
			t.Fatal(err)
		}
		if (row.Line == 3 || row.Line == 4) && string(row.Request) != string(asked) {
			t.Errorf("a-5 line %d: request %q, want %q", row.Line, row.Request, asked)
		}
		if row.Line <= 3 && row.Answer == "" {
			t.Errorf("a-5 line %d lost its answer", row.Line)
		}
	}
	if got := lookup(t, s, sum.SummaryKey, sum.Commit); got[sum.Commit].Text != sum.Text {
		t.Errorf("the summary after pruning: %+v", got)
	}

	// Keep 0 and no age: every finished run goes.
	p, err = s.PruneRuns(ctx, store.RunPrune{Keep: 0, UnfinishedBefore: week})
	if err != nil || !slices.Equal(p.IDs, []string{"a-5", "a-4"}) || p.Results != 4+5 || p.Kept != 0 {
		t.Errorf("keep 0: %+v, %v; want both runs removed", p, err)
	}
	if got := ids(); len(got) != 0 {
		t.Errorf("runs left %v, want none", got)
	}
}
