package openai_test

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
	"github.com/digest-cli/digest/internal/provider/openai"
)

func batchItems(n int) ([]provider.BatchItem, map[string]provider.Request) {
	sent := map[string]provider.Request{}
	var items []provider.BatchItem
	for i := range n {
		req := provider.Request{Model: "gpt-4o-mini", System: "be brief", MaxTokens: 50,
			Messages: []provider.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}}}
		id := fmt.Sprintf("item-%d", i)
		items = append(items, provider.BatchItem{CustomID: id, Request: req})
		sent[id] = req
	}
	return items, sent
}

func batchClient(srv *fakeprovider.Server, key string) *openai.Client {
	return openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: key, KeyEnv: "OPENAI_API_KEY", HTTPClient: srv.Client()})
}

// waitDone polls until the batch is done.
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

// collect reads every result, failing the test on any error.
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
	b, err := c.Submit(context.Background(), "", items)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != provider.BatchInProgress || b.Counts.Processing != 10 || b.ID == "" || b.CreatedAt.IsZero() {
		t.Errorf("submitted: %+v", b)
	}
	b = waitDone(t, c, b.ID)
	if b.Status != provider.BatchEnded || b.Counts != (provider.BatchCounts{Succeeded: 9, Errored: 1}) || b.OutputFileID == "" || b.ErrorFileID == "" {
		t.Errorf("ended: %+v", b)
	}
	for range 2 { // reading again pays nothing again
		got := collect(t, c, b, sent)
		if len(got) != 10 {
			t.Fatalf("%d results, want 10", len(got))
		}
		for id, res := range got {
			if id == "item-3" {
				if res.Err == nil || res.Err.Kind != provider.ItemErrored || res.Err.StatusCode != 500 || !strings.Contains(res.Err.Message, "The server had an error") {
					t.Errorf("%s: %+v", id, res.Err)
				}
				continue
			}
			n := strings.TrimPrefix(id, "item-")
			if res.Err != nil || res.Response.Text != "fake answer: question "+n {
				t.Errorf("%s: %q, %v", id, res.Response.Text, res.Err)
			}
			if u := res.Response.Usage; u.InputTokens != srv.Estimate(sent[id])-50 || u.OutputTokens < 1 {
				t.Errorf("%s: usage %+v", id, u)
			}
		}
	}
	st := srv.Stats()
	if st.BatchesCreated != 1 || st.BatchItems != 10 || st.BatchItemsAnswered != 10 || st.Succeeded != 0 {
		t.Errorf("stats: %d batches, %d items, %d answered, %d sync", st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered, st.Succeeded)
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
		expired := id >= "item-2"
		if expired != (res.Err != nil && res.Err.Kind == provider.ItemExpired && strings.Contains(res.Err.Message, "completion window expired")) {
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
	// An ended batch cannot be canceled: the answer says so, not retried.
	if err := c.Cancel(context.Background(), b.ID); provider.KindOf(err) != provider.Permanent {
		t.Errorf("cancel of an ended batch: %v", err)
	}
}

func TestBatchSubmitUnauthorizedIsFatal(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: secret})
	c := batchClient(srv, "sk-wrong-key-0123456789")
	items, _ := batchItems(2)
	_, err := c.Submit(context.Background(), "", items)
	if provider.KindOf(err) != provider.Fatal || !strings.Contains(err.Error(), "export OPENAI_API_KEY") {
		t.Fatalf("submit with a wrong key: %v", err)
	}
	if st := srv.Stats(); st.BatchesCreated != 0 || st.Unauthorized != 1 {
		t.Errorf("stats: %d batches, %d 401s", st.BatchesCreated, st.Unauthorized)
	}
}

