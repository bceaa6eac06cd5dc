package sqlite

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

func TestEvalResultsRoundTripAndAggregate(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	run := store.EvalRun{ID: "20261130-aaaa", Dataset: "d.jsonl", Models: []string{"m1", "m2"}, Params: map[string]any{"repeat": 1}, CreatedAt: time.Now()}
	if err := s.StartRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	// m1 passes lines 1,2,3; m2 passes 1 and fails 2, errors on 3.
	pass := map[string][]bool{"m1": {true, true, true}, "m2": {true, false, false}}
	for _, m := range run.Models {
		for line := 1; line <= 3; line++ {
			k := m + "-key-" + string(rune('0'+line))
			rr := store.RunResult{RunID: run.ID, Model: m, Item: "item", Line: line, Key: k, Pass: pass[m][line-1], Score: 1, Expected: []string{"42"}}
			var paid *store.EvalResult
			if m == "m2" && line == 3 {
				rr.Error, rr.Score = "HTTP 500", 0
			} else {
				paid = &store.EvalResult{Key: k, Model: m, LatencyMS: float64(100 * line), InputTokens: 10, OutputTokens: 2, CostUSD: 0.001,
					Request: []byte(`{"messages":[{"role":"user","content":"q"}]}`), Answer: "answer " + k}
			}
			if paid != nil {
				if err := s.SaveEvalResult(ctx, *paid); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.SaveRunResults(ctx, []store.RunResult{rr}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := s.EvalResults(ctx, []string{"m1-key-1", "m2-key-3", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["m1-key-1"].Answer != "answer m1-key-1" || got["m1-key-1"].LatencyMS != 100 {
		t.Errorf("EvalResults = %+v: want only the stored answer, never the error", got)
	}
	tot, err := s.RunTotals(ctx, run.ID, "m2")
	if err != nil {
		t.Fatal(err)
	}
	if tot.Items != 3 || tot.Passed != 1 || tot.Errors != 1 || tot.Answered != 2 || tot.InputTokens != 20 {
		t.Errorf("m2 totals %+v", tot)
	}
	if v, _ := s.LatencyAt(ctx, run.ID, "m1", 2); v != 300 {
		t.Errorf("third latency of m1 = %v, want 300", v)
	}
	aOnly, bOnly, both, none, err := s.PairCounts(ctx, run.ID, "m1", "m2")
	if err != nil || aOnly != 2 || bOnly != 0 || both != 1 || none != 0 {
		t.Errorf("pair counts %d %d %d %d, %v", aOnly, bOnly, both, none, err)
	}
	n := 0
	for row, err := range s.RunRows(ctx, run.ID, []string{"m2", "m1"}, true) {
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && (row.Model != "m2" || row.Line != 1 || row.Answer != "answer m2-key-1" || !bytes.Contains(row.Request, []byte(`"q"`)) || row.Expected[0] != "42") {
			t.Errorf("first row %+v", row)
		}
		if row.Model == "m2" && row.Line == 3 && (row.Error == "" || row.Answer != "") {
			t.Errorf("errored row %+v", row)
		}
		n++
	}
	if n != 6 {
		t.Errorf("%d rows, want 6", n)
	}
	if r, ok, err := s.Run(ctx, "20261130"); !ok || err != nil || r.ID != run.ID || len(r.Models) != 2 {
		t.Errorf("Run by prefix = %+v, %v, %v", r, ok, err)
	}
	if err := s.FinishRun(ctx, run.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if runs, _ := s.Runs(ctx); len(runs) != 1 || runs[0].FinishedAt.IsZero() {
		t.Errorf("Runs = %+v", runs)
	}
}

// Payloads are stored once however many results share them, gzipped.
func TestPayloadsAreContentAddressed(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	s.StartRun(ctx, store.EvalRun{ID: "r", CreatedAt: time.Now()})
	big := bytes.Repeat([]byte("the same long prompt "), 5000)
	for i, k := range []string{"k1", "k2"} {
		rr := store.RunResult{RunID: "r", Model: "m", Line: i + 1, Key: k}
		if err := s.SaveEvalResult(ctx, store.EvalResult{Key: k, Model: "m", Request: big, Answer: "same"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRunResults(ctx, []store.RunResult{rr}); err != nil {
			t.Fatal(err)
		}
	}
	var n, size int
	s.SQL().QueryRow(`SELECT COUNT(*), SUM(LENGTH(gz)) FROM payloads`).Scan(&n, &size)
	if n != 2 || size > len(big)/10 {
		t.Errorf("%d payloads of %d bytes for one %d-byte request and one answer", n, size, len(big))
	}
	if info, err := os.Stat(s.Path()); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("database mode %v, %v", info.Mode(), err)
	}
}
