package eval

import (
	"context"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/target"
)

// TestRunsWriteTheLearnedLimitWhereOtherProcessesReadIt: the limit a
// provider's headers tell a run is written to the store under the name of
// the account's limit (target.Target.LimitName, which cmd gives every
// model it connects), where every other process on the account reads it:
// an eval's models and its judge both pace through it. Summarize's test
// of the same name checks its model.
func TestRunsWriteTheLearnedLimitWhereOtherProcessesReadIt(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Minute, RPM: 777, SendLimitHeaders: true,
		Answer: func(r fakeprovider.Received) string {
			if r.Model == "judge-model" {
				return "PASS\nIt greets."
			}
			return "Hi."
		}})
	client := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-shared-limit-test"})
	on := func(model string) target.Target {
		return target.Target{Spec: provider.Spec{Provider: "openai", Model: model}, BaseURL: srv.OpenAIBaseURL(), Provider: client,
			Limits: engine.Limits{Window: time.Minute}, LimitName: sharedlimit.Name("openai", srv.OpenAIBaseURL(), model, "sk-shared-limit-test")}
	}
	r := newTestRun(t)
	r.models = []target.Target{on("strong")}
	judge := on("judge-model")
	r.run(t, `{"id": "j", "prompt": "Say hi", "assert": [{"type": "llm-rubric", "value": "greets"}]}`+"\n", Options{Judge: &judge, Scorer: &score.Scorer{}})
	for _, tg := range []target.Target{r.models[0], judge} {
		st, err := r.st.TakeRate(context.Background(), tg.LimitName, store.RateCharge{}, store.RateCharge{})
		if err != nil || st.Requests != 777 {
			t.Errorf("after the run the store holds a limit of %d requests for %s (%v), want the header's 777", st.Requests, tg.Spec, err)
		}
	}
}
