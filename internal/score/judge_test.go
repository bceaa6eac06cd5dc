package score

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
)

func th(f float64) *float64 { return &f }

// A graded judge passes at its threshold, or at the scale's midpoint
// without one, and adds its normalised score, not 0 or 1.
func TestGradedJudge(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		a      dataset.Assertion
		answer string
		pass   bool
		score  float64
		reason string
	}{
		{"midpoint met", dataset.Assertion{Type: "judge", Scale: "1-5"}, "score=3", true, 0.5, ""},
		{"below the midpoint", dataset.Assertion{Type: "judge", Scale: "1-5"}, "score=2", false, 0.25,
			"judge: scored 2 on 1-5 (0.25), below the midpoint 3: graded score=2"},
		{"between whole numbers", dataset.Assertion{Type: "judge", Scale: "1-10"}, "score=5.5", true, 0.5, ""},
		{"threshold met", dataset.Assertion{Type: "judge", Scale: "0-10", Threshold: th(0.7)}, "score=7", true, 0.7, ""},
		{"threshold missed above the midpoint", dataset.Assertion{Type: "judge", Scale: "0-10", Threshold: th(0.7)}, "score=6", false, 0.6,
			"judge: scored 6 on 0-10 (0.60), below the threshold 0.7: graded score=6"},
		{"threshold below the midpoint", dataset.Assertion{Type: "judge", Scale: "1-5", Threshold: th(0.25)}, "score=2", true, 0.25, ""},
		{"0-1", dataset.Assertion{Type: "llm-rubric", Scale: "0-1"}, "score=0.8", true, 0.8, ""},
	} {
		res, err := scorer().Score(ctx, with(item("72"), tt.a), tt.answer)
		if err != nil || res.Pass != tt.pass || res.Score != tt.score {
			t.Errorf("%s: %+v, %v; want pass %v, score %v", tt.name, res, err, tt.pass, tt.score)
			continue
		}
		if why := strings.Join(res.Reasons, "|"); why != tt.reason {
			t.Errorf("%s: reasons %q, want %q", tt.name, why, tt.reason)
		}
	}
}

// A graded judge's score counts into its metric's and the item's by
// weight; its threshold is its own, not the item's, so the item still
// needs every assertion to pass.
func TestGradedJudgeInItsMetric(t *testing.T) {
	it := with(item("72"),
		dataset.Assertion{Type: "includes", Value: "72"},
		dataset.Assertion{Type: "judge", Scale: "1-5", Threshold: th(0.5), Metric: "bias"},
		dataset.Assertion{Type: "not-includes", Value: "obviously", Metric: "bias", Weight: 3})
	res, err := scorer().Score(context.Background(), it, "72 score=4")
	if err != nil {
		t.Fatal(err)
	}
	bias, _ := res.Metric("bias")
	if !res.Pass || !near(res.Score, (1+0.75+3)/5.0) || !bias.Pass || !near(bias.Score, (0.75+3)/4.0) {
		t.Errorf("%+v, bias %+v", res, bias)
	}
	res, err = scorer().Score(context.Background(), it, "72 score=2")
	bias, _ = res.Metric("bias")
	acc, _ := res.Metric(dataset.DefaultMetric)
	if err != nil || res.Pass || bias.Pass || !near(bias.Score, (0.25+3)/4.0) || !acc.Pass || acc.Score != 1 {
		t.Errorf("a failed graded judge: %+v, %v", res, err)
	}
}

