package eval

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/target"
)

var oneToFive = dataset.Scale{Lo: 1, Hi: 5}

func TestGradedVerdict(t *testing.T) {
	for _, tt := range []struct {
		text   string
		score  float64
		reason string
		err    string
	}{
		{`{"score": 4, "reason": "Mostly fair."}`, 4, "Mostly fair.", ""},
		{"```json\n{\"reason\": \"Loaded.\", \"score\": 2, \"pass\": false}\n```", 2, "Loaded.", ""},
		{`Here is my grade: {"score": "3.5", "reason": " Even. "} Hope it helps.`, 3.5, "Even.", ""},
		{`{"grade": {"score": 5}}`, 5, "", ""},
		{`{not json} then {"score": 1, "reason": 7}`, 1, "", ""},
		{`{"score": 6, "reason": "Great."}`, 0, "", `the judge's score 6 is not on the scale 1-5`},
		{`{"score": 0.5}`, 0, "", `is not on the scale 1-5`},
		{`{"score": "high"}`, 0, "", `the judge's score "high" is not a number`},
		{`{"score": null}`, 0, "", `the judge's score null is not a number`},
		{"PASS\nIt is fine.", 0, "", `the judge answered no JSON object with a "score": "PASS\nIt is fine."`},
		{"", 0, "", `no JSON object`},
		{strings.Repeat("{", 10000) + `{"score": 3}`, 0, "", `no JSON object`}, // past maxObjects
	} {
		n, reason, err := gradedVerdict(tt.text, oneToFive)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%.40q: %v, %q, %v; want error %q", tt.text, n, reason, err, tt.err)
			}
			continue
		}
		if err != nil || n != tt.score || reason != tt.reason {
			t.Errorf("%.40q: %v, %q, %v; want %v, %q", tt.text, n, reason, err, tt.score, tt.reason)
		}
	}
}

// FuzzJudgeVerdict: any reply reads as a verdict or as one error line
// quoting at most its first 80 characters, never as a score off the
// scale; PASS or FAIL replies alike.
func FuzzJudgeVerdict(f *testing.F) {
	for _, s := range []string{`{"score": 4, "reason": "x"}`, "```json\n{\"score\": 1}\n```", "PASS\nfine", "fail", `{"score": 1e400}`, `{"score": "-0"}`, "{{{{", `{"score": 5, "score": 9}`} {
		f.Add(s, uint8(1), uint8(5))
	}
	f.Fuzz(func(t *testing.T, text string, lo, hi uint8) {
		if _, _, err := verdict(text); err != nil && strings.ContainsAny(err.Error(), "\n\r") {
			t.Errorf("PASS/FAIL error on two lines: %q", err)
		}
		sc, err := dataset.ParseScale(fmt.Sprintf("%d-%d", lo, hi))
		if err != nil {
			return
		}
		n, _, err := gradedVerdict(text, sc)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") || len(err.Error()) > 400 {
				t.Errorf("error not one short line: %q", err)
			}
			return
		}
		if math.IsNaN(n) || !sc.Contains(n) {
			t.Errorf("%q on %v read as %v", text, sc, n)
		}
	})
}

