package summarize

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// onWire points opts at model (openai:..., openai-responses:... or
// anthropic:...) served by srv in its wire format, as `digest summarize`
// builds the target: the client the model's API takes (the Responses
// client for a Responses-only model), its batch API, its request rules,
// and a minute's window for its limits.
func onWire(t *testing.T, srv *fakeprovider.Server, opts *Options, key string) {
	t.Helper()
	spec := opts.Target.Spec
	rules := provider.ProviderRules(spec)
	var (
		p    provider.Provider
		b    provider.Batcher
		base string
	)
	switch spec.Provider {
	case "anthropic":
		c := anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: key})
		p, b, base = c, c, srv.AnthropicBaseURL()
	case "openai", openai.ResponsesProvider:
		o := openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: key}
		if spec.Provider == openai.ResponsesProvider || rules.ResponsesOnly {
			c := openai.NewResponses(o)
			p, b = c, c
		} else {
			c := openai.New(o)
			p, b = c, c
		}
		base = srv.OpenAIBaseURL()
	default:
		t.Fatalf("no wire format for %s", spec)
	}
	opts.Target.Provider, opts.Target.Batcher, opts.Target.BaseURL, opts.Target.Rules = p, b, base, rules
	opts.Target.Limits = engine.Limits{Window: time.Minute}
}

// historyRepo is a repository of n commits, each changing one of 7 files.
func historyRepo(t *testing.T, n int) *gittest.Repo {
	r := gittest.New(t)
	for i := range n {
		r.Write(fmt.Sprintf("f%d.txt", i%7), fmt.Sprintf("line %d\n", i)).Commit(fmt.Sprintf("Change %d", i))
	}
	return r
}

// TestSummarizeStructuredAnswersNeedNoSecondAsking: a model held to a JSON
// schema never writes a malformed answer. Against a fake that garbles one
// in three answers asked for without a schema, a history summarized by a
// model whose API takes none pays for the garbled batches again commit by
// commit, and one held to the schema pays for each batch once.
func TestSummarizeStructuredAnswersNeedNoSecondAsking(t *testing.T) {
	const commits, batch = 40, 4
	repo := historyRepo(t, commits)
	run := func(model string) (requests int, res *Output) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Sloppy: 3})
		h := newTestRun(t)
		opts := h.options(model, repo.Dir)
		onWire(t, srv, &opts, "sk-test-structured")
		// A long window: every batch fills, however loaded the machine.
		opts.BatchSize, opts.BatchWindow, opts.Concurrency = batch, 5*time.Second, 1
		res = h.mustRun(opts)
		return len(srv.Requests()), res
	}
	// qwen2.5 is not an OpenAI model: asked without a schema, parsed as it comes.
	freeRequests, free := run("openai:qwen2.5")
	heldRequests, held := run("openai:gpt-4o-mini")
	t.Logf("%d commits in batches of %d: without a schema %d requests; held to one %d", commits, batch, freeRequests, heldRequests)
	if heldRequests != commits/batch || held.Changelog.Stats.Summarized != commits {
		t.Errorf("held to the schema: %d requests, %d summarized; want %d, all %d", heldRequests, held.Changelog.Stats.Summarized, commits/batch, commits)
	}
	// Some single answers are garbled too: those commits fail; the point
	// is the requests paid again.
	if freeRequests <= commits/batch {
		t.Errorf("without a schema: %d requests (%d summarized); the garbled answers should have been asked again", freeRequests, free.Changelog.Stats.Summarized)
	}
}

// TestSummarizeThroughTheResponsesAPI: openai:gpt-5-pro is answered through
// /v1/responses, which the chat endpoint would refuse; openai-responses:MODEL
// sends any model there. Every commit gets its own summary, and every
// request is a Responses body with the key.
func TestSummarizeThroughTheResponsesAPI(t *testing.T) {
	const key = "sk-proj-digest-responses-key-5e4d3c2b1a"
	f := gittest.NewFixture(t)
	for _, model := range []string{"openai:gpt-5-pro", "openai-responses:gpt-4o-mini"} {
		t.Run(model, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: key, SendLimitHeaders: true, RPM: 1000})
			h := newTestRun(t)
			opts := h.options(model, f.Dir)
			onWire(t, srv, &opts, key)
			opts.BatchSize = 3
			res := h.mustRun(opts)
			if len(res.Changelog.Entries) != 8 {
				t.Fatalf("%d entries, want 8", len(res.Changelog.Entries))
			}
			for _, e := range res.Changelog.Entries {
				if want := "Summary of " + e.Commit[:12] + ": " + e.Subject; e.Summary != want || e.Model != model {
					t.Errorf("commit %s: %q by %s, want %q", e.Commit[:7], e.Summary, e.Model, want)
				}
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the fake")
			}
			for _, r := range reqs {
				if r.Path != fakeprovider.ResponsesPath || r.Status != 200 || r.Header.Get("Authorization") != "Bearer "+key {
					t.Errorf("%s %s: %d", r.Path, r.Model, r.Status)
				}
				if strings.Contains(string(r.Body), `"messages"`) || !strings.Contains(string(r.Body), `"store":false`) {
					t.Errorf("not a Responses body: %s", r.Body)
				}
			}
			if strings.Contains(h.logs.String(), key) {
				t.Error("the API key was logged")
			}
		})
	}
}