// A scale on anything but judge, a bad scale, and a verdict off its scale
// are errors, never a score.
func TestGradedJudgeErrors(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		a       dataset.Assertion
		invalid bool
		want    string
	}{
		{dataset.Assertion{Type: "exact", Value: "72", Scale: "1-5"}, true, `scale "1-5" grades a judge assertion only, not exact`},
		{dataset.Assertion{Type: "not-judge", Scale: "1-5"}, true, `grades a judge assertion only, not not-judge`},
		{dataset.Assertion{Type: "judge", Scale: "0-0"}, true, `scale "0-0": it must run from a low to a higher`},
		{dataset.Assertion{Type: "judge", Scale: "1-5"}, false, "the judge's score 9 is not on the scale 1-5"},
	} {
		_, err := scorer().Score(ctx, with(item("72"), tt.a), "score=9")
		if err == nil || errors.Is(err, ErrInvalid) != tt.invalid || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q (invalid %v)", tt.a, err, tt.want, tt.invalid)
		}
	}
	// Checkable sees a bad scale before anything is sent.
	if ok, err := (&Scorer{}).Checkable(with(item("72"), dataset.Assertion{Type: "judge", Scale: "9-1"})); ok || !errors.Is(err, ErrInvalid) {
		t.Errorf("Checkable: %v, %v", ok, err)
	}
}

// The judge is asked with the assertion's scale; --assert g-eval is
// graded 0-10 and passes at 0.7, as promptfoo's.
func TestGradedJudgeRequest(t *testing.T) {
	var got *dataset.Scale
	s := &Scorer{Default: "g-eval", Judge: func(ctx context.Context, q JudgeRequest) (Verdict, error) {
		got = q.Scale
		return fakeJudge(ctx, q)
	}}
	res, err := s.Score(context.Background(), item("72"), "score=6")
	if err != nil || got == nil || *got != (dataset.Scale{Lo: 0, Hi: 10}) || res.Pass || res.Score != 0.6 {
		t.Errorf("--assert g-eval: scale %v, %+v, %v", got, res, err)
	}
	if res, err = s.Score(context.Background(), item("72"), "score=7"); err != nil || !res.Pass {
		t.Errorf("--assert g-eval at 7: %+v, %v", res, err)
	}
	s.Default = "judge"
	if _, err := s.Score(context.Background(), item("72"), "good"); err != nil || got != nil {
		t.Errorf("--assert judge: scale %v, %v", got, err)
	}
	s.Default = "not-g-eval"
	if _, err := s.Score(context.Background(), item("72"), "good"); !errors.Is(err, ErrInvalid) {
		t.Errorf("--assert not-g-eval: %v", err)
	}
}

// FuzzGradedJudge grades arbitrary scores on arbitrary scales: an invalid
// scale is an invalid assertion, a score off the scale the judge's error,
// and any other a score in [0, 1] that passes exactly at the threshold or
// the midpoint, with one reason line when it fails.
func FuzzGradedJudge(f *testing.F) {
	f.Add("1-5", "4", 0.0, false)
	f.Add("0-10", "6.9", 0.7, true)
	f.Add("0-1", "1", 1.0, true)
	f.Add("3-3", "3", 0.0, false)
	f.Add("1-5", "NaN", 0.0, false)
	f.Fuzz(func(t *testing.T, scale, got string, threshold float64, given bool) {
		if scale == "" {
			return // the PASS or FAIL judge
		}
		a := dataset.Assertion{Type: "judge", Scale: scale}
		if given {
			a.Threshold = &threshold
		}
		res, err := scorer().Score(context.Background(), with(item("72"), a), "score="+got)
		sc, scaleErr := dataset.ParseScale(scale)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			if scaleErr != nil || given && !(threshold >= 0 && threshold <= 1) {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("%q: %v is not an invalid assertion", scale, err)
				}
				return
			}
			if errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "is not on the scale") {
				t.Fatalf("%q on %v: %v", got, sc, err)
			}
			return
		}
		if scaleErr != nil {
			t.Fatalf("scale %q accepted", scale)
		}
		if res.Score < 0 || res.Score > 1 || res.Pass != (len(res.Reasons) == 0) || len(res.Reasons) > 1 {
			t.Fatalf("%q on %v: %+v", got, sc, res)
		}
		raw := float64(sc.Lo) + res.Score*float64(sc.Hi-sc.Lo)
		want := raw >= sc.Midpoint()-1e-9
		if given {
			want = res.Score >= threshold-1e-9
		}
		if res.Pass != want && math.Abs(raw-sc.Midpoint()) > 1e-6 {
			t.Fatalf("%q on %v (threshold %v given %v): pass %v", got, sc, threshold, given, res.Pass)
		}
	})
}