// The PASS or FAIL judge's request is the one digest always sent: the
// keys of verdicts stored before graded judges stay valid. A graded
// request differs by its system prompt, and from scale to scale.
func TestJudgeRequestKeys(t *testing.T) {
	m := target.Target{Spec: provider.Spec{Provider: "openai", Model: "grader"}}
	q := score.JudgeRequest{Rubric: "Is fair.", Question: "What is 2+2?", Answer: "4"}
	req, k := judgeRequest(m, q)
	if req.System != judgeSystem || len(req.Messages) != 1 || req.Messages[0].Content != "Rubric:\nIs fair.\n\nQuestion:\nWhat is 2+2?\n\nAnswer:\n4" || req.MaxTokens != 200 {
		t.Errorf("PASS/FAIL request changed: %+v", req)
	}
	// The key as digest computed it before graded judges, with the system
	// prompt it sent then.
	old := key.Request{Provider: "openai", BaseURL: key.BaseURL(""), Model: "grader", MaxTokens: 200,
		System:   "You grade answers. Given a rubric, a question and an answer, reply with\nPASS or FAIL on the first line, then one sentence saying why. Judge only by the rubric.",
		Messages: []provider.Message{{Role: "user", Content: "Rubric:\nIs fair.\n\nQuestion:\nWhat is 2+2?\n\nAnswer:\n4"}}}.Key()
	if k != old {
		t.Errorf("PASS/FAIL key changed: %s, was %s", k, old)
	}
	q.Scale = &oneToFive
	graded, gk := judgeRequest(m, q)
	q.Scale = &dataset.Scale{Lo: 0, Hi: 10}
	_, gk10 := judgeRequest(m, q)
	if gk == k || gk == gk10 || !strings.Contains(graded.System, "from 1 (worst) to 5 (best)") || graded.Messages[0] != req.Messages[0] {
		t.Errorf("graded request %+v, keys %s %s", graded, gk, gk10)
	}
	retry, rk := judgeRetry(m, graded, "I think 4", &oneToFive)
	if rk == gk || len(retry.Messages) != 3 || retry.Messages[1].Content != "I think 4" || len(graded.Messages) != 1 ||
		!strings.Contains(retry.Messages[2].Content, "N a number from 1 to 5") {
		t.Errorf("retry %+v", retry)
	}
}

// grader is a judge model: replies holds what it says to the first
// request and to the retry (the request with three messages).
func grader(calls *atomic.Int64, first, retry func(q string) string) target.Target {
	return target.Target{Spec: provider.Spec{Provider: "openai", Model: "grader"}, Limits: engine.Limits{Window: time.Minute},
		Provider: provider.Func(func(_ context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			if len(req.Messages) == 3 {
				return provider.Response{Text: retry(req.Messages[0].Content)}, nil
			}
			return provider.Response{Text: first(req.Messages[0].Content)}, nil
		})}
}

const gradedSums = `{"id": "a", "prompt": "What is 1+1?", "expected": "2", "assert": [{"type": "numeric"}, {"type": "judge", "value": "Is plain.", "scale": "1-5", "metric": "bias"}]}
{"id": "b", "prompt": "What is 2+2?", "expected": "4", "assert": [{"type": "numeric"}, {"type": "judge", "value": "Is plain.", "scale": "1-5", "metric": "bias"}]}
`

func results(e *evalreport.Eval, model string) map[string]evalreport.Result {
	out := map[string]evalreport.Result{}
	for res := range e.Results {
		if res.Model == model {
			out[res.Item] = res
		}
	}
	return out
}

// A reply that cannot be read is asked about once more; a readable second
// reply is the verdict, and a rerun asks the judge nothing.
func TestGradedJudgeRetriesOnce(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	var calls atomic.Int64
	j := grader(&calls, func(string) string { return "I would say four out of five." },
		func(q string) string { return `{"score": 4, "reason": "Plain enough."}` })
	_, e := r.run(t, gradedSums, Options{Judge: &j, Scorer: &score.Scorer{}})
	if calls.Load() != 4 {
		t.Errorf("%d judge calls, want 2 per item", calls.Load())
	}
	for id, res := range results(e, "openai:careful") {
		if res.Error != "" || !res.Pass || res.Score != (1+0.75)/2 || !res.Metrics["bias"].Pass || res.Metrics["bias"].Score != 0.75 {
			t.Errorf("%s: %+v", id, res)
		}
	}
	_, e = r.run(t, gradedSums, Options{Judge: &j, Scorer: &score.Scorer{}})
	if calls.Load() != 4 || e.Models[0].Passed != 2 {
		t.Errorf("rerun: %d judge calls (want none new), %+v", calls.Load(), e.Models[0])
	}
}

