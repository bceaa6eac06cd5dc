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

// TestJudgesSeveralAnswersAtOnce: a judge's verdicts are asked for beside
// the models' answers, not one at a time in the loop that stores them: a
// slow judge at a concurrency of 4 grades several answers at once, every
// row is stored, and the run's record keeps what the judge was paid. A
// rerun pays the judge nothing.
func TestJudgesSeveralAnswersAtOnce(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	var calls, inFlight, most atomic.Int64
	j := target.Target{Spec: provider.Spec{Provider: "openai", Model: "grader"}, Limits: engine.Limits{Window: time.Minute}, PriceUnknown: true,
		Provider: provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
			calls.Add(1)
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(50 * time.Millisecond)
			return provider.Response{Text: "PASS\nA greeting."}, nil
		})}
	var data strings.Builder
	for i := range 16 {
		fmt.Fprintf(&data, `{"prompt": "Say good morning, %d", "assert": [{"type": "llm-rubric", "value": "Is a greeting"}]}`+"\n", i)
	}
	out, e := r.run(t, data.String(), Options{Judge: &j, Concurrency: 4})
	if e.Models[0].Passed != 16 || out.JudgeVerdicts != 16 || calls.Load() != 16 {
		t.Errorf("%+v, %d verdicts in the outcome, %d judge calls; want 16 passed, verdicts and calls", e.Models[0], out.JudgeVerdicts, calls.Load())
	}
	if most.Load() < 2 {
		t.Errorf("at most %d judge call in flight at once: the verdicts were asked for one at a time", most.Load())
	}
	run, _, err := r.st.Run(context.Background(), out.RunID)
	if err != nil || run.Judge == nil || run.Judge.Model != "openai:grader" || run.Judge.Verdicts != 16 || run.Judge.CostUSD != nil {
		t.Errorf("the run's record of its judge: %+v, %v; want 16 verdicts of openai:grader, cost unknown", run.Judge, err)
	}
	out, _ = r.run(t, data.String(), Options{Judge: &j, Concurrency: 4})
	if out.JudgeVerdicts != 0 || calls.Load() != 16 {
		t.Errorf("rerun: %d verdicts paid, %d judge calls in all; want none new", out.JudgeVerdicts, calls.Load())
	}
}

// TestDryRunCountsTheJudge: a dry run counts the judge's verdicts too, one
// per judged answer with the judge's output bound, none once the answers
// and their verdicts are stored.
func TestDryRunCountsTheJudge(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	var calls atomic.Int64
	j := grader(&calls, func(string) string { return "PASS\nPlain." }, func(string) string { return "PASS\nPlain." })
	data := sums(2) + `{"id": "j1", "prompt": "What is 5+5?", "assert": [{"type": "llm-rubric", "value": "Is plain"}]}` + "\n" +
		`{"id": "j2", "prompt": "What is 6+6?", "assert": [{"type": "llm-rubric", "value": "Is plain"}]}` + "\n"
	out, _ := r.run(t, data, Options{Judge: &j, DryRun: true, Params: Params{MaxTokens: 64}})
	if len(out.Estimate) != 2 {
		t.Fatalf("estimate %+v, want the model's and the judge's", out.Estimate)
	}
	m, g := out.Estimate[0], out.Estimate[1]
	if m.Requests != 4 || !g.Judge || g.Model != "openai:grader" || g.Requests != 2 || g.Cached != 0 || g.MaxOutputTokens != 2*200 || g.InputTokens <= 0 {
		t.Errorf("before the run: model %+v, judge %+v; want 4 answers and 2 verdicts of at most 200 tokens each", m, g)
	}
	if calls.Load()+r.calls[0].Load() != 0 {
		t.Error("a dry run asked a model or the judge")
	}
	r.run(t, data, Options{Judge: &j, Params: Params{MaxTokens: 64}})
	out, _ = r.run(t, data, Options{Judge: &j, DryRun: true, Params: Params{MaxTokens: 64}})
	if m, g := out.Estimate[0], out.Estimate[1]; m.Requests != 0 || m.Cached != 4 || g.Requests != 0 || g.Cached != 2 {
		t.Errorf("after the run: model %+v, judge %+v; want everything cached", m, g)
	}
}

// TestJudgeAssertionWithoutAJudgeSaysGiveOne: a dataset that could not be
// looked through for judge assertions before the run (standard input)
// runs without a judge; each result that needed one ends in an error that
// names the item and says to give one (cmd adds the Try to its last line),
// since the same run again would fail alike.
func TestJudgeAssertionWithoutAJudgeSaysGiveOne(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	_, e := r.run(t, sums(1)+`{"id": "polite", "prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}`+"\n", Options{})
	res := results(e, "openai:careful")
	if p := res["polite"]; p.Pass || !strings.Contains(p.Error, `item "polite" (line 2): assert #1 judge: judge assertion needs --judge MODEL`) {
		t.Errorf("the judged item: %+v, want an error saying to give --judge", p)
	}
	if q := res["q0"]; !q.Pass || q.Error != "" {
		t.Errorf("the item needing no judge: %+v", q)
	}
}
