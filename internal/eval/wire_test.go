package eval

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/target"
)

// TestJudgeVerdictsGoOutAsASecondBatch: through the batch API on the
// wire, the judge's verdicts wait for the answers and go out together in
// a batch of their own: 20 answers, then 20 verdicts, nothing sent one by
// one, every item graded.
func TestJudgeVerdictsGoOutAsASecondBatch(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Answer: func(r fakeprovider.Received) string {
		if strings.Contains(r.System, "You grade answers") {
			return "PASS\nit answers the question"
		}
		return "an answer"
	}})
	client := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test-batch"})
	on := func(model string) target.Target {
		return target.Target{Spec: provider.Spec{Provider: "openai", Model: model}, BaseURL: srv.OpenAIBaseURL(), Provider: client, Batcher: client,
			Limits: engine.Limits{Window: time.Minute}}
	}
	r := newTestRun(t)
	r.models = []target.Target{on("gpt-4o-mini")}
	judge := on("gpt-4o")
	var data strings.Builder
	for i := range 20 {
		fmt.Fprintf(&data, `{"id": "g%d", "prompt": "Say good morning, %d", "assert": [{"type": "llm-rubric", "value": "Is a greeting"}]}`+"\n", i, i)
	}
	_, e := r.run(t, data.String(), Options{Judge: &judge, Scorer: &score.Scorer{}, Batch: batchrun.Mode{On: true, Poll: 20 * time.Millisecond}})
	if m := e.Models[0]; m.Items != 20 || m.Passed != 20 {
		t.Errorf("%+v, want 20 items graded and passed", m)
	}
	if st := srv.Stats(); st.BatchesCreated != 2 || st.BatchItems != 40 || st.Succeeded != 0 {
		t.Errorf("%d batches of %d items, %d synchronous answers; want 20 answers, then 20 verdicts", st.BatchesCreated, st.BatchItems, st.Succeeded)
	}
}

// batchItems is n items whose answers can only error, never fail: the
// fake's answer includes nothing expected, but no assertion is checked
// against an error.
func batchItems(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": "q%d", "prompt": "q%d: what is %d + 1?", "expected": "%d", "assert": [{"type": "includes"}]}`+"\n", i, i, i, i+1)
	}
	return b.String()
}

// TestBatchAPIAnswersEveryItemOnce: a 200-item dataset goes through each
// provider's batch endpoints on the wire with a twentieth of the items
// errored the first time: every item ends with its answer, the errored
// ones from a later batch, none sent one by one, and a rerun makes no
// batch call at all (the check that the batch API is there is cmd's).
func TestBatchAPIAnswersEveryItemOnce(t *testing.T) {
	for _, c := range []struct {
		name   string
		client func(*fakeprovider.Server) (provider.Provider, provider.Batcher, string)
	}{
		{"openai", func(srv *fakeprovider.Server) (provider.Provider, provider.Batcher, string) {
			c := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test-batch"})
			return c, c, srv.OpenAIBaseURL()
		}},
		{"anthropic", func(srv *fakeprovider.Server) (provider.Provider, provider.Batcher, string) {
			c := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-ant-test-batch"})
			return c, c, srv.AnthropicBaseURL()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// One item in twenty (the 1st, 21st, ...) errors the first time
			// it is sent: custom IDs end in the item's number in the run, and
			// an item sent again gets a later one.
			errored := func(customID string) bool {
				n, _ := strconv.Atoi(customID[strings.LastIndexByte(customID, '-')+1:])
				return n <= 200 && n%20 == 1
			}
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Errored: errored, Processing: 50 * time.Millisecond}})
			p, b, base := c.client(srv)
			r := newTestRun(t)
			r.models = []target.Target{{Spec: provider.Spec{Provider: c.name, Model: "m"}, BaseURL: base, Provider: p, Batcher: b, Limits: engine.Limits{Window: time.Minute}}}
			mode := batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
			_, e := r.run(t, batchItems(200), Options{Batch: mode})
			for res := range e.Results {
				if res.Error != "" {
					t.Errorf("item %s: %s", res.Item, res.Error)
				}
			}
			st := srv.Stats()
			if e.Models[0].Items != 200 || st.Succeeded != 0 || st.BatchItemsAnswered != st.BatchItems || st.BatchItems <= 200 {
				t.Fatalf("%d results; fake: %d synchronous answers, %d items, %d answered", e.Models[0].Items, st.Succeeded, st.BatchItems, st.BatchItemsAnswered)
			}
			if _, e = r.run(t, batchItems(200), Options{Batch: mode}); e.Models[0].Cached != 200 {
				t.Errorf("rerun: %+v, want every answer cached", e.Models[0])
			}
			if n := srv.Stats().BatchCalls - st.BatchCalls; n != 0 {
				t.Errorf("a rerun with everything stored made %d batch calls, want none", n)
			}
		})
	}
}

