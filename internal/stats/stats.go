// Package stats holds the few statistics an evaluation report needs: the
// Wilson interval of an accuracy, the exact McNemar test between two models
// on the same items, the paired t-test of their scores, and percentiles of
// latencies.
package stats

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// z95 is the two-sided 95% quantile of the standard normal distribution.
const z95 = 1.959963984540054

// Wilson is the Wilson score interval at 95% of the proportion passed/n.
//
// Unlike the normal ("Wald") interval it stays inside [0, 1] and does not
// collapse to a point at 0/n or n/n: 0/10 gives (0, 0.2775), 10/10 gives
// (0.7225, 1). With n = 0 nothing is known, and the interval is the whole
// (0, 1) rather than a falsely certain (0, 0). Arguments outside
// 0 <= passed <= n are clamped into it.
func Wilson(passed, n int) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	passed = min(max(passed, 0), n)
	nf := float64(n)
	p := float64(passed) / nf
	z2 := z95 * z95
	d := 1 + z2/nf
	center := (p + z2/(2*nf)) / d
	half := z95 / d * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	low, high = center-half, center+half
	// At the edges the exact bounds are 0 and 1; rounding would leave
	// 1e-17 or 0.9999999999999999.
	if passed == 0 {
		low = 0
	}
	if passed == n {
		high = 1
	}
	return max(low, 0), min(high, 1)
}

// McNemar is the two-sided exact McNemar test of two models on the same
// items, from the discordant pairs: aOnly items only A passed and bOnly
// items only B passed. Under the null hypothesis that both models are
// equally good, each discordant item is a fair coin, so with n = aOnly+bOnly
// and X ~ Binomial(n, 1/2)
//
//	p = min(1, 2 * P(X <= min(aOnly, bOnly)))
//
// n = 0 gives 1. The tail is summed exactly (no normal or chi-square
// approximation) in a numerically stable way: the largest term, at
// k = min(aOnly, bOnly), is computed in log space with math.Lgamma, and the
// smaller terms are added as ratios to it by the recurrence
// P(X=k-1)/P(X=k) = k/(n-k+1), stopping once they no longer change the sum.
// It stays finite and accurate for n in the millions. Negative counts are
// read as 0.
func McNemar(aOnly, bOnly int) float64 {
	aOnly, bOnly = max(aOnly, 0), max(bOnly, 0)
	n := aOnly + bOnly
	m := min(aOnly, bOnly)
	if n == 0 || 2*m >= n-1 {
		// The tail up to the middle (or one short of it) holds at least
		// half of the mass, so 2*P >= 1.
		return 1
	}
	// Sum of P(X=k)/P(X=m) for k = m, m-1, ..., 0. Since m < n/2 every
	// ratio is below 1 and the terms fall at least geometrically.
	sum, term := 1.0, 1.0
	for k := m; k > 0; k-- {
		term *= float64(k) / float64(n-k+1)
		sum += term
		if term < sum*1e-17 {
			break
		}
	}
	logPm := lchoose(n, m) - float64(n)*math.Ln2
	p := 2 * math.Exp(logPm+math.Log(sum))
	return min(p, 1)
}

// lchoose is log(n choose k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// Percentile is the p-th percentile (p from 0 to 100) of sorted, which
// must be in ascending order, by linear interpolation between the two
// closest ranks: numpy's default ("linear", Hyndman and Fan type 7). The
// rank is h = (len-1)*p/100 and the result
// sorted[floor(h)] + (h-floor(h))*(sorted[floor(h)+1]-sorted[floor(h)]).
// p is clamped to [0, 100] (NaN reads as 0); an empty slice gives 0.
func Percentile(sorted []float64, p float64) float64 {
	v, _ := PercentileOf(len(sorted), p, func(i int) (float64, error) { return sorted[i], nil })
	return v
}

// PercentileOf is Percentile over n ascending values read by rank through
// at, which is asked for at most two ranks: the values may stay where they
// are, such as in a database ordered by an index.
func PercentileOf(n int, p float64, at func(rank int) (float64, error)) (float64, error) {
	switch {
	case n == 0:
		return 0, nil
	case !(p > 0):
		return at(0)
	case p >= 100:
		return at(n - 1)
	}
	h := float64(n-1) * p / 100
	lo := int(h)
	if lo >= n-1 {
		return at(n - 1)
	}
	v, err := at(lo)
	frac := h - float64(lo)
	if err != nil || frac == 0 {
		return v, err
	}
	w, err := at(lo + 1)
	return v + frac*(w-v), err
}

// PairedT is the two-sided paired t-test of two models' scores on the same
// items, from the n differences d = scoreA - scoreB summed as sum = Σd and
// sumSq = Σd². It returns the mean difference, t and the p-value of
// t = mean / (sd/√n) with n-1 degrees of freedom.
//
// The t-test is used rather than Wilcoxon's signed-rank test because it
// needs only these three running sums, so a run of any size is compared in
// constant memory (signed ranks need every difference held and sorted), and
// because with the hundreds of items an evaluation has, the mean of
// bounded differences is close to normal whatever the scores' shape.
//
// n < 2 gives p = 1: one pair says nothing of the spread. Differences that
// are all equal (sd = 0) give p = 1 when they are all 0 and p = 0
// otherwise, as every item then differs the same way.
func PairedT(n int, sum, sumSq float64) (mean, t, p float64) {
	if n < 2 {
		if n == 1 {
			mean = sum
		}
		return mean, 0, 1
	}
	nf := float64(n)
	mean = sum / nf
	variance := (sumSq - sum*sum/nf) / (nf - 1)
	if variance <= 1e-15*max(1, mean*mean) {
		if math.Abs(mean) < 1e-12 {
			return 0, 0, 1
		}
		return mean, math.Copysign(math.Inf(1), mean), 0
	}
	t = mean / math.Sqrt(variance/nf)
	return mean, t, StudentTwoSided(t, nf-1)
}

// StudentTwoSided is P(|T| >= |t|) for Student's t distribution with df
// degrees of freedom: I_x(df/2, 1/2) with x = df/(df+t²), the regularized
// incomplete beta function, as gonum's mathext computes it.
func StudentTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return 1
	}
	if math.IsInf(t, 0) {
		return 0
	}
	x := df / (df + t*t)
	return min(max(mathext.RegIncBeta(df/2, 0.5, x), 0), 1)
}
