package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
)

func batchItems(n int) ([]provider.BatchItem, map[string]provider.Request) {
	sent := map[string]provider.Request{}
	var items []provider.BatchItem
	for i := range n {
		req := provider.Request{Model: "claude-haiku-4-5", System: "be brief", MaxTokens: 50,
			Messages: []provider.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}}}
		id := fmt.Sprintf("item-%d", i)
		items = append(items, provider.BatchItem{CustomID: id, Request: req})
		sent[id] = req
	}
	return items, sent
}

func batchClient(srv *fakeprovider.Server, key string) *anthropic.Client {
	return anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: key, HTTPClient: srv.Client()})
}

func waitDone(t *testing.T, b provider.Batcher, id string) provider.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		got, err := b.Poll(ctx, id)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if got.Status.Done() {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func collect(t *testing.T, b provider.Batcher, batch provider.Batch, sent map[string]provider.Request) map[string]provider.BatchResult {
	t.Helper()
	got := map[string]provider.BatchResult{}
	for res, err := range b.Results(context.Background(), batch, sent) {
		if err != nil {
			t.Fatalf("results: %v", err)
		}
		if _, dup := got[res.CustomID]; dup {
			t.Fatalf("%s answered twice", res.CustomID)
		}
		got[res.CustomID] = res
	}
	return got
}

func TestBatchSubmitPollResults(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: secret, BatchAPI: fakeprovider.BatchAPIConfig{
		Processing: 50 * time.Millisecond,
		Errored:    func(id string) bool { return id == "item-3" },
	}})
	c := batchClient(srv, secret)
	items, sent := batchItems(10)
	items[7].Request.MaxTokens = 0 // the default cap, as Complete sends it
	sent["item-7"] = items[7].Request
	b, err := c.Submit(context.Background(), "", items)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != provider.BatchInProgress || b.Counts != (provider.BatchCounts{Processing: 10}) || b.ID == "" || b.CreatedAt.IsZero() {
		t.Errorf("submitted: %+v", b)
	}
	b = waitDone(t, c, b.ID)
	if b.Status != provider.BatchEnded || b.Counts != (provider.BatchCounts{Succeeded: 9, Errored: 1}) || b.ResultsURL == "" {
		t.Errorf("ended: %+v", b)
	}
	for range 2 {
		got := collect(t, c, b, sent)
		if len(got) != 10 {
			t.Fatalf("%d results, want 10", len(got))
		}
		for id, res := range got {
			if id == "item-3" {
				if res.Err == nil || res.Err.Kind != provider.ItemErrored || res.Err.Type != "api_error" || res.Err.Message != "Internal server error" {
					t.Errorf("%s: %+v", id, res.Err)
				}
				continue
			}
			n := strings.TrimPrefix(id, "item-")
			if res.Err != nil || res.Response.Text != "fake answer: question "+n {
				t.Errorf("%s: %q, %v", id, res.Response.Text, res.Err)
			}
			req := sent[id]
			req.MaxTokens = 0
			if u := res.Response.Usage; u.InputTokens != srv.Estimate(req) || u.OutputTokens < 1 {
				t.Errorf("%s: usage %+v", id, u)
			}
		}
	}
	st := srv.Stats()
	if st.BatchesCreated != 1 || st.BatchItems != 10 || st.BatchItemsAnswered != 10 || st.Succeeded != 0 {
		t.Errorf("stats: %d batches, %d items, %d answered, %d sync", st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered, st.Succeeded)
	}
}

func TestBatchInvalidParamsErrored(t *testing.T) {
	// The API checks each request's params only when it runs it: a bad one
	// comes back errored, with the API's message, and the rest answered.
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := batchClient(srv, "k")
	items, sent := batchItems(2)
	items[1].Request.Messages[0].Role = "system"
	b, err := c.Submit(context.Background(), "", items)
	if err != nil {
		t.Fatal(err)
	}
	b = waitDone(t, c, b.ID)
	if b.Counts != (provider.BatchCounts{Succeeded: 1, Errored: 1}) {
		t.Errorf("counts %+v", b.Counts)
	}
	got := collect(t, c, b, sent)
	if e := got["item-1"].Err; e == nil || e.Kind != provider.ItemErrored || e.Type != "invalid_request_error" || !strings.Contains(e.Message, `Unexpected role "system"`) {
		t.Errorf("invalid params: %+v", e)
	}
	if got["item-0"].Err != nil {
		t.Errorf("valid params: %+v", got["item-0"].Err)
	}
}