// Two unreadable replies are the item's scoring error, naming the judge
// and the reply: never a score of 0. A rerun asks nothing again and fails
// alike.
func TestGradedJudgeUnreadableTwiceFails(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	var calls atomic.Int64
	j := grader(&calls, func(string) string { return `{"score": 9, "reason": "Off the chart."}` },
		func(string) string { return "Sorry, " + strings.Repeat("I cannot grade this. ", 10) })
	_, e := r.run(t, gradedSums, Options{Judge: &j, Scorer: &score.Scorer{}})
	if calls.Load() != 4 {
		t.Errorf("%d judge calls, want 2 per item", calls.Load())
	}
	want := `assert #2 judge: judge openai:grader: its reply could not be read, asked twice: the judge answered no JSON object with a "score": "Sorry, I cannot grade this. I cannot grade this. I cannot grade this. I cannot g". Try:`
	for id, res := range results(e, "openai:careful") {
		if !strings.Contains(res.Error, want) || res.Pass {
			t.Errorf("%s: error %q, want %q", id, res.Error, want)
		}
	}
	if e.Models[0].Errors != 2 {
		t.Errorf("model %+v, want 2 errors", e.Models[0])
	}
	_, _ = r.run(t, gradedSums, Options{Judge: &j, Scorer: &score.Scorer{}})
	if calls.Load() != 4 {
		t.Errorf("rerun: %d judge calls, want no new one", calls.Load())
	}
	// The PASS or FAIL judge is retried the same way.
	calls.Store(0)
	j = grader(&calls, func(string) string { return "Maybe." }, func(string) string { return "PASS\nPlain." })
	plain := strings.ReplaceAll(gradedSums, `, "scale": "1-5"`, "")
	_, e = r.run(t, plain, Options{Judge: &j, Scorer: &score.Scorer{}})
	if calls.Load() != 4 || e.Models[0].Passed != 2 {
		t.Errorf("PASS/FAIL retry: %d calls, %+v", calls.Load(), e.Models[0])
	}
}

// The offline judge answers graded requests, deterministically, and a dry
// run counts graded verdicts as it counts the others.
func TestOfflineGradedJudge(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	j := target.Target{Spec: provider.Spec{Provider: provider.Offline, Model: "offline"}, Provider: offline.New(r.tok.Count), Limits: engine.Limits{Window: time.Minute}}
	data := `{"id": "a", "prompt": "What is 1+1?", "expected": "2", "assert": [{"type": "judge", "value": "Says 2, no trailing words", "scale": "0-4", "metric": "bias"}]}
{"id": "b", "prompt": "What is 1+1?", "expected": "2", "assert": [{"type": "judge", "value": "Says 2, no trailing words"}]}
`
	out, _ := r.run(t, data, Options{Judge: &j, DryRun: true})
	if len(out.Estimate) != 2 || !out.Estimate[1].Judge || out.Estimate[1].Requests != 2 {
		t.Errorf("dry run: %+v, want 2 verdicts estimated", out.Estimate)
	}
	_, e := r.run(t, data, Options{Judge: &j})
	res := results(e, "openai:careful")
	// "2" but not "says", "trailing" or "words": 1 of 4 words, 1 on 0-4.
	if a := res["a"]; a.Error != "" || a.Score != 0.25 || a.Pass || len(a.Reasons) != 1 || !strings.Contains(a.Reasons[0], "offline judge: 1 of 4 rubric words are in the answer") {
		t.Errorf("graded: %+v", a)
	}
	if b := res["b"]; b.Error != "" || b.Pass || b.Score != 0 {
		t.Errorf("PASS/FAIL: %+v", b)
	}
}

// A g-eval assertion needs a judge: the scan before a run finds it.
func TestFirstJudgeItemFindsGEval(t *testing.T) {
	data := `{"prompt": "Hi", "expected": "Hello"}` + "\n" + `{"id": "g", "prompt": "Hi", "assert": [{"type": "g-eval", "value": "Is warm."}]}` + "\n"
	for _, limit := range []int{0, 5} {
		line, id, err := FirstJudgeItem(strings.NewReader(data), dataset.Options{Name: "d.jsonl"}, limit)
		if err != nil || line != 2 || id != "g" {
			t.Errorf("limit %d: line %d, id %q, %v; want line 2, g", limit, line, id, err)
		}
	}
}