func TestBatchSubmitRefusesBadIDsUnsent(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := batchClient(srv, "k")
	items, _ := batchItems(2)
	items[1].CustomID = items[0].CustomID
	if _, err := c.Submit(context.Background(), "", items); provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("repeated custom ID: %v", err)
	}
	if _, err := c.Submit(context.Background(), "", nil); provider.KindOf(err) != provider.Permanent {
		t.Errorf("no items: %v", err)
	}
	items[1].CustomID = "other"
	if _, err := c.Submit(context.Background(), strings.Repeat("x", 513), items); provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "Try: a shorter label") {
		t.Errorf("a label over 512 bytes: %v", err)
	}
	if st := srv.Stats(); st.Requests != 0 {
		t.Errorf("%d requests sent", st.Requests)
	}
}

func TestBatchPollFailedInput(t *testing.T) {
	// A batch whose input file fails validation ends failed, with the
	// provider's reason.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"batch_1","object":"batch","status":"failed","created_at":1700000000,"request_counts":{"total":0,"completed":0,"failed":0},
			"errors":{"object":"list","data":[{"code":"invalid_json","message":"This line is not parseable as valid JSON.","line":7}]}}`)
	}))
	defer ts.Close()
	c := openai.New(openai.Options{BaseURL: ts.URL + "/v1", APIKey: "k"})
	b, err := c.Poll(context.Background(), "batch_1")
	if err != nil || b.Status != provider.BatchFailed || b.Message != "line 7: This line is not parseable as valid JSON" || b.QueueFull {
		t.Errorf("failed batch: %+v, %v", b, err)
	}
}

// TestBatchPollQueueFull: a batch the account's queue had no room for is
// failed as a whole with token_limit_exceeded and no line; it is marked
// QueueFull, which a bad input file is not.
func TestBatchPollQueueFull(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"batch_1","object":"batch","status":"failed","created_at":1700000000,"request_counts":{"total":0,"completed":0,"failed":0},
			"errors":{"object":"list","data":[{"code":"token_limit_exceeded","message":"Enqueued token limit reached for gpt-4o in organization org-x. Limit: 90,000 enqueued tokens. Please try submitting fewer tasks or try again later.","param":null,"line":null}]}}`)
	}))
	defer ts.Close()
	c := openai.New(openai.Options{BaseURL: ts.URL + "/v1", APIKey: "k"})
	b, err := c.Poll(context.Background(), "batch_1")
	if err != nil || b.Status != provider.BatchFailed || !b.QueueFull || !strings.Contains(b.Message, "Limit: 90,000 enqueued tokens") {
		t.Errorf("a batch refused by the queue: %+v, %v", b, err)
	}
}

func TestBatchMalformedOutputLines(t *testing.T) {
	file := strings.Join([]string{
		`{"id":"r1","custom_id":"item-0","response":{"status_code":200,"body":{"choices":[{"message":{"content":"ok"}}],"usage":{"prompt_tokens":5,"completion_tokens":2}}},"error":null}`,
		`{"custom_id":"item-1","response":{"status_code":200,"body":`,
		`{"custom_id":"nobody","response":{"status_code":200,"body":{}}}`,
		`{"custom_id":"item-1"}`,
		`["not","an","object"]`,
		`{"custom_id":"item-2","response":{"status_code":200,"body":{"choices":[]}},"error":null}`,
		`{"custom_id":"item-1","response":{"status_code":400,"body":{"error":{"message":"bad max_tokens","type":"invalid_request_error"}}},"error":null}`,
		`{"custom_id":"item-3","response":{"status_code":200,"body":{"choices":[{"message":{"content":"big"}}],"usage":{"prompt_tokens":1e15,"completion_tokens":"1e15"}}}}`,
	}, "\n")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/files/out/content" || r.Header.Get("Authorization") != "Bearer "+secret {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, file)
	}))
	defer ts.Close()
	c := openai.New(openai.Options{BaseURL: ts.URL + "/v1", APIKey: secret})
	_, sent := batchItems(4)
	var results []provider.BatchResult
	var errs []string
	for res, err := range c.Results(context.Background(), provider.Batch{ID: "b", Status: provider.BatchEnded, OutputFileID: "out"}, sent) {
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
		"line 4: the line has neither a response nor an error", "line 5: the line is an array, not an object"}
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
	if e := results[1].Err; e == nil || e.Kind != provider.ItemErrored || !strings.Contains(e.Message, "no choices") {
		t.Errorf("an answer without choices: %+v", e)
	}
	if e := results[2].Err; e == nil || e.StatusCode != 400 || e.Type != "invalid_request_error" || e.Message != "bad max_tokens" {
		t.Errorf("a 400 in the batch: %+v", e)
	}
	// Usage is held to what the request sent under that custom ID could use.
	if u, req := results[3].Response.Usage, sent["item-3"]; u.InputTokens != provider.InputBound(req) || u.OutputTokens != provider.OutputBound(req) || u.OutputTokens > 1000 {
		t.Errorf("usage beyond the request: %+v", u)
	}
}

