package score

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/digest-cli/digest/internal/dataset"
)

// JudgeRequest is what a judge assertion asks the grading model about one
// answer.
type JudgeRequest struct {
	Rubric   string
	Question string // the item's last user message
	Answer   string
	// Scale is the graded judge's scale; nil asks for PASS or FAIL.
	Scale *dataset.Scale
}

// Verdict is the grading model's reading of an answer.
type Verdict struct {
	// Pass is the PASS or FAIL judge's verdict; a graded judge's pass is
	// the scorer's to decide, from Score and the assertion's threshold.
	Pass bool
	// Score is a graded judge's score on its scale, such as 4 on 1-5;
	// unused by the PASS or FAIL judge.
	Score float64
	// Reason is the model's one sentence saying why.
	Reason string
}

// Judge grades an answer with a model. The caller supplies it, calling
// the grading model (--judge MODEL) through the same engine as the graded
// ones. A graded request's Verdict.Score must lie on its scale: a reply
// that cannot be read is the Judge's error, never a made-up score.
type Judge func(ctx context.Context, q JudgeRequest) (Verdict, error)

// graded scores a graded judge's verdict: the score normalised to 0-1,
// and whether it passes: at the threshold when there is one (on the 0-1
// scale, as promptfoo's), else at the scale's midpoint.
func (c *check) graded(v Verdict) (share float64, pass bool, why string, err error) {
	sc := *c.scale
	if math.IsNaN(v.Score) || !sc.Contains(v.Score) {
		return 0, false, "", fmt.Errorf("the judge's score %v is not on the scale %s", v.Score, sc)
	}
	share = sc.Normalize(v.Score)
	var bar string
	if math.IsNaN(c.threshold) {
		pass = v.Score >= sc.Midpoint()
		bar = "the midpoint " + fmtNum(sc.Midpoint())
	} else {
		pass = share >= c.threshold-1e-9
		bar = "the threshold " + fmtNum(c.threshold)
	}
	reason := oneLine(v.Reason)
	if reason == "" {
		reason = "no reason given"
	}
	return share, pass, fmt.Sprintf("scored %s on %s (%s), below %s: %s", fmtNum(v.Score), sc, strconv.FormatFloat(share, 'f', 2, 64), bar, reason), nil
}