func TestBatchExpiredItems(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{
		Expire: func(id string) bool { return id >= "item-2" },
	}})
	c := batchClient(srv, "k")
	items, sent := batchItems(4)
	b, err := c.Submit(context.Background(), "", items)
	if err != nil {
		t.Fatal(err)
	}
	b = waitDone(t, c, b.ID)
	if b.Status != provider.BatchExpired || b.Counts != (provider.BatchCounts{Succeeded: 2, Expired: 2}) {
		t.Errorf("expired batch: %+v", b)
	}
	for id, res := range collect(t, c, b, sent) {
		if expired := id >= "item-2"; expired != (res.Err != nil && res.Err.Kind == provider.ItemExpired) {
			t.Errorf("%s: %+v", id, res.Err)
		}
	}
	if st := srv.Stats(); st.BatchItemsAnswered != 2 {
		t.Errorf("%d items answered, want 2", st.BatchItemsAnswered)
	}
}

func TestBatchCancel(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Hour}})
	c := batchClient(srv, "k")
	items, sent := batchItems(3)
	b, err := c.Submit(context.Background(), "", items)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(context.Background(), b.ID); err != nil {
		t.Fatal(err)
	}
	b = waitDone(t, c, b.ID)
	if b.Status != provider.BatchCanceled || b.Counts != (provider.BatchCounts{Canceled: 3}) {
		t.Errorf("canceled batch: %+v", b)
	}
	got := collect(t, c, b, sent)
	for id, res := range got {
		if res.Err == nil || res.Err.Kind != provider.ItemCanceled {
			t.Errorf("%s: %+v", id, res.Err)
		}
	}
	if len(got) != 3 || srv.Stats().BatchItemsAnswered != 0 {
		t.Errorf("%d results, %d answered", len(got), srv.Stats().BatchItemsAnswered)
	}
}

func TestBatchSubmitUnauthorizedIsFatal(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: secret})
	c := batchClient(srv, "sk-ant-wrong-0123456789")
	items, _ := batchItems(2)
	_, err := c.Submit(context.Background(), "", items)
	if provider.KindOf(err) != provider.Fatal || !strings.Contains(err.Error(), "export ANTHROPIC_API_KEY") {
		t.Fatalf("submit with a wrong key: %v", err)
	}
	if st := srv.Stats(); st.BatchesCreated != 0 || st.Unauthorized != 1 {
		t.Errorf("stats: %d batches, %d 401s", st.BatchesCreated, st.Unauthorized)
	}
}

func TestBatchMalformedResultLines(t *testing.T) {
	file := strings.Join([]string{
		`{"custom_id":"item-0","result":{"type":"succeeded","message":{"type":"message","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":5,"output_tokens":2}}}}`,
		`{"custom_id":"item-1","result":{"type":"succ`,
		`{"custom_id":"nobody","result":{"type":"canceled"}}`,
		`{"custom_id":"item-1","result":{"type":"pending"}}`,
		`{"custom_id":"item-1"}`,
		`{"custom_id":"item-2","result":{"type":"succeeded","message":{"type":"message","content":"text"}}}`,
		`{"custom_id":"item-1","result":{"type":"errored","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}}`,
		`{"custom_id":"item-3","result":{"type":"succeeded","message":{"type":"message","content":[{"type":"text","text":"big"}],"usage":{"input_tokens":1e15,"output_tokens":1e15}}}}`,
	}, "\n")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/results" || r.Header.Get("x-api-key") != secret || r.Header.Get("anthropic-version") != anthropic.Version {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, file)
	}))
	defer ts.Close()
	c := anthropic.New(anthropic.Options{BaseURL: ts.URL, APIKey: secret})
	_, sent := batchItems(4)
	req3 := sent["item-3"]
	req3.MaxTokens = 0 // sent with the default cap
	sent["item-3"] = req3
	var results []provider.BatchResult
	var errs []string
	for res, err := range c.Results(context.Background(), provider.Batch{ID: "b", Status: provider.BatchEnded, ResultsURL: ts.URL + "/results"}, sent) {
		if err != nil {
			if provider.KindOf(err) != provider.Malformed {
				t.Errorf("%v is not Malformed", err)
			}
			// Only the line naming a custom_id never sent is told as such:
			// the caller sends nothing again on its account.
			if unsent := strings.Contains(err.Error(), `"nobody"`); errors.Is(err, provider.ErrUnsentCustomID) != unsent {
				t.Errorf("%v: errors.Is(ErrUnsentCustomID) is %v", err, !unsent)
			}
			errs = append(errs, err.Error())
			continue
		}
		results = append(results, res)
	}
	want := []string{"line 2: the JSON is cut short", `line 3: custom_id "nobody" was not in the batch`,
		`line 4: result type "pending" is not`, "line 5: the line has no result"}
	if len(errs) != len(want) {
		t.Fatalf("errors %q, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(errs[i], w) {
			t.Errorf("error %q does not say %q", errs[i], w)
		}
	}
	if len(results) != 4 || results[0].Response.Text != "ok" || results[0].Response.Usage != (provider.Usage{InputTokens: 5, OutputTokens: 2}) {
		t.Fatalf("results %+v", results)
	}
	if e := results[1].Err; e == nil || e.Kind != provider.ItemErrored || !strings.Contains(e.Message, "content is a string") {
		t.Errorf("an unreadable message: %+v", e)
	}
	if e := results[2].Err; e == nil || e.Type != "invalid_request_error" || e.Message != "max_tokens: too large" {
		t.Errorf("an errored item in the older shape: %+v", e)
	}
	// Usage is held to what the request could use, its default cap included.
	capped := req3
	capped.MaxTokens = anthropic.DefaultMaxTokens
	if u := results[3].Response.Usage; u.InputTokens != provider.InputBound(req3) || u.OutputTokens != provider.OutputBound(capped) {
		t.Errorf("usage beyond the request: %+v", u)
	}
}

