package openai_test

import (
	"context"
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
	b, err := c.Submit(context.Background(), items)
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
	b, err := c.Submit(context.Background(), items)
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
	b, err := c.Submit(context.Background(), items)
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
	_, err := c.Submit(context.Background(), items)
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
	if _, err := c.Submit(context.Background(), items); provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("repeated custom ID: %v", err)
	}
	if _, err := c.Submit(context.Background(), nil); provider.KindOf(err) != provider.Permanent {
		t.Errorf("no items: %v", err)
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
	if err != nil || b.Status != provider.BatchFailed || b.Message != "line 7: This line is not parseable as valid JSON" {
		t.Errorf("failed batch: %+v, %v", b, err)
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