// TestBatchAPIThroughTheResponsesAPI: the batch API with a Responses-only
// model sends /v1/responses batches, and nothing synchronously.
func TestBatchAPIThroughTheResponsesAPI(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 20 * time.Millisecond}})
	h := newTestRun(t)
	opts := h.options("openai:gpt-5-pro", historyRepo(t, 12).Dir)
	onWire(t, srv, &opts, "sk-test-batch")
	opts.Batch = batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
	res := h.mustRun(opts)
	for _, e := range res.Changelog.Entries {
		if !strings.HasPrefix(e.Summary, "Summary of ") {
			t.Errorf("commit %s: %q", e.Commit, e.Summary)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.OpenAIBaseURL()+"/batches?limit=100", nil)
	req.Header.Set("Authorization", "Bearer sk-test-batch")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			Endpoint string `json:"endpoint"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) == 0 {
		t.Fatalf("batches: %+v, %v", list, err)
	}
	for _, b := range list.Data {
		if b.Endpoint != "/v1/responses" {
			t.Errorf("a batch for %q", b.Endpoint)
		}
	}
	st := srv.Stats()
	if len(res.Changelog.Entries) != 12 || st.Succeeded != 0 || st.BatchesCreated < 1 || st.BatchItemsAnswered != st.BatchItems {
		t.Errorf("%d entries; fake: %d synchronous, %d batches, %d items, %d answered", len(res.Changelog.Entries), st.Succeeded, st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered)
	}
}

// firstTimeErrored errors one item in twenty (the 1st, 21st, ...) the
// first time it is sent: custom IDs end in the item's number in the run,
// and an item sent again gets a later one.
func firstTimeErrored(limit int) func(string) bool {
	return func(customID string) bool {
		n, _ := strconv.Atoi(customID[strings.LastIndexByte(customID, '-')+1:])
		return n <= limit && n%20 == 1
	}
}

// TestBatchAPIAnswersEverythingOnce: a 120-commit history goes through
// each provider's batch endpoints with a twentieth of the items errored:
// every commit ends with its answer, the errored ones from a later batch,
// and no item is answered twice; a rerun sends nothing. A dataset's items
// do the same in eval's TestBatchAPIAnswersEveryItemOnce.
func TestBatchAPIAnswersEverythingOnce(t *testing.T) {
	repo := historyRepo(t, 120)
	for _, model := range []string{"openai:gpt-4o-mini", "anthropic:claude-haiku-4-5"} {
		t.Run(model, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Errored: firstTimeErrored(200), Processing: 50 * time.Millisecond}})
			h := newTestRun(t)
			opts := h.options(model, repo.Dir)
			onWire(t, srv, &opts, "sk-test-batch")
			opts.Batch = batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
			res := h.mustRun(opts)
			for _, e := range res.Changelog.Entries {
				if e.Summary == "" {
					t.Errorf("commit %s has no summary", e.Commit)
				}
			}
			st := srv.Stats()
			if len(res.Changelog.Entries) != 120 || res.Pending != 0 || st.Succeeded != 0 || st.BatchesCreated < 2 || st.BatchItemsAnswered != st.BatchItems {
				t.Fatalf("%d entries, %d pending; fake: %d synchronous answers, %d batches, %d items, %d answered",
					len(res.Changelog.Entries), res.Pending, st.Succeeded, st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered)
			}
			again := h.mustRun(opts)
			if n := srv.Stats().BatchCalls - st.BatchCalls; n != 0 || cachedCount(again.Changelog.Entries) != 120 {
				t.Errorf("a rerun with everything stored made %d batch calls and read %d of 120 from the store; want none and all", n, cachedCount(again.Changelog.Entries))
			}
		})
	}
}

// TestBatchAPIWaitsOutAFullQueue: the account's batch queue holds a
// fraction of a 60-commit history (OpenAI: enqueued tokens). The run sends
// what fits, then the rest as batches end: every commit is answered once,
// and the refusals are logged, not fatal. A dataset's items in Anthropic's
// queue are eval's test of the same name.
func TestBatchAPIWaitsOutAFullQueue(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 50 * time.Millisecond,
		QueueTokens: 1200, QueueRequests: 20}})
	h := newTestRun(t)
	opts := h.options("openai:gpt-4o-mini", historyRepo(t, 60).Dir)
	onWire(t, srv, &opts, "sk-test-batch")
	opts.Batch = batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
	res := h.mustRun(opts)
	st := srv.Stats()
	if len(res.Changelog.Entries) != 60 || st.BatchesRefused == 0 || st.BatchItemsAnswered != st.BatchItems {
		t.Fatalf("%d entries; fake: %d refused, %d items, %d answered", len(res.Changelog.Entries), st.BatchesRefused, st.BatchItems, st.BatchItemsAnswered)
	}
	if !strings.Contains(h.logs.String(), "batch queue has no room") {
		t.Errorf("the full queue was not logged:\n%s", h.logs.String())
	}
}

// TestBatchAPIMaxCostStopsSubmitting: MaxCost holds back every request
// whose worst case could take the run past it; what is sent stays within,
// and what is held back is counted as not sent.
func TestBatchAPIMaxCostStopsSubmitting(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	h := newTestRun(t)
	opts := h.options("openai:gpt-4o-mini", historyRepo(t, 12).Dir)
	onWire(t, srv, &opts, "sk-test-batch")
	opts.Batch = batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
	opts.Target.Price = models.Price{InputPerM: 1000, OutputPerM: 1000}
	opts.BatchSize, opts.MaxCost = 1, 1.5
	res := h.mustRun(opts)
	spent := 0.0
	for _, e := range res.Changelog.Entries {
		spent += e.CostUSD
	}
	if sent := srv.Stats().BatchItems; spent > 1.5 || sent >= 12 || sent == 0 || res.NotSent == 0 {
		t.Errorf("spent $%.4f with %d of 12 requests sent, %d not sent; want some sent within MaxCost 1.5", spent, sent, res.NotSent)
	}
}

// TestBatchAnswerLeavingACommitOutSendsItAlone: an answer in a batch that
// leaves a commit out is not given for that commit again when it is asked
// about alone: the commit goes out in the next batch.
func TestBatchAnswerLeavingACommitOutSendsItAlone(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{DropOne: true})
	h := newTestRun(t)
	opts := h.options("openai:gpt-4o-mini", historyRepo(t, 16).Dir)
	onWire(t, srv, &opts, "sk-test-batch")
	opts.Batch = batchrun.Mode{On: true, Poll: 20 * time.Millisecond}
	res := h.mustRun(opts)
	if len(res.Changelog.Entries) != 16 {
		t.Fatalf("%d entries, want 16", len(res.Changelog.Entries))
	}
	if st := srv.Stats(); st.BatchesCreated != 2 || st.BatchItems != 4 {
		t.Errorf("%d batches of %d items; want 2 requests of 8, then the 2 left out alone", st.BatchesCreated, st.BatchItems)
	}
}

// TestNoWaitStaysWithinMaxCost: what NoWait leaves in batches is billed
// later, so its worst case counts: no more is submitted than the limit
// allows, and what is submitted is counted as pending.
func TestNoWaitStaysWithinMaxCost(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Minute}})
	h := newTestRun(t)
	opts := h.options("openai:gpt-4o-mini", historyRepo(t, 12).Dir)
	onWire(t, srv, &opts, "sk-test-batch")
	opts.Batch = batchrun.Mode{On: true, NoWait: true, Poll: 20 * time.Millisecond}
	opts.Target.Price = models.Price{InputPerM: 1000, OutputPerM: 1000}
	opts.BatchSize, opts.MaxCost = 1, 1.5
	res := h.mustRun(opts)
	n := srv.Stats().BatchItems
	if n == 0 || n >= 12 {
		t.Errorf("%d of 12 requests submitted under MaxCost 1.5 with NoWait", n)
	}
	if res.Pending != n || res.NotSent != 12-n {
		t.Errorf("%d pending and %d not sent, want the %d submitted and the %d held back", res.Pending, res.NotSent, n, 12-n)
	}
}
