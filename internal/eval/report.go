package eval

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/stats"
	"github.com/digest-cli/digest/internal/store"
)

// Gate names what a --min threshold applies to: a metric, for one model
// spec or, with Model "", for every model.
type Gate struct {
	Model  string
	Metric string
}

// Gates are the pass rates below which a model fails the run (--min,
// --min-accuracy), per model and metric.
type Gates map[Gate]float64

// For returns the gate of a model on a metric, if any: the model's own,
// or the one for every model.
func (g Gates) For(model, metric string) (float64, bool) {
	if v, ok := g[Gate{model, metric}]; ok {
		return v, true
	}
	v, ok := g[Gate{"", metric}]
	return v, ok
}

// Report builds a run's report from the store: totals, intervals and
// percentiles are computed in SQL, and results stream from it, so a run of
// any size is reported in constant memory.
//
// With --repeat, items are the unit of the accuracy, its interval and the
// McNemar tests, since the repeats of one item are not independent: an item
// passes when more than half of its repeats pass (a tie fails, as an answer
// right only half the time is not to be relied on).
func Report(ctx context.Context, st store.EvalStore, run store.EvalRun, gates Gates) (*evalreport.Eval, error) {
	e := &evalreport.Eval{RunID: run.ID, Dataset: run.Dataset, StartedAt: run.CreatedAt, Repeat: repeatOf(run)}
	if j := run.Judge; j != nil {
		e.Judge = &evalreport.JudgeCost{Model: j.Model, Verdicts: j.Verdicts, CostUSD: j.CostUSD}
	}
	for _, m := range run.Models {
		t, err := st.RunTotals(ctx, run.ID, m)
		if err != nil {
			return nil, err
		}
		e.SharedIDs = e.SharedIDs || t.Lines > t.IDs
		items, err := itemTotals(ctx, st, run.ID, m)
		if err != nil {
			return nil, err
		}
		ms := evalreport.ModelStats{Model: m, Items: t.Items, Passed: t.Passed, Errors: t.Errors - items.unchecked, Unchecked: items.unchecked,
			Cached: t.Cached, InputTokens: t.InputTokens, OutputTokens: t.OutputTokens, CostUSD: t.CostUSD,
			Refused: t.Refused, Cut: t.Cut, CachedInputTokens: t.CacheReadTokens}
		if checked := t.Items - items.unchecked; checked > 0 {
			ms.ResultAccuracy = float64(t.Passed) / float64(checked)
		}
		ms.Accuracy = ms.ResultAccuracy
		ms.CILow, ms.CIHigh = stats.Wilson(t.Passed, t.Items-items.unchecked)
		if e.Repeat > 1 {
			ms.PerItem = &evalreport.ItemStats{Items: items.items, Passed: items.passed, Disagree: items.disagree}
			if items.items > 0 {
				ms.Accuracy = float64(items.passed) / float64(items.items)
				ms.PerItem.MeanScore = items.scores / float64(items.items)
				ms.PerItem.DisagreeShare = float64(items.disagree) / float64(items.items)
			}
			ms.CILow, ms.CIHigh = stats.Wilson(items.passed, items.items)
		}
		if ms.Latency, err = latency(ctx, st, run.ID, m, t.Answered); err != nil {
			return nil, err
		}
		sums, named, err := modelMetrics(ctx, st, run.ID, m)
		if err != nil {
			return nil, err
		}
		if named {
			ms.Metrics = metricStats(m, sums, gates)
		} else if g, ok := gates.For(m, dataset.DefaultMetric); ok {
			ms.MinAccuracy = &g
			ms.BelowGate = ms.Accuracy < g
		}
		e.Models = append(e.Models, ms)
	}
	// A run whose one model had no named metric while another had: every
	// model reports per metric, the missing ones as accuracy.
	if e.MetricNames() != nil {
		for i := range e.Models {
			if e.Models[i].Metrics == nil {
				sums, _, err := modelMetrics(ctx, st, run.ID, e.Models[i].Model)
				if err != nil {
					return nil, err
				}
				e.Models[i].Metrics = metricStats(e.Models[i].Model, sums, gates)
				e.Models[i].MinAccuracy, e.Models[i].BelowGate = nil, false
			}
		}
		for i, a := range run.Models {
			for _, b := range run.Models[i+1:] {
				ps, err := metricPairs(ctx, st, run.ID, a, b)
				if err != nil {
					return nil, err
				}
				e.MetricPairs = append(e.MetricPairs, ps...)
			}
		}
	}
	for i, a := range run.Models {
		for j, b := range run.Models[i+1:] {
			var p evalreport.Pair
			var err error
			if e.Repeat > 1 {
				p, err = itemPair(ctx, st, run.ID, a, b)
			} else {
				p.AOnly, p.BOnly, p.Both, p.None, err = st.PairCounts(ctx, run.ID, a, b)
				// Unchecked items failed both models for want of a check:
				// they tell nothing of either.
				p.None -= min(e.Models[i].Unchecked, e.Models[i+1+j].Unchecked)
			}
			if err != nil {
				return nil, err
			}
			p.A, p.B, p.P = a, b, stats.McNemar(p.AOnly, p.BOnly)
			e.Pairs = append(e.Pairs, p)
		}
	}
	results := func(models []string) iter.Seq[evalreport.Result] {
		return func(yield func(evalreport.Result) bool) {
			for row, err := range st.RunRows(ctx, run.ID, models, true) {
				if err != nil {
					e.SetResultsErr(err)
					return
				}
				r := result(row)
				r.Repeated = e.Repeat > 1
				if !yield(r) {
					return
				}
			}
		}
	}
	e.Results = results(run.Models)
	e.ModelResults = func(model string) iter.Seq[evalreport.Result] { return results([]string{model}) }
	return e, nil
}