func TestBatchResultsFileMissing(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := batchClient(srv, "k")
	n := 0
	for _, err := range c.Results(context.Background(), provider.Batch{ID: "b", Status: provider.BatchEnded, OutputFileID: "file-nope"}, nil) {
		n++
		if provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "file-nope") {
			t.Errorf("a missing output file: %v", err)
		}
	}
	if n != 1 {
		t.Errorf("%d yields, want one error", n)
	}
}

func TestBatchResultsBeforeDone(t *testing.T) {
	c := openai.New(openai.Options{BaseURL: "http://127.0.0.1:1/v1"})
	for _, err := range c.Results(context.Background(), provider.Batch{ID: "b", Status: provider.BatchInProgress}, nil) {
		if provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "Try: Poll") {
			t.Errorf("results of a running batch: %v", err)
		}
	}
}

func TestSplitBatchAtRealLimits(t *testing.T) {
	c := openai.New(openai.Options{})
	items := make([]provider.BatchItem, openai.MaxBatchRequests+1)
	for i := range items {
		items[i] = provider.BatchItem{CustomID: fmt.Sprint(i), Request: provider.Request{Model: "m", Messages: []provider.Message{{Role: "user", Content: "hi"}}}}
	}
	got, err := c.SplitBatch(items)
	if err != nil || len(got) != 2 || len(got[0]) != openai.MaxBatchRequests || len(got[1]) != 1 {
		t.Fatalf("%d+1 small items: %d batches, %v", openai.MaxBatchRequests, len(got), err)
	}
	// Three items of a little over a third of the file limit each: two fit, the third does not.
	big := strings.Repeat("x", openai.MaxBatchBytes/3)
	items = items[:3]
	for i := range items {
		items[i].Request.Messages = []provider.Message{{Role: "user", Content: big}}
	}
	got, err = c.SplitBatch(items)
	if err != nil || len(got) != 2 || len(got[0]) != 2 {
		t.Fatalf("three items of a third: %d batches, %v", len(got), err)
	}
}

// A batch whose creation answer was lost is found again by List, under
// the label Submit gave it.
func TestBatchListFindsLostBatchByLabel(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{
		Processing: time.Hour,
		LoseCreate: func(n int) bool { return n == 2 },
	}})
	c := batchClient(srv, "k")
	since := time.Now()
	items, _ := batchItems(3)
	first, err := c.Submit(context.Background(), "run-a", items)
	if err != nil || first.Label != "run-a" || first.Total != 3 {
		t.Fatalf("first: %+v, %v", first, err)
	}
	if _, err := c.Submit(context.Background(), "run-b", items[:2]); provider.KindOf(err) != provider.Transient {
		t.Fatalf("a lost creation: %v", err)
	}
	got, err := c.List(context.Background(), since)
	if err != nil || len(got) != 2 {
		t.Fatalf("list: %+v, %v", got, err)
	}
	if lost := got[0]; lost.Label != "run-b" || lost.Total != 2 || lost.Status != provider.BatchInProgress || lost.Counts.Processing != 2 || lost.CreatedAt.IsZero() {
		t.Errorf("the lost batch: %+v", lost)
	}
	if got[1].ID != first.ID || got[1].Label != "run-a" || !got[1].CreatedAt.Equal(first.CreatedAt) {
		t.Errorf("the first batch: %+v, submitted %+v", got[1], first)
	}
	if st := srv.Stats(); st.BatchesCreated != 2 || st.BatchLists != 1 {
		t.Errorf("%d batches, %d lists", st.BatchesCreated, st.BatchLists)
	}
}

