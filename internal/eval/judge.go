package eval

import (
	"context"
	"fmt"
	"strings"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/score"
)

const judgeSystem = `You grade answers. Given a rubric, a question and an answer, reply with
PASS or FAIL on the first line, then one sentence saying why. Judge only by the rubric.`

// NewJudge returns the verdicts of a grading model, asked through eng: the
// same limits and retries as every other request.
func NewJudge(eng *engine.Engine, model string) score.Judge {
	return func(ctx context.Context, rubric, question, answer string) (bool, string, error) {
		req := provider.Request{Model: model, System: judgeSystem, MaxTokens: 200, Messages: []provider.Message{{Role: "user",
			Content: fmt.Sprintf("Rubric:\n%s\n\nQuestion:\n%s\n\nAnswer:\n%s", rubric, question, answer)}}}
		o := eng.Do(ctx, engine.Task{Key: key.Of("judge", model, rubric, question, answer), Request: req})
		if o.Err != nil {
			return false, "", fmt.Errorf("judge %s: %w", model, o.Err)
		}
		return verdict(o.Response.Text)
	}
}

// verdict reads PASS or FAIL from the start of a grader's reply.
func verdict(text string) (bool, string, error) {
	t := strings.TrimSpace(text)
	word, rest, _ := strings.Cut(t, "\n")
	word = strings.ToUpper(strings.Trim(strings.TrimSpace(word), "*.:!"))
	reason := strings.TrimSpace(rest)
	switch {
	case strings.HasPrefix(word, "PASS"):
		return true, reason, nil
	case strings.HasPrefix(word, "FAIL"):
		return false, cmpOr(reason, "the judge said FAIL"), nil
	}
	return false, "", fmt.Errorf("the judge answered neither PASS nor FAIL: %.80q", t)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
