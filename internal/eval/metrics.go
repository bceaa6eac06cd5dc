package eval

import (
	"context"
	"iter"
	"slices"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/report"
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

// metricSums gathers a model's results on one metric.
type metricSums struct {
	name          string
	items, passed int
	scores        float64
}

// modelMetrics sums a model's results per metric, streaming them; named
// is false when no result names a metric, and the run has the one metric
// accuracy. Results with nothing to check are left out, as they are of
// the accuracy.
func modelMetrics(ctx context.Context, st store.Store, runID, model string) (sums []*metricSums, named bool, err error) {
	for row, err := range st.RunRows(ctx, runID, []string{model}, false) {
		if err != nil {
			return nil, false, err
		}
		if row.Error == report.NothingToCheck {
			continue
		}
		named = named || len(row.Metrics) > 0
		for _, m := range rowMetrics(row) {
			i := slices.IndexFunc(sums, func(s *metricSums) bool { return s.name == m.Name })
			if i < 0 {
				i = len(sums)
				sums = append(sums, &metricSums{name: m.Name})
			}
			s := sums[i]
			s.items++
			if m.Pass {
				s.passed++
			}
			s.scores += m.Score
		}
	}
	return sums, named, nil
}

// metricStats turns a model's sums into its report figures, with the
// --min gates that apply.
func metricStats(model string, sums []*metricSums, gates Gates) []report.MetricStats {
	out := make([]report.MetricStats, 0, len(sums))
	for _, s := range sums {
		ms := report.MetricStats{Name: s.name, Items: s.items, Passed: s.passed}
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
	p          report.MetricPair
	n          int
	sum, sumSq float64
}

// metricPairs compares models a and b on every metric, result by result
// (the same item and repeat), reading both models' results side by side.
// Only results graded on a metric for both models count for it; results
// with nothing to check are left out.
func metricPairs(ctx context.Context, st store.Store, runID, a, b string) ([]report.MetricPair, error) {
	nextB, stop := iter.Pull2(st.RunRows(ctx, runID, []string{b}, false))
	defer stop()
	rb, errB, okB := nextB()
	var sums []*pairSums
	before := func(x, y store.RunRow) bool { return x.Line < y.Line || x.Line == y.Line && x.Repeat < y.Repeat }
	for ra, err := range st.RunRows(ctx, runID, []string{a}, false) {
		if err != nil {
			return nil, err
		}
		for okB && errB == nil && before(rb, ra) {
			rb, errB, okB = nextB()
		}
		if errB != nil {
			return nil, errB
		}
		if !okB || rb.Line != ra.Line || rb.Repeat != ra.Repeat || ra.Error == report.NothingToCheck || rb.Error == report.NothingToCheck {
			continue
		}
		mb := rowMetrics(rb)
		for _, ma := range rowMetrics(ra) {
			j := slices.IndexFunc(mb, func(m store.MetricScore) bool { return m.Name == ma.Name })
			if j < 0 {
				continue
			}
			i := slices.IndexFunc(sums, func(s *pairSums) bool { return s.p.Metric == ma.Name })
			if i < 0 {
				i = len(sums)
				sums = append(sums, &pairSums{p: report.MetricPair{Metric: ma.Name, A: a, B: b}})
			}
			s := sums[i]
			switch pa, pb := ma.Pass, mb[j].Pass; {
			case pa && pb:
				s.p.Both++
			case pa:
				s.p.AOnly++
			case pb:
				s.p.BOnly++
			default:
				s.p.None++
			}
			d := ma.Score - mb[j].Score
			s.n++
			s.sum += d
			s.sumSq += d * d
		}
	}
	out := make([]report.MetricPair, 0, len(sums))
	for _, s := range sums {
		s.p.P = stats.McNemar(s.p.AOnly, s.p.BOnly)
		s.p.MeanDiff, s.p.T, s.p.TP = stats.PairedT(s.n, s.sum, s.sumSq)
		out = append(out, s.p)
	}
	return out, nil
}