// List follows has_more across pages of 100.
func TestBatchListPages(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Hour}})
	c := batchClient(srv, "k")
	items, _ := batchItems(1)
	var ids []string
	for i := range 101 {
		b, err := c.Submit(context.Background(), fmt.Sprint("run-", i), items)
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
		if want := 100 - i; b.ID != ids[want] || b.Label != fmt.Sprint("run-", want) {
			t.Fatalf("batch %d is %s %q, want %s", i, b.ID, b.Label, ids[want])
		}
	}
	if n := srv.Stats().BatchLists; n != 2 {
		t.Errorf("%d list calls, want 2", n)
	}
}

// List stops at the first page's batch older than since and asks for no
// more pages; since is taken to its second, created_at's unit.
func TestBatchListStopsAtSince(t *testing.T) {
	const t0 = 1_700_000_000
	pages := map[string]string{
		"": `{"object":"list","data":[
			{"id":"b3","object":"batch","status":"completed","created_at":1700000010,"metadata":{"digest_batch":"x"},"request_counts":{"total":4,"completed":4,"failed":0}},
			{"id":"b2","object":"batch","status":"in_progress","created_at":1700000000,"metadata":null,"request_counts":{"total":2,"completed":0,"failed":0}}],
			"first_id":"b3","last_id":"b2","has_more":true}`,
		"b2": `{"object":"list","data":[
			{"id":"b1","object":"batch","status":"completed","created_at":1699999999,"request_counts":{"total":1,"completed":1,"failed":0}},
			{"id":"b0","object":"batch","status":"completed","created_at":1699999998,"request_counts":{"total":1,"completed":1,"failed":0}}],
			"first_id":"b1","last_id":"b0","has_more":true}`,
	}
	var asked []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.RawQuery)
		page, ok := pages[r.URL.Query().Get("after")]
		if r.URL.Path != "/v1/batches" || r.URL.Query().Get("limit") != "100" || !ok {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusTeapot)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, page)
	}))
	defer ts.Close()
	c := openai.New(openai.Options{BaseURL: ts.URL + "/v1", APIKey: "k"})
	got, err := c.List(context.Background(), time.Unix(t0, 500e6))
	if err != nil || len(got) != 2 {
		t.Fatalf("list: %+v, %v", got, err)
	}
	if got[0].ID != "b3" || got[0].Label != "x" || got[0].Total != 4 || got[0].Status != provider.BatchEnded || !got[0].CreatedAt.Equal(time.Unix(t0+10, 0)) {
		t.Errorf("newest: %+v", got[0])
	}
	if got[1].ID != "b2" || got[1].Label != "" || got[1].Counts.Processing != 2 {
		t.Errorf("made in since's second: %+v", got[1])
	}
	if len(asked) != 2 || asked[1] != "limit=100&after=b2" {
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
		c := openai.New(openai.Options{BaseURL: ts.URL + "/v1", APIKey: "k"})
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
		fmt.Fprint(w, `{"object":"list","data":[{"id":"b1","status":"completed","created_at":1700000000}],"last_id":"b1","has_more":true}`)
	}))
	defer ts.Close()
	c := openai.New(openai.Options{BaseURL: ts.URL + "/v1", APIKey: "k"})
	if _, err := c.List(context.Background(), time.Time{}); provider.KindOf(err) != provider.Malformed || !strings.Contains(err.Error(), `after "b1" twice`) || calls != 2 {
		t.Errorf("%d calls: %v", calls, err)
	}
}