func TestSplitBatchAtRealLimits(t *testing.T) {
	c := anthropic.New(anthropic.Options{})
	items := make([]provider.BatchItem, anthropic.MaxBatchRequests+1)
	for i := range items {
		items[i] = provider.BatchItem{CustomID: fmt.Sprint(i), Request: provider.Request{Model: "m", Messages: []provider.Message{{Role: "user", Content: "hi"}}}}
	}
	got, err := c.SplitBatch(items)
	if err != nil || len(got) != 2 || len(got[0]) != anthropic.MaxBatchRequests || len(got[1]) != 1 {
		t.Fatalf("%d+1 small items: %d batches, %v", anthropic.MaxBatchRequests, len(got), err)
	}
	big := strings.Repeat("x", anthropic.MaxBatchBytes/3)
	items = items[:3]
	for i := range items {
		items[i].Request.Messages = []provider.Message{{Role: "user", Content: big}}
	}
	got, err = c.SplitBatch(items)
	if err != nil || len(got) != 2 || len(got[0]) != 2 {
		t.Fatalf("three items of a third: %d batches, %v", len(got), err)
	}
}

// A batch whose creation answer was lost is found again by List; the
// label is not kept (the API has nowhere to keep it), Total is.
func TestBatchListFindsLostBatch(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{
		Processing: time.Hour,
		LoseCreate: func(n int) bool { return n == 2 },
	}})
	c := batchClient(srv, "k")
	since := time.Now()
	items, _ := batchItems(3)
	first, err := c.Submit(context.Background(), "run-a", items)
	if err != nil || first.Label != "" || first.Total != 3 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	if _, err := c.Submit(context.Background(), "run-b", items[:2]); provider.KindOf(err) != provider.Transient {
		t.Fatalf("a lost creation: %v", err)
	}
	got, err := c.List(context.Background(), since)
	if err != nil || len(got) != 2 {
		t.Fatalf("list: %+v, %v", got, err)
	}
	if lost := got[0]; lost.Total != 2 || lost.Status != provider.BatchInProgress || lost.Counts.Processing != 2 || lost.CreatedAt.Before(first.CreatedAt) {
		t.Errorf("the lost batch: %+v", lost)
	}
	if got[1].ID != first.ID || !got[1].CreatedAt.Equal(first.CreatedAt) || got[1].Total != 3 {
		t.Errorf("the first batch: %+v, submitted %+v", got[1], first)
	}
	// Total counts every request however it ended.
	if err := c.Cancel(context.Background(), got[0].ID); err != nil {
		t.Fatal(err)
	}
	if canceled := waitDone(t, c, got[0].ID); canceled.Total != 2 || canceled.Counts.Canceled != 2 {
		t.Errorf("canceled: %+v", canceled)
	}
}