// repeatOf is how many times the run asked each item, from its parameters.
func repeatOf(run store.EvalRun) int {
	if n, ok := run.Params["repeat"].(float64); ok && n > 1 {
		return int(n)
	}
	return 1
}

// itemVerdict is one item's repeats, for one model.
type itemVerdict struct {
	line            int
	repeats, passed int
	score           float64 // summed over the repeats
	unchecked       bool
	// metrics are the item's repeats per metric; named is whether any
	// repeat's item named a metric.
	metrics []metricTally
	named   bool
}

// pass is the majority verdict: more than half of the repeats passed.
func (v itemVerdict) pass() bool { return 2*v.passed > v.repeats }

// itemVerdicts streams a model's items, their repeats gathered: the rows
// come ordered by line, so one item is held at a time.
func itemVerdicts(ctx context.Context, st store.EvalStore, runID, model string) iter.Seq2[itemVerdict, error] {
	return func(yield func(itemVerdict, error) bool) {
		var cur itemVerdict
		for row, err := range st.RunRows(ctx, runID, []string{model}, false) {
			if err != nil {
				yield(itemVerdict{}, err)
				return
			}
			if cur.repeats > 0 && row.Line != cur.line {
				if !yield(cur, nil) {
					return
				}
				cur = itemVerdict{}
			}
			cur.line = row.Line
			cur.repeats++
			if row.Pass {
				cur.passed++
			}
			cur.score += row.Score
			cur.unchecked = row.Error == evalreport.NothingToCheck
			cur.metrics = tally(cur.metrics, row)
			cur.named = cur.named || len(row.Metrics) > 0
		}
		if cur.repeats > 0 {
			yield(cur, nil)
		}
	}
}

// modelItems sums a model's items.
type modelItems struct {
	unchecked     int // results, not items
	items, passed int // checked items, and those the majority of whose repeats passed
	disagree      int // checked items whose repeats did not all agree
	scores        float64
}

func itemTotals(ctx context.Context, st store.EvalStore, runID, model string) (modelItems, error) {
	var t modelItems
	for v, err := range itemVerdicts(ctx, st, runID, model) {
		if err != nil {
			return t, err
		}
		if v.unchecked {
			t.unchecked += v.repeats
			continue
		}
		t.items++
		if v.pass() {
			t.passed++
		}
		if v.passed > 0 && v.passed < v.repeats {
			t.disagree++
		}
		t.scores += v.score / float64(v.repeats)
	}
	return t, nil
}

// itemPair compares two models item by item, by their majority verdicts,
// reading both models' items side by side.
func itemPair(ctx context.Context, st store.EvalStore, runID, a, b string) (evalreport.Pair, error) {
	var p evalreport.Pair
	nextB, stop := iter.Pull2(itemVerdicts(ctx, st, runID, b))
	defer stop()
	vb, errB, okB := nextB()
	for va, err := range itemVerdicts(ctx, st, runID, a) {
		if err != nil {
			return p, err
		}
		for okB && errB == nil && vb.line < va.line {
			vb, errB, okB = nextB()
		}
		if errB != nil {
			return p, errB
		}
		if !okB || vb.line != va.line || va.unchecked || vb.unchecked {
			continue
		}
		switch pa, pb := va.pass(), vb.pass(); {
		case pa && pb:
			p.Both++
		case pa:
			p.AOnly++
		case pb:
			p.BOnly++
		default:
			p.None++
		}
	}
	return p, nil
}

// latency reads the p50, p95 and p99 of answered results by rank, two rows
// at most per percentile, never loading every latency.
func latency(ctx context.Context, st store.EvalStore, runID, model string, n int) (evalreport.Latency, error) {
	at := func(rank int) (float64, error) { return st.LatencyAt(ctx, runID, model, rank) }
	var l evalreport.Latency
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

func result(row store.RunRow) evalreport.Result {
	r := evalreport.Result{Model: row.Model, Item: row.Item, Line: row.Line, Repeat: row.Repeat, Expected: row.Expected,
		Answer: row.Answer, Finish: row.Finish, Pass: row.Pass, Score: row.Score, Reasons: row.Reasons, Error: row.Error, Cached: row.Cached,
		LatencyMS: row.LatencyMS, InputTokens: row.InputTokens, OutputTokens: row.OutputTokens, CostUSD: row.CostUSD}
	if len(row.Metrics) > 0 {
		r.Metrics = make(map[string]evalreport.MetricScore, len(row.Metrics))
		for _, m := range row.Metrics {
			r.Metrics[m.Name] = evalreport.MetricScore{Pass: m.Pass, Score: m.Score}
		}
	}
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