// TestRefusedAndCutAnswersAreKept: on each provider's wire format, a
// refused and a cut answer each show as such in the report and the stored
// result; the refusal's text is kept, a refusal assertion scores it, and
// a rerun reads the same from the store, paying nothing.
func TestRefusedAndCutAnswersAreKept(t *testing.T) {
	for _, c := range []struct {
		name   string
		client func(*fakeprovider.Server) (provider.Provider, string)
	}{
		{"openai", func(srv *fakeprovider.Server) (provider.Provider, string) {
			return openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test"}), srv.OpenAIBaseURL()
		}},
		{"anthropic", func(srv *fakeprovider.Server) (provider.Provider, string) {
			return anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-ant-test"}), srv.AnthropicBaseURL()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(fakeprovider.Received) string {
				return strings.Repeat("word ", 50)
			}})
			p, base := c.client(srv)
			r := newTestRun(t)
			r.models = []target.Target{{Spec: provider.Spec{Provider: c.name, Model: "m"}, BaseURL: base, Provider: p, Limits: engine.Limits{Window: time.Minute}}}
			data := `{"id": "refused", "prompt": "` + fakeprovider.RefuseTrigger + `", "assert": [{"type": "refusal"}]}` + "\n" +
				`{"id": "long", "prompt": "Write at length.", "assert": [{"type": "icontains", "value": "word"}]}` + "\n"
			for run := range 2 {
				_, e := r.run(t, data, Options{Params: Params{MaxTokens: 5}})
				if m := e.Models[0]; m.Refused != 1 || m.Cut != 1 || m.Passed != 2 {
					t.Errorf("run %d: model %+v, want 1 refused, 1 cut, both passed", run, m)
				}
				for res := range e.Results {
					want := map[string]string{"refused": "refusal", "long": "length"}[res.Item]
					if res.Finish != want || !res.Pass {
						t.Errorf("run %d, %s: finish %q pass %v, want %q", run, res.Item, res.Finish, res.Pass, want)
					}
					if res.Item == "refused" && res.Answer != fakeprovider.RefusalText {
						t.Errorf("run %d: refusal's text %q, want %q", run, res.Answer, fakeprovider.RefusalText)
					}
				}
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests over a run and its rerun, want 2", n)
			}
		})
	}
}

// TestEachModelIsSentOnlyWhatItTakes: with a temperature of 0 and a seed,
// an eval over five of today's models (two that take both but for the seed
// at Anthropic, three that refuse the temperature: OpenAI's reasoning
// models and a Claude model after Opus 4.6) sends no request the real APIs
// refuse, the fake refusing what they refuse, synchronously and through
// the batch APIs; the models that take the temperature get it, and the
// run records per model what it went without.
func TestEachModelIsSentOnlyWhatItTakes(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch %v", batch), func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, BatchAPI: fakeprovider.BatchAPIConfig{Processing: 20 * time.Millisecond}})
			oa := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test-rules"})
			an := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-ant-test-rules"})
			r := newTestRun(t)
			r.models = nil
			for _, s := range []string{"openai:gpt-4o-mini", "openai:gpt-5-mini", "openai:o3-mini", "anthropic:claude-haiku-4-5", "anthropic:claude-opus-4-7"} {
				spec, err := provider.ParseSpec(s)
				if err != nil {
					t.Fatal(err)
				}
				m := target.Target{Spec: spec, BaseURL: srv.OpenAIBaseURL(), Provider: oa, Batcher: oa, Rules: provider.ProviderRules(spec), Limits: engine.Limits{Window: time.Minute}}
				if spec.Provider == "anthropic" {
					m.BaseURL, m.Provider, m.Batcher = srv.AnthropicBaseURL(), an, an
				}
				r.models = append(r.models, m)
			}
			zero, one := 0.0, 1
			o := Options{Params: Params{Temperature: &zero, Seed: &one}}
			if batch {
				o.Batch = batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
			}
			data := `{"id": "a", "prompt": "Say ok.", "expected": "ok", "assert": [{"type": "icontains"}]}` + "\n" +
				`{"id": "b", "prompt": "Say yes.", "expected": "yes", "assert": [{"type": "icontains"}]}` + "\n"
			out, e := r.run(t, data, o)
			for _, m := range e.Models {
				if m.Items != 2 || m.Errors != 0 {
					t.Errorf("%s: %d items, %d errors (a refused request is an error)", m.Model, m.Items, m.Errors)
				}
			}
			run, _, err := r.st.Run(context.Background(), out.RunID)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{"openai:gpt-5-mini": {"--temperature"}, "openai:o3-mini": {"--temperature"},
				"anthropic:claude-haiku-4-5": {"--seed"}, "anthropic:claude-opus-4-7": {"--temperature", "--seed"}}
			if got := fmt.Sprint(run.Params["not_sent"]); got != fmt.Sprint(want) {
				t.Errorf("the run records %s as not sent, want %v", got, want)
			}
			if batch {
				return // the batch fake checked every line's body as the sync path does
			}
			for _, q := range srv.Requests() {
				if q.Status != 200 {
					t.Errorf("%s answered %d: %s", q.Model, q.Status, q.Body)
				}
				takes := q.Model == "gpt-4o-mini" || q.Model == "claude-haiku-4-5"
				if got := q.Temperature != nil && *q.Temperature == 0; got != takes {
					t.Errorf("%s sent temperature %v", q.Model, q.Temperature)
				}
			}
		})
	}
}

