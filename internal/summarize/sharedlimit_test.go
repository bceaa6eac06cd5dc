package summarize

import (
	"context"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
)

// TestRunsWriteTheLearnedLimitWhereOtherProcessesReadIt: the limit a
// provider's headers tell a run is written to the store under the name of
// the account's limit (target.Target.LimitName, which cmd gives every
// model it connects), where every other process on the account reads it.
// Eval's test of the same name checks its models and its judge.
func TestRunsWriteTheLearnedLimitWhereOtherProcessesReadIt(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Minute, RPM: 777, SendLimitHeaders: true})
	h := newTestRun(t)
	opts := h.options("openai:summarizer", gittest.NewFixture(t).Dir)
	onWire(t, srv, &opts, "sk-shared-limit-test")
	opts.Target.LimitName = sharedlimit.Name("openai", srv.OpenAIBaseURL(), "summarizer", "sk-shared-limit-test")
	h.mustRun(opts)
	st, err := h.store().TakeRate(context.Background(), opts.Target.LimitName, store.RateCharge{}, store.RateCharge{})
	if err != nil || st.Requests != 777 {
		t.Errorf("after the run the store holds a limit of %d requests for the model (%v), want the header's 777", st.Requests, err)
	}
}
