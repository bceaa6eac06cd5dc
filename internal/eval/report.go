package eval

import (
	"context"
	"encoding/json"

	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/report"
	"github.com/digest-cli/digest/internal/stats"
	"github.com/digest-cli/digest/internal/store"
)

// Gates are the accuracies below which a model fails the run: per model
// spec, or "" for every model.
type Gates map[string]float64

// For returns the gate of a model, if any.
func (g Gates) For(model string) (float64, bool) {
	if v, ok := g[model]; ok {
		return v, true
	}
	v, ok := g[""]
	return v, ok
}

// Report builds a run's report from the store: totals, intervals and
// percentiles are computed in SQL, and results stream from it, so a run of
// any size is reported in constant memory.
func Report(ctx context.Context, st store.Store, run store.EvalRun, gates Gates) (*report.Eval, error) {
	e := &report.Eval{RunID: run.ID, Dataset: run.Dataset, StartedAt: run.CreatedAt}
	for _, m := range run.Models {
		t, err := st.RunTotals(ctx, run.ID, m)
		if err != nil {
			return nil, err
		}
		ms := report.ModelStats{Model: m, Items: t.Items, Passed: t.Passed, Errors: t.Errors, Cached: t.Cached,
			InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CostUSD: t.CostUSD}
		if t.Items > 0 {
			ms.Accuracy = float64(t.Passed) / float64(t.Items)
		}
		ms.CILow, ms.CIHigh = stats.Wilson(t.Passed, t.Items)
		if ms.Latency, err = latency(ctx, st, run.ID, m, t.Answered); err != nil {
			return nil, err
		}
		if g, ok := gates.For(m); ok {
			ms.MinAccuracy = &g
			ms.BelowGate = ms.Accuracy < g
		}
		e.Models = append(e.Models, ms)
	}
	for i, a := range run.Models {
		for _, b := range run.Models[i+1:] {
			aOnly, bOnly, both, none, err := st.PairCounts(ctx, run.ID, a, b)
			if err != nil {
				return nil, err
			}
			e.Pairs = append(e.Pairs, report.Pair{A: a, B: b, AOnly: aOnly, BOnly: bOnly, Both: both, None: none, P: stats.McNemar(aOnly, bOnly)})
		}
	}
	var readErr error
	e.Results = func(yield func(report.Result) bool) {
		for row, err := range st.RunRows(ctx, run.ID, run.Models, true) {
			if err != nil {
				readErr = err
				return
			}
			if !yield(result(row)) {
				return
			}
		}
	}
	e.ResultsErr = func() error { return readErr }
	return e, nil
}

// latency reads the p50, p95 and p99 of answered results by rank, two rows
// at most per percentile, never loading every latency.
func latency(ctx context.Context, st store.Store, runID, model string, n int) (report.Latency, error) {
	at := func(rank int) (float64, error) { return st.LatencyAt(ctx, runID, model, rank) }
	var l report.Latency
	var err error
	if l.P50, err = stats.PercentileOf(n, 50, at); err != nil {
		return l, err
	}
	if l.P95, err = stats.PercentileOf(n, 95, at); err != nil {
		return l, err
	}
	l.P99, err = stats.PercentileOf(n, 99, at)
	return l, err
}

func result(row store.RunRow) report.Result {
	r := report.Result{Model: row.Model, Item: row.Item, Line: row.Line, Repeat: row.Repeat, Expected: row.Expected,
		Answer: row.Answer, Pass: row.Pass, Score: row.Score, Reasons: row.Reasons, Error: row.Error, Cached: row.Cached,
		LatencyMS: row.LatencyMS, InputTokens: row.InputTokens, OutputTokens: row.OutputTokens, CostUSD: row.CostUSD}
	var req provider.Request
	if json.Unmarshal(row.Request, &req) == nil {
		for _, m := range req.Messages {
			if m.Role == "user" {
				r.Prompt = m.Content
			}
		}
	}
	return r
}
