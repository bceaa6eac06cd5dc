package cmd

import (
	"context"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// The limit a provider's headers tell one run is written to the database,
// under the account's name (provider, base URL, model, the key's hash),
// where every other process on the account reads it: eval's models, its
// judge, and summarize all pace through it.
func TestRunsWriteTheLearnedLimitWhereOtherProcessesReadIt(t *testing.T) {
	const apiKey = "sk-shared-limit-test"
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Minute, RPM: 777, SendLimitHeaders: true,
		Answer: func(r fakeprovider.Received) string {
			if r.Model == "judge-model" {
				return "PASS\nIt greets."
			}
			return "Hi."
		}})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = apiKey
	learned := func(model string) int {
		t.Helper()
		s, err := sqlite.Open(context.Background(), h.db)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		st, err := s.TakeRate(context.Background(), sharedlimit.Name("openai", srv.OpenAIBaseURL()+"/", model, apiKey), store.RateCharge{}, store.RateCharge{})
		if err != nil {
			t.Fatal(err)
		}
		return st.Requests
	}

	res := h.run(context.Background(), "eval", sums(t), "--models", "openai:strong", "--limit", "2", "--base-url", srv.OpenAIBaseURL(), "-f", "json")
	if res.code != 0 {
		t.Fatalf("eval: exit %d: %s", res.code, res.errOut)
	}
	if n := learned("strong"); n != 777 {
		t.Errorf("after eval the database holds a limit of %d requests for the model, want the header's 777", n)
	}

	h.env["OPENAI_BASE_URL"] = srv.OpenAIBaseURL()
	judged := writeDataset(t, `{"id": "j", "prompt": "Say hi", "assert": [{"type": "llm-rubric", "value": "greets"}]}`)
	if res := h.run(context.Background(), "eval", judged, "--models", "offline", "--judge", "openai:judge-model", "-f", "json"); res.code != 0 {
		t.Fatalf("eval with a judge: exit %d: %s", res.code, res.errOut)
	}
	if n := learned("judge-model"); n != 777 {
		t.Errorf("after a judged eval the database holds a limit of %d requests for the judge, want 777", n)
	}

	f := fixture(t)
	if res := h.run(context.Background(), "summarize", f.Dir, "--model", "openai:summarizer", "-f", "jsonl"); res.code != 0 {
		t.Fatalf("summarize: exit %d: %s", res.code, res.errOut)
	}
	if n := learned("summarizer"); n != 777 {
		t.Errorf("after summarize the database holds a limit of %d requests for the model, want 777", n)
	}
}
