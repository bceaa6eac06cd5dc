package stats

import (
	"math"
	"math/big"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestWilson(t *testing.T) {
	// Hand-computed with z = 1.959963984540054, p = k/n:
	//   center = (p + z²/2n) / (1 + z²/n)
	//   half   = z/(1 + z²/n) * sqrt(p(1-p)/n + z²/4n²)
	// 8/10:   z² = 3.841459, 1+z²/n = 1.3841459, center = (0.8+0.1920729)/1.3841459 = 0.716740,
	//         half = 1.415992 * sqrt(0.016 + 0.0096036) = 0.226578 → (0.4902, 0.9433).
	// 50/100: center = 0.5, half = 1.9599640/1.0384146 * sqrt(0.0025 + 0.000096036) = 0.0961685
	//         → (0.4038, 0.5962).
	// 0/10:   center = half = 0.1920729/1.3841459 = 0.138766 → (0, 0.2775).
	// 10/10:  the mirror image of 0/10 → (0.7225, 1).
	for _, tc := range []struct {
		passed, n int
		low, high float64
	}{
		{8, 10, 0.4902, 0.9433},
		{50, 100, 0.4038, 0.5962},
		{0, 10, 0, 0.2775},
		{10, 10, 0.7225, 1},
		{1, 1, 0.2065, 1},
		{0, 1, 0, 0.7935},
		{0, 0, 0, 1},  // nothing known: the whole range
		{-3, 0, 0, 1}, // nonsense n
		{12, 10, 0.7225, 1},
		{-1, 10, 0, 0.2775},
	} {
		low, high := Wilson(tc.passed, tc.n)
		if !near(low, tc.low, 5e-5) || !near(high, tc.high, 5e-5) {
			t.Errorf("Wilson(%d, %d) = (%.4f, %.4f), want (%.4f, %.4f)", tc.passed, tc.n, low, high, tc.low, tc.high)
		}
		if low < 0 || high > 1 || low > high {
			t.Errorf("Wilson(%d, %d) = (%v, %v) out of [0, 1]", tc.passed, tc.n, low, high)
		}
	}
	// Exact edges, not 0.9999999999999999.
	if _, high := Wilson(10, 10); high != 1 {
		t.Errorf("Wilson(10, 10) high = %v, want exactly 1", high)
	}
	if low, _ := Wilson(0, 10); low != 0 {
		t.Errorf("Wilson(0, 10) low = %v, want exactly 0", low)
	}
	// The interval always holds the observed proportion.
	for n := 1; n <= 200; n++ {
		for k := 0; k <= n; k++ {
			low, high := Wilson(k, n)
			p := float64(k) / float64(n)
			if p < low-1e-12 || p > high+1e-12 {
				t.Fatalf("Wilson(%d, %d) = (%v, %v) misses %v", k, n, low, high, p)
			}
		}
	}
}

func TestMcNemar(t *testing.T) {
	for _, tc := range []struct {
		b, c int
		want float64
		tol  float64 // relative
	}{
		// b=37, c=12: n = 49, p = 2 * sum_{k=0}^{12} C(49,k) / 2^49.
		// sum_{k=0}^{12} C(49,k) = 132224930146 (exact integer arithmetic),
		// so p = 264449860292 / 562949953421312 = 66112465073 / 140737488355328
		//      = 0.0004697573180081349...
		{37, 12, 0.0004697573180081349, 1e-12},
		{12, 37, 0.0004697573180081349, 1e-12},
		// b=1, c=0: 2 * P(X <= 0) = 2 * 1/2 = 1.
		{1, 0, 1, 0},
		// b=10, c=0: 2 * (1/2)^10 = 1/512.
		{10, 0, 0.001953125, 1e-14},
		{0, 10, 0.001953125, 1e-14},
		// No discordant pairs: no evidence either way.
		{0, 0, 1, 0},
		// Balanced and nearly balanced: the tail holds at least half the mass.
		{5, 5, 1, 0},
		{5, 6, 1, 0},
		// b=3, c=10: 2 * (C(13,0)+C(13,1)+C(13,2)+C(13,3)) / 2^13 = 2*378/8192 = 189/2048.
		{3, 10, 0.09228515625, 1e-13},
		// Large n, summed exactly with Python's integers:
		// 2 * sum_{k<=m} C(n,k) / 2^n.
		{100, 140, 0.011664092317677663, 1e-9},
		{600, 400, 2.7284641560660184e-10, 1e-9},
		{49000, 51000, 2.588716038346898e-10, 1e-8},
		{50000, 50500, 0.11547629006868125, 1e-8},
		{-4, 0, 1, 0},
	} {
		got := McNemar(tc.b, tc.c)
		if math.IsNaN(got) || math.Abs(got-tc.want) > tc.tol*tc.want {
			t.Errorf("McNemar(%d, %d) = %.17g, want %.17g", tc.b, tc.c, got, tc.want)
		}
	}
}

// exactMcNemar is the definition with rational arithmetic.
func exactMcNemar(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	m := min(b, c)
	sum := new(big.Int)
	binom := big.NewInt(1)
	for k := 0; k <= m; k++ {
		sum.Add(sum, binom)
		binom.Mul(binom, big.NewInt(int64(n-k)))
		binom.Quo(binom, big.NewInt(int64(k+1)))
	}
	p := new(big.Rat).SetFrac(new(big.Int).Lsh(sum, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
	if p.Cmp(big.NewRat(1, 1)) > 0 {
		return 1
	}
	f, _ := p.Float64()
	return f
}

func TestMcNemarExactAndSymmetric(t *testing.T) {
	for b := 0; b <= 120; b++ {
		for c := 0; c <= 120; c += 1 + b%3 {
			got, want := McNemar(b, c), exactMcNemar(b, c)
			if math.Abs(got-want) > 1e-11*want {
				t.Fatalf("McNemar(%d, %d) = %.17g, exact %.17g", b, c, got, want)
			}
			if McNemar(c, b) != got {
				t.Fatalf("McNemar(%d, %d) = %v but McNemar(%d, %d) = %v", b, c, got, c, b, McNemar(c, b))
			}
		}
	}
}

func TestMcNemarLarge(t *testing.T) {
	for _, tc := range [][2]int{{50000, 50500}, {0, 100000}, {1, 99999}, {30000, 70000}, {49999, 50001}, {3_000_000, 3_001_000}} {
		p := McNemar(tc[0], tc[1])
		if math.IsNaN(p) || math.IsInf(p, 0) || p < 0 || p > 1 {
			t.Errorf("McNemar(%d, %d) = %v, want a finite p in [0, 1]", tc[0], tc[1], p)
		}
		if p != McNemar(tc[1], tc[0]) {
			t.Errorf("McNemar(%d, %d) not symmetric", tc[0], tc[1])
		}
	}
	if p := McNemar(50000, 50500); !(p > 0 && p <= 1) {
		t.Errorf("McNemar(50000, 50500) = %v, want in (0, 1]", p)
	}
	// 2^-100000 underflows to 0: the honest float64 answer.
	if p := McNemar(0, 100000); p != 0 {
		t.Errorf("McNemar(0, 100000) = %v, want 0 (underflow)", p)
	}
}

func TestPercentile(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		sorted []float64
		p      float64
		want   float64
	}{
		{nil, 50, 0},
		{[]float64{}, 99, 0},
		{[]float64{7}, 0, 7},
		{[]float64{7}, 50, 7},
		{[]float64{7}, 100, 7},
		// numpy.percentile([1..10], q): rank h = 9*q/100.
		{ten, 0, 1},
		{ten, 50, 5.5},  // h = 4.5
		{ten, 95, 9.55}, // h = 8.55
		{ten, 99, 9.91}, // h = 8.91
		{ten, 100, 10},
		{ten, 25, 3.25}, // h = 2.25
		{[]float64{10, 20, 30, 40}, 50, 25},
		{[]float64{10, 20, 30, 40}, 90, 37}, // h = 2.7
		{[]float64{100, 200, 300, 400, 500}, 95, 480}, // h = 3.8
		{[]float64{1, 1, 1, 5}, 75, 2},                // h = 2.25: 1 + .25*4
		{ten, -5, 1},
		{ten, 250, 10},
		{ten, math.NaN(), 1},
	} {
		if got := Percentile(tc.sorted, tc.p); !near(got, tc.want, 1e-9) {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
		}
	}
}

// TestPairedT checks against R's t.test(d) (equivalently
// t.test(a, b, paired = TRUE)) on known differences.
func TestPairedT(t *testing.T) {
	cases := []struct {
		d       []float64
		mean, t float64
		p       float64
	}{
		// t.test(c(1,2,3,4,5)): t = 4.2426, df = 4, p-value = 0.01324
		{[]float64{1, 2, 3, 4, 5}, 3, 4.242640687, 0.013236},
		// t.test(c(-1,1,0.5,-0.5)): t = 0, p-value = 1
		{[]float64{-1, 1, 0.5, -0.5}, 0, 0, 1},
		// Scores of 0, 0.5 and 1: mean 0.4375, sd² = 1.21875/7, so
		// t = 0.4375/√(0.174107/8) = 2.965615 with df = 7, whose p lies
		// between 0.05 (t = 2.364624) and 0.02 (t = 2.997952).
		{[]float64{0.5, 0, 1, 0, 0.5, 1, 0, 0.5}, 0.4375, 2.965615, 0.020938},
	}
	for _, c := range cases {
		var sum, sq float64
		for _, v := range c.d {
			sum += v
			sq += v * v
		}
		mean, tv, p := PairedT(len(c.d), sum, sq)
		if math.Abs(mean-c.mean) > 1e-9 || math.Abs(tv-c.t) > 1e-5 || math.Abs(p-c.p) > 5e-6 {
			t.Errorf("PairedT(%v) = %g, %g, %g; want %g, %g, %g", c.d, mean, tv, p, c.mean, c.t, c.p)
		}
	}
	if _, _, p := PairedT(1, 0.5, 0.25); p != 1 {
		t.Errorf("one pair: p = %g, want 1", p)
	}
	if _, _, p := PairedT(3, 0, 0); p != 1 {
		t.Errorf("no difference: p = %g, want 1", p)
	}
	if _, _, p := PairedT(3, 1.5, 0.75); p != 0 {
		t.Errorf("the same difference on every item: p = %g, want 0", p)
	}
}

// TestStudentTwoSided checks the t distribution's tails against known
// quantiles: the 97.5% point of t with df degrees of freedom has a
// two-sided p of 0.05.
func TestStudentTwoSided(t *testing.T) {
	for _, c := range []struct{ t, df float64 }{{12.706205, 1}, {2.776445, 4}, {2.364624, 7}, {2.228139, 10}, {1.983972, 100}} {
		if p := StudentTwoSided(c.t, c.df); math.Abs(p-0.05) > 1e-6 {
			t.Errorf("StudentTwoSided(%g, %g) = %g, want 0.05", c.t, c.df, p)
		}
	}
	// The 99% point with 7 degrees of freedom.
	if p := StudentTwoSided(2.997952, 7); math.Abs(p-0.02) > 1e-6 {
		t.Errorf("StudentTwoSided(2.997952, 7) = %g, want 0.02", p)
	}
}
