package eval

import (
	"context"
	"iter"
	"slices"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/stats"
	"github.com/digest-cli/digest/internal/store"
)

// rowMetrics are a result's grades per metric: those stored, or, for a
// result whose item names no metric, its pass and score as the one metric
// accuracy.
func rowMetrics(row store.RunRow) []store.MetricScore {
	if len(row.Metrics) > 0 {
		return row.Metrics
	}
	return []store.MetricScore{{Name: dataset.DefaultMetric, Pass: row.Pass, Score: row.Score}}
}

// metricTally is one item's repeats on one metric, for one model.
type metricTally struct {
	name            string
	repeats, passed int
	score           float64 // summed over the repeats
}

// pass is the majority verdict, as the item's own: more than half of the
// repeats passed the metric.
func (t metricTally) pass() bool { return 2*t.passed > t.repeats }

// mean is the metric's score averaged over the item's repeats.
func (t metricTally) mean() float64 { return t.score / float64(t.repeats) }

// tally adds a result's grades to an item's per-metric tallies.
func tally(tallies []metricTally, row store.RunRow) []metricTally {
	for _, m := range rowMetrics(row) {
		i := slices.IndexFunc(tallies, func(t metricTally) bool { return t.name == m.Name })
		if i < 0 {
			i = len(tallies)
			tallies = append(tallies, metricTally{name: m.Name})
		}
		tallies[i].repeats++
		if m.Pass {
			tallies[i].passed++
		}
		tallies[i].score += m.Score
	}
	return tallies
}

// metricSums gathers a model's items on one metric.
type metricSums struct {
	name          string
	items, passed int
	scores        float64
}

// modelMetrics sums a model's items per metric, streaming them; named is
// false when no result names a metric, and the run has the one metric
// accuracy. As the accuracy does, it counts items, not answers: with
// --repeat an item passes a metric when more than half of its repeats
// do, and scores their mean. Items with nothing to check are left out.
func modelMetrics(ctx context.Context, st store.EvalStore, runID, model string) (sums []*metricSums, named bool, err error) {
	for v, err := range itemVerdicts(ctx, st, runID, model) {
		if err != nil {
			return nil, false, err
		}
		named = named || v.named
		if v.unchecked {
			continue
		}
		for _, t := range v.metrics {
			i := slices.IndexFunc(sums, func(s *metricSums) bool { return s.name == t.name })
			if i < 0 {
				i = len(sums)
				sums = append(sums, &metricSums{name: t.name})
			}
			s := sums[i]
			s.items++
			if t.pass() {
				s.passed++
			}
			s.scores += t.mean()
		}
	}
	return sums, named, nil
}

// metricStats turns a model's sums into its report figures, with the
// --min gates that apply.
func metricStats(model string, sums []*metricSums, gates Gates) []evalreport.MetricStats {
	out := make([]evalreport.MetricStats, 0, len(sums))
	for _, s := range sums {
		ms := evalreport.MetricStats{Name: s.name, Items: s.items, Passed: s.passed}
		if s.items > 0 {
			ms.PassRate = float64(s.passed) / float64(s.items)
			ms.MeanScore = s.scores / float64(s.items)
		}
		ms.CILow, ms.CIHigh = stats.Wilson(s.passed, s.items)
		if g, ok := gates.For(model, s.name); ok {
			ms.Min = &g
			ms.Below = ms.PassRate < g
		}
		out = append(out, ms)
	}
	return out
}

// pairSums gathers two models' comparison on one metric.
type pairSums struct {
	p          evalreport.MetricPair
	n          int
	sum, sumSq float64
}

// metricPairs compares models a and b on every metric, item by item (by
// their majority verdicts and mean scores, as the accuracy's pairs),
// reading both models' items side by side. Only items graded on a metric
// for both models count for it; items with nothing to check are left out.
func metricPairs(ctx context.Context, st store.EvalStore, runID, a, b string) ([]evalreport.MetricPair, error) {
	nextB, stop := iter.Pull2(itemVerdicts(ctx, st, runID, b))
	defer stop()
	vb, errB, okB := nextB()
	var sums []*pairSums
	for va, err := range itemVerdicts(ctx, st, runID, a) {
		if err != nil {
			return nil, err
		}
		for okB && errB == nil && vb.line < va.line {
			vb, errB, okB = nextB()
		}
		if errB != nil {
			return nil, errB
		}
		if !okB || vb.line != va.line || va.unchecked || vb.unchecked {
			continue
		}
		for _, ma := range va.metrics {
			j := slices.IndexFunc(vb.metrics, func(t metricTally) bool { return t.name == ma.name })
			if j < 0 {
				continue
			}
			mb := vb.metrics[j]
			i := slices.IndexFunc(sums, func(s *pairSums) bool { return s.p.Metric == ma.name })
			if i < 0 {
				i = len(sums)
				sums = append(sums, &pairSums{p: evalreport.MetricPair{Metric: ma.name, A: a, B: b}})
			}
			s := sums[i]
			switch pa, pb := ma.pass(), mb.pass(); {
			case pa && pb:
				s.p.Both++
			case pa:
				s.p.AOnly++
			case pb:
				s.p.BOnly++
			default:
				s.p.None++
			}
			d := ma.mean() - mb.mean()
			s.n++
			s.sum += d
			s.sumSq += d * d
		}
	}
	out := make([]evalreport.MetricPair, 0, len(sums))
	for _, s := range sums {
		s.p.P = stats.McNemar(s.p.AOnly, s.p.BOnly)
		s.p.MeanDiff, s.p.T, s.p.TP = stats.PairedT(s.n, s.sum, s.sumSq)
		out = append(out, s.p)
	}
	return out, nil
}