// TestSyncRetriesAreBilledAtTheFullPrice: with SyncRetry, the items a
// batch left errored are sent again one by one, and those answers cost the
// model's synchronous price, not the batch's half: 38 results at the batch
// price, the 2 retried at the full one.
func TestSyncRetriesAreBilledAtTheFullPrice(t *testing.T) {
	errored := func(customID string) bool {
		n, _ := strconv.Atoi(customID[strings.LastIndexByte(customID, '-')+1:])
		return n <= 40 && n%20 == 1
	}
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Errored: errored}})
	client := openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "sk-test-batch"})
	r := newTestRun(t)
	r.models = []target.Target{{Spec: provider.Spec{Provider: "openai", Model: "gpt-4o-mini"}, BaseURL: srv.OpenAIBaseURL(), Provider: client, Batcher: client,
		Price: models.Price{InputPerM: 500, OutputPerM: 500}, SyncPrice: models.Price{InputPerM: 1000, OutputPerM: 1000}, Limits: engine.Limits{Window: time.Minute}}}
	_, e := r.run(t, batchItems(40), Options{Batch: batchrun.Mode{On: true, Poll: 20 * time.Millisecond, SyncRetry: true}})
	perToken := map[float64]int{}
	for res := range e.Results {
		perToken[math.Round(res.CostUSD/float64(res.InputTokens+res.OutputTokens)*1e6)]++
	}
	if perToken[500] != 38 || perToken[1000] != 2 || srv.Stats().Succeeded != 2 {
		t.Errorf("dollars per million tokens -> results: %v, %d sent at once; want 38 at 500 (the batch), 2 at 1000", perToken, srv.Stats().Succeeded)
	}
}

// TestBatchAPIWaitsOutAFullQueue: the account's batch queue holds 20
// requests in processing (Anthropic's limit) of a 60-item dataset. The run
// sends what fits, then the rest as batches end: every item is answered
// once, and the refusals are not fatal.
func TestBatchAPIWaitsOutAFullQueue(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 50 * time.Millisecond, QueueRequests: 20}})
	client := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "sk-ant-test-batch"})
	r := newTestRun(t)
	r.models = []target.Target{{Spec: provider.Spec{Provider: "anthropic", Model: "claude-haiku-4-5"}, BaseURL: srv.AnthropicBaseURL(), Provider: client, Batcher: client,
		Limits: engine.Limits{Window: time.Minute}}}
	_, e := r.run(t, batchItems(60), Options{Batch: batchrun.Mode{On: true, Poll: 20 * time.Millisecond}})
	st := srv.Stats()
	if e.Models[0].Items != 60 || e.Models[0].Errors != 0 || st.BatchesRefused == 0 || st.BatchItems != 60 || st.BatchItemsAnswered != 60 {
		t.Errorf("%+v; fake: %d refused, %d items, %d answered; want 60 items each answered once, some batches refused", e.Models[0], st.BatchesRefused, st.BatchItems, st.BatchItemsAnswered)
	}
}
