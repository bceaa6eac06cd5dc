package eval

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/target"
)

// oracle answers the example datasets under testdata/eval right, and
// grades as a judge; it counts its calls as the answerer and as the judge.
func oracle(model string, calls *atomic.Int64) target.Target {
	answers := []struct{ has, say string }{
		{"Rubric:", "PASS\nIt meets the rubric."},
		{"capital of France", "Paris"}, {"capital of Japan", "Tokyo"}, {"necessary", "NECESSARY"},
		{"Red Planet", "B"}, {"formula of water", "(B)"}, {"is prime", "The answer is C."},
		{"JSON object with keys", "```json\n{\"name\": \"Ada\", \"age\": 30}\n```"}, {"first three primes", "[2,3,5]"},
		{"Bonjour", "Hello everyone"}, {"Muchas gracias", "Thank you very much"}, {"Guten Morgen", "Good morning"}, {"Buona notte", "Good night"},
	}
	return target.Target{Spec: provider.Spec{Provider: "openai", Model: model}, Limits: engine.Limits{Window: time.Minute},
		Provider: provider.Func(func(_ context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			q := req.Messages[len(req.Messages)-1].Content
			for _, a := range answers {
				if strings.Contains(q, a.has) {
					return provider.Response{Text: a.say, Usage: provider.Usage{InputTokens: 5, OutputTokens: 2}}, nil
				}
			}
			return provider.Response{Text: "I do not know."}, nil
		})}
}

// TestExampleDatasetsPassWhenAnsweredRight runs the example datasets
// (openai/evals, inspect multiple choice, digest's own with JSON
// assertions, promptfoo with a template and a judged rubric) against a
// model that knows every answer: each item passes, so each format's
// expected answers and assertions are scored as meant. The rubric reaches
// the judge, whose verdicts are stored: a rerun asks nobody anything.
func TestExampleDatasetsPassWhenAnsweredRight(t *testing.T) {
	tmpl, err := os.ReadFile("../../testdata/eval/prompt.txt")
	if err != nil {
		t.Fatal(err)
	}
	var answers, verdicts atomic.Int64
	judge := oracle("grader", &verdicts)
	for _, tt := range []struct {
		file  string
		items int
		o     Options
	}{
		{"mixed.jsonl", 8, Options{}},
		{"promptfoo.jsonl", 4, Options{Read: dataset.Options{Template: string(tmpl)}, Judge: &judge}},
	} {
		data, err := os.ReadFile("../../testdata/eval/" + tt.file)
		if err != nil {
			t.Fatal(err)
		}
		r := newTestRun(t)
		r.models = []target.Target{oracle("oracle", &answers)}
		_, e := r.run(t, string(data), tt.o)
		res := results(e, "openai:oracle")
		if len(res) != tt.items || e.Models[0].Passed != tt.items {
			t.Errorf("%s: %d items, %d passed; want %d each", tt.file, len(res), e.Models[0].Passed, tt.items)
		}
		for id, got := range res {
			if !got.Pass {
				t.Errorf("%s: item %s failed: %v %s", tt.file, id, got.Reasons, got.Error)
			}
		}
		if tt.o.Judge == nil {
			continue
		}
		if verdicts.Load() == 0 {
			t.Errorf("%s: the llm-rubric assertion never reached the judge", tt.file)
		}
		before := answers.Load() + verdicts.Load()
		if r.run(t, string(data), tt.o); answers.Load()+verdicts.Load() != before {
			t.Errorf("%s: a rerun with a judge made %d calls, want none", tt.file, answers.Load()+verdicts.Load()-before)
		}
	}
}
