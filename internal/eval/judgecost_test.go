package eval

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/target"
)

// TestJudgesCostIsInEveryReport: the verdicts' cost, in no model's row,
// is recorded with the run, so that its report read back from the store
// has the judge's own line in every format, cost unknown for a judge
// digest has no price for. A rerun, served from the store, paid the
// judge nothing, and its report says so.
func TestJudgesCostIsInEveryReport(t *testing.T) {
	r := newTestRun(t)
	r.models = r.models[:1]
	j := target.Target{Spec: provider.Spec{Provider: "openai", Model: "grader"}, Limits: engine.Limits{Window: time.Minute}, PriceUnknown: true,
		Provider: provider.Func(func(context.Context, provider.Request) (provider.Response, error) {
			return provider.Response{Text: "PASS\nA greeting."}, nil
		})}
	var data strings.Builder
	for i := range 4 {
		fmt.Fprintf(&data, `{"prompt": "Say good morning, %d", "assert": [{"type": "llm-rubric", "value": "Is a greeting"}]}`+"\n", i)
	}
	for _, verdicts := range []int{4, 0} { // the run, then its rerun
		_, e := r.run(t, data.String(), Options{Judge: &j})
		if e.Judge == nil || e.Judge.Model != "openai:grader" || e.Judge.Verdicts != verdicts || e.Judge.CostUSD != nil {
			t.Fatalf("the report's judge %+v, want %d verdicts of openai:grader, cost unknown", e.Judge, verdicts)
		}
		line := fmt.Sprintf("Judge openai:grader: %d verdicts paid for, cost unknown (no price for it)", verdicts)
		for format, want := range map[string]string{"markdown": line + ".", "table": line, "json": `"verdicts": ` + fmt.Sprint(verdicts), "html": line} {
			var b bytes.Buffer
			write := evalreport.WriteHTML
			if format != "html" {
				w, err := evalreport.ForEvalFormat(format)
				if err != nil {
					t.Fatal(err)
				}
				write = w.WriteEval
			}
			if err := write(&b, e); err != nil || !strings.Contains(b.String(), want) {
				t.Errorf("%s report (%v): no %q in:\n%s", format, err, want, b.String())
			}
		}
	}
}