// List follows has_more and last_id across pages of 100.
func TestBatchListPages(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Hour}})
	c := batchClient(srv, "k")
	items, _ := batchItems(1)
	var ids []string
	for range 101 {
		b, err := c.Submit(context.Background(), "", items)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.ID)
	}
	got, err := c.List(context.Background(), time.Time{})
	if err != nil || len(got) != 101 {
		t.Fatalf("list: %d batches, %v", len(got), err)
	}
	for i, b := range got {
		if b.ID != ids[100-i] {
			t.Fatalf("batch %d is %s, want %s", i, b.ID, ids[100-i])
		}
	}
	if n := srv.Stats().BatchLists; n != 2 {
		t.Errorf("%d list calls, want 2", n)
	}
}

// List stops at the first batch older than since (by a millisecond) and
// asks for no more pages; one made at since is kept.
func TestBatchListStopsAtSince(t *testing.T) {
	pages := map[string]string{
		"": `{"data":[
			{"id":"m3","type":"message_batch","processing_status":"ended","created_at":"2025-01-01T00:00:10.25Z","request_counts":{"processing":0,"succeeded":3,"errored":1,"canceled":0,"expired":0}},
			{"id":"m2","type":"message_batch","processing_status":"in_progress","created_at":"2025-01-01T00:00:00.5Z","request_counts":{"processing":2,"succeeded":0,"errored":0,"canceled":0,"expired":0}}],
			"has_more":true,"first_id":"m3","last_id":"m2"}`,
		"m2": `{"data":[
			{"id":"m1","type":"message_batch","processing_status":"ended","created_at":"2025-01-01T00:00:00.499Z","request_counts":{"processing":0,"succeeded":1,"errored":0,"canceled":0,"expired":0}},
			{"id":"m0","type":"message_batch","processing_status":"ended","created_at":"2024-12-31T00:00:00Z","request_counts":{"processing":0,"succeeded":1,"errored":0,"canceled":0,"expired":0}}],
			"has_more":true,"first_id":"m1","last_id":"m0"}`,
	}
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RawQuery)
		page, ok := pages[r.URL.Query().Get("after_id")]
		if r.URL.Path != "/v1/messages/batches" || r.URL.Query().Get("limit") != "100" || r.Header.Get("x-api-key") != "k" || r.Header.Get("anthropic-version") == "" || !ok {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, page)
	}))
	defer ts.Close()
	c := anthropic.New(anthropic.Options{BaseURL: ts.URL, APIKey: "k"})
	got, err := c.List(context.Background(), time.Date(2025, 1, 1, 0, 0, 0, 500e6, time.UTC))
	if err != nil || len(got) != 2 {
		t.Fatalf("list: %+v, %v", got, err)
	}
	if got[0].ID != "m3" || got[0].Total != 4 || got[0].Status != provider.BatchEnded || got[1].ID != "m2" || got[1].Total != 2 {
		t.Errorf("listed %+v", got)
	}
	if len(asked) != 2 || asked[1] != "limit=100&after_id=m2" {
		t.Errorf("asked %q", asked)
	}
}

// A server without batch endpoints answers List with a Permanent error
// carrying its status: how a caller learns there is no batch API.
func TestBatchListWithoutBatchAPI(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, http.StatusText(status), status)
		}))
		c := anthropic.New(anthropic.Options{BaseURL: ts.URL, APIKey: "k"})
		_, err := c.List(context.Background(), time.Time{})
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Kind != provider.Permanent || pe.StatusCode != status {
			t.Errorf("HTTP %d: %v", status, err)
		}
		ts.Close()
	}
}

// A list that hands back the same cursor is an error, not a loop.
func TestBatchListRepeatedCursor(t *testing.T) {
	calls := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls > 5 { // a client without the guard fails here, not by hanging
			http.Error(w, "paged forever", http.StatusTeapot)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":"m1","processing_status":"ended","created_at":"2025-01-01T00:00:00Z"}],"last_id":"m1","has_more":true}`)
	}))
	defer ts.Close()
	c := anthropic.New(anthropic.Options{BaseURL: ts.URL, APIKey: "k"})
	if _, err := c.List(context.Background(), time.Time{}); provider.KindOf(err) != provider.Malformed || !strings.Contains(err.Error(), `after "m1" twice`) || calls != 2 {
		t.Errorf("%d calls: %v", calls, err)
	}
}
