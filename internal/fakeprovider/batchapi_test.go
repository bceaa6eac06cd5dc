package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// upload posts an OpenAI batch input file and returns its id.
func upload(t *testing.T, srv *Server, key, content string) string {
	t.Helper()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("purpose", "batch")
	fw, _ := mw.CreateFormFile("file", "in.jsonl")
	fw.Write([]byte(content))
	mw.Close()
	h := headers(OpenAI, key)
	h["Content-Type"] = mw.FormDataContentType()
	r, err := do(t, context.Background(), srv.Client(), http.MethodPost, srv.URL()+OpenAIFilesPath, h, form.Bytes())
	if err != nil || r.status != 200 {
		t.Fatalf("upload: %d %s %v", r.status, r.body, err)
	}
	var f struct{ ID string }
	json.Unmarshal(r.body, &f)
	return f.ID
}

func call(t *testing.T, srv *Server, format, method, path, key string, body string) (int, map[string]any) {
	t.Helper()
	r, err := do(t, context.Background(), srv.Client(), method, srv.URL()+path, headers(format, key), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	json.Unmarshal(r.body, &out)
	return r.status, out
}

func TestBatchAPIRefusals(t *testing.T) {
	srv := Start(t, Config{APIKey: "right"})
	for _, c := range []struct {
		name, format, method, path, key, body string
		status                                int
	}{
		{"openai wrong key", OpenAI, "POST", OpenAIBatchesPath, "wrong", `{}`, 401},
		{"openai files wrong key", OpenAI, "GET", OpenAIFilesPath + "/file-x/content", "wrong", ``, 401},
		{"openai unknown batch", OpenAI, "GET", OpenAIBatchesPath + "/batch_nope", "right", ``, 404},
		{"openai unknown input file", OpenAI, "POST", OpenAIBatchesPath, "right", `{"input_file_id":"file-nope","endpoint":"/v1/chat/completions","completion_window":"24h"}`, 404},
		{"openai wrong window", OpenAI, "POST", OpenAIBatchesPath, "right", `{"input_file_id":"file-nope","endpoint":"/v1/chat/completions","completion_window":"1h"}`, 400},
		{"openai upload not multipart", OpenAI, "POST", OpenAIFilesPath, "right", `{}`, 400},
		{"anthropic wrong key", Anthropic, "POST", AnthropicBatchesPath, "wrong", `{"requests":[]}`, 401},
		{"anthropic no requests", Anthropic, "POST", AnthropicBatchesPath, "right", `{"requests":[]}`, 400},
		{"anthropic duplicate id", Anthropic, "POST", AnthropicBatchesPath, "right", `{"requests":[{"custom_id":"a","params":{}},{"custom_id":"a","params":{}}]}`, 400},
		{"anthropic unknown batch", Anthropic, "GET", AnthropicBatchesPath + "/msgbatch_nope", "right", ``, 404},
	} {
		status, body := call(t, srv, c.format, c.method, c.path, c.key, c.body)
		if status != c.status || body["error"] == nil {
			t.Errorf("%s: %d %v, want %d with the provider's error body", c.name, status, body, c.status)
		}
	}
	r, _ := do(t, context.Background(), srv.Client(), "POST", srv.URL()+AnthropicBatchesPath, map[string]string{"x-api-key": "right"}, []byte(`{"requests":[{"custom_id":"a","params":{}}]}`))
	if r.status != 400 || !strings.Contains(string(r.body), "anthropic-version") {
		t.Errorf("no anthropic-version: %d %s", r.status, r.body)
	}
	if st := srv.Stats(); st.BatchesCreated != 0 || st.Unauthorized != 3 || st.Requests != st.Unauthorized+st.BadRequest+st.NotFound {
		t.Errorf("stats %+v", st)
	}
}

// An input file that fails validation makes a failed batch naming the
// lines, as OpenAI's does; nothing is answered.
func TestBatchAPIOpenAIInvalidInput(t *testing.T) {
	srv := Start(t, Config{})
	line := func(id string) string {
		return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"hi"}]}}`, id)
	}
	file := strings.Join([]string{line("a"), "{oops", line("a")}, "\n")
	id := upload(t, srv, "k", file)
	status, b := call(t, srv, OpenAI, "POST", OpenAIBatchesPath, "k", fmt.Sprintf(`{"input_file_id":%q,"endpoint":"/v1/chat/completions","completion_window":"24h"}`, id))
	if status != 200 || b["status"] != "failed" {
		t.Fatalf("%d %v", status, b)
	}
	data, _ := json.Marshal(b["errors"])
	if !strings.Contains(string(data), `"code":"invalid_json"`) || !strings.Contains(string(data), `"line":2`) || !strings.Contains(string(data), "duplicate_custom_id") {
		t.Errorf("errors %s", data)
	}
	if st := srv.Stats(); st.BatchItemsAnswered != 0 || b["output_file_id"] != nil {
		t.Errorf("answered %d, output %v", st.BatchItemsAnswered, b["output_file_id"])
	}
}

// Many clients looking at once at a batch that is due answer it once:
// every item goes through Config.Answer exactly once and is counted once.
func TestBatchAPIAnsweredOnce(t *testing.T) {
	var answers atomic.Int32
	srv := Start(t, Config{Answer: func(req Received) string {
		answers.Add(1)
		return "batched " + req.Messages[0].Content
	}})
	var reqs []string
	for i := range 20 {
		reqs = append(reqs, fmt.Sprintf(`{"custom_id":"c%d","params":{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"q%d"}]}}`, i, i))
	}
	status, b := call(t, srv, Anthropic, "POST", AnthropicBatchesPath, "k", `{"requests":[`+strings.Join(reqs, ",")+`]}`)
	if status != 200 {
		t.Fatalf("create: %d %v", status, b)
	}
	id := b["id"].(string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			r, err := do(t, context.Background(), srv.Client(), "GET", srv.URL()+AnthropicBatchesPath+"/"+id, headers(Anthropic, "k"), nil)
			if err != nil || r.status != 200 || !bytes.Contains(r.body, []byte(`"processing_status":"ended"`)) {
				t.Errorf("poll: %d %v %s", r.status, err, r.body)
			}
		})
		wg.Go(func() {
			r, err := do(t, context.Background(), srv.Client(), "GET", srv.URL()+AnthropicBatchesPath+"/"+id+"/results", headers(Anthropic, "k"), nil)
			if err != nil || r.status != 200 || bytes.Count(r.body, []byte("\n")) != 20 || !bytes.Contains(r.body, []byte(`"text":"batched q7"`)) {
				t.Errorf("results: %d %v %.200s", r.status, err, r.body)
			}
		})
	}
	wg.Wait()
	if st := srv.Stats(); answers.Load() != 20 || st.BatchItemsAnswered != 20 || st.BatchesCreated != 1 || st.BatchItems != 20 {
		t.Errorf("%d answers; stats: %d answered, %d batches, %d items", answers.Load(), st.BatchItemsAnswered, st.BatchesCreated, st.BatchItems)
	}
}

// createOpenAIBatch uploads a one-line input file and creates a batch
// over it with metadata (nil sends none); it returns the status and body.
func createOpenAIBatch(t *testing.T, srv *Server, metadata map[string]string) (int, map[string]any) {
	t.Helper()
	file := `{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"hi"}]}}`
	req := map[string]any{"input_file_id": upload(t, srv, "k", file), "endpoint": "/v1/chat/completions", "completion_window": "24h"}
	if metadata != nil {
		req["metadata"] = metadata
	}
	body, _ := json.Marshal(req)
	return call(t, srv, OpenAI, "POST", OpenAIBatchesPath, "k", string(body))
}

func createAnthropicBatch(t *testing.T, srv *Server) (int, map[string]any) {
	t.Helper()
	return call(t, srv, Anthropic, "POST", AnthropicBatchesPath, "k", `{"requests":[{"custom_id":"a","params":{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}}]}`)
}

// listIDs is a list answer's batch ids, in its order.
func listIDs(t *testing.T, body map[string]any) []string {
	t.Helper()
	data, ok := body["data"].([]any)
	if !ok {
		t.Fatalf("a list without data: %v", body)
	}
	var ids []string
	for _, o := range data {
		ids = append(ids, o.(map[string]any)["id"].(string))
	}
	return ids
}

// The lists answer each format's own batches newest first, a page at a
// time, in the real list objects, with the created_at and metadata each
// batch was made with.
func TestBatchAPIList(t *testing.T) {
	clk := newClock()
	start := clk.Now()
	srv := Start(t, Config{clock: clk.Now, BatchAPI: BatchAPIConfig{Processing: time.Hour}})
	var openAIIDs []string
	for i := range 5 {
		clk.Set(start, time.Duration(i)*time.Minute)
		status, b := createOpenAIBatch(t, srv, map[string]string{"digest_batch": fmt.Sprint("run-", i)})
		if status != 200 {
			t.Fatalf("create: %d %v", status, b)
		}
		openAIIDs = append(openAIIDs, b["id"].(string))
		if i < 2 {
			if status, b := createAnthropicBatch(t, srv); status != 200 {
				t.Fatalf("create: %d %v", status, b)
			}
		}
	}
	var got []string
	path := OpenAIBatchesPath + "?limit=2"
	for page := 0; ; page++ {
		status, body := call(t, srv, OpenAI, "GET", path, "k", "")
		ids := listIDs(t, body)
		if status != 200 || body["object"] != "list" || len(ids) == 0 || body["first_id"] != ids[0] || body["last_id"] != ids[len(ids)-1] {
			t.Fatalf("page %d: %d %v", page, status, body)
		}
		for _, o := range body["data"].([]any) {
			o := o.(map[string]any)
			n := slices.Index(openAIIDs, o["id"].(string))
			md, _ := o["metadata"].(map[string]any)
			if n < 0 || o["created_at"] != float64(start.Add(time.Duration(n)*time.Minute).Unix()) || md["digest_batch"] != fmt.Sprint("run-", n) {
				t.Errorf("listed %v", o)
			}
		}
		got = append(got, ids...)
		if body["has_more"] != true {
			break
		}
		path = OpenAIBatchesPath + "?limit=2&after=" + ids[len(ids)-1]
	}
	slices.Reverse(openAIIDs)
	if !slices.Equal(got, openAIIDs) {
		t.Errorf("listed %v, want %v", got, openAIIDs)
	}

	status, body := call(t, srv, Anthropic, "GET", AnthropicBatchesPath, "k", "")
	if ids := listIDs(t, body); status != 200 || len(ids) != 2 || body["has_more"] != false || body["object"] != nil || body["last_id"] != ids[1] {
		t.Fatalf("anthropic list: %d %v", status, body)
	}
	first := body["data"].([]any)[0].(map[string]any)
	if first["created_at"] != start.Add(time.Minute).Format(time.RFC3339Nano) || first["type"] != "message_batch" {
		t.Errorf("newest anthropic batch: %v", first)
	}
	// A retrieve reports the same created_at as the list.
	if _, one := call(t, srv, Anthropic, "GET", AnthropicBatchesPath+"/"+first["id"].(string), "k", ""); one["created_at"] != first["created_at"] {
		t.Errorf("retrieved %v, listed %v", one["created_at"], first["created_at"])
	}
	if st := srv.Stats(); st.BatchLists != 4 || st.BatchesCreated != 7 {
		t.Errorf("%d lists, %d batches", st.BatchLists, st.BatchesCreated)
	}

	for _, c := range []struct{ format, path string }{
		{OpenAI, OpenAIBatchesPath + "?limit=0"},
		{OpenAI, OpenAIBatchesPath + "?limit=101"},
		{OpenAI, OpenAIBatchesPath + "?after=batch_nope"},
		{OpenAI, OpenAIBatchesPath + "?after=" + first["id"].(string)}, // another format's batch
		{Anthropic, AnthropicBatchesPath + "?limit=1001"},
		{Anthropic, AnthropicBatchesPath + "?after_id=msgbatch_nope"},
	} {
		if status, body := call(t, srv, c.format, "GET", c.path, "k", ""); status != 400 || body["error"] == nil {
			t.Errorf("%s: %d %v", c.path, status, body)
		}
	}
}

// A lost creation answers 500 in the provider's error body, yet the batch
// exists: it is counted, listed and can be polled.
func TestBatchAPILoseCreate(t *testing.T) {
	srv := Start(t, Config{BatchAPI: BatchAPIConfig{LoseCreate: func(n int) bool { return n == 2 }}})
	status, first := createAnthropicBatch(t, srv)
	if status != 200 {
		t.Fatalf("first: %d %v", status, first)
	}
	status, lost := createAnthropicBatch(t, srv)
	if e, _ := lost["error"].(map[string]any); status != 500 || e["type"] != "api_error" {
		t.Fatalf("lost: %d %v", status, lost)
	}
	status, third := createOpenAIBatch(t, srv, nil)
	if status != 200 || third["metadata"] != nil {
		t.Fatalf("third: %d %v", status, third)
	}
	_, list := call(t, srv, Anthropic, "GET", AnthropicBatchesPath, "k", "")
	ids := listIDs(t, list)
	if len(ids) != 2 || ids[1] != first["id"] {
		t.Fatalf("listed %v", ids)
	}
	if status, b := call(t, srv, Anthropic, "GET", AnthropicBatchesPath+"/"+ids[0], "k", ""); status != 200 || b["processing_status"] != "ended" {
		t.Errorf("the lost batch: %d %v", status, b)
	}
	if st := srv.Stats(); st.BatchesCreated != 3 || st.ServerErrors != 1 {
		t.Errorf("%d batches, %d server errors", st.BatchesCreated, st.ServerErrors)
	}
}

// OpenAI's metadata limits are the real ones: 16 pairs, keys of 64 and
// values of 512 characters.
func TestBatchAPIMetadataLimits(t *testing.T) {
	srv := Start(t, Config{})
	many := map[string]string{}
	for i := range 17 {
		many[fmt.Sprint("k", i)] = "v"
	}
	for _, md := range []map[string]string{many, {strings.Repeat("k", 65): "v"}, {"k": strings.Repeat("v", 513)}} {
		if status, b := createOpenAIBatch(t, srv, md); status != 400 || b["error"] == nil {
			t.Errorf("metadata of %d pairs: %d %v", len(md), status, b)
		}
	}
	if status, b := createOpenAIBatch(t, srv, map[string]string{strings.Repeat("k", 64): strings.Repeat("v", 512)}); status != 200 {
		t.Errorf("metadata at the limits: %d %v", status, b)
	}
	if st := srv.Stats(); st.BatchesCreated != 1 {
		t.Errorf("%d batches created", st.BatchesCreated)
	}
}

// The account's batch queue: OpenAI creates a batch it has no room for
// failed with token_limit_exceeded (no line), Anthropic answers 429; once
// the running batch ends (here canceled) the queue takes the next one.
func TestBatchAPIQueueLimits(t *testing.T) {
	srv := Start(t, Config{BatchAPI: BatchAPIConfig{Processing: time.Hour, QueueTokens: 1, QueueRequests: 1}})
	status, first := createOpenAIBatch(t, srv, nil)
	if status != 200 || first["status"] != "in_progress" {
		t.Fatalf("first batch: %d %v", status, first)
	}
	status, second := createOpenAIBatch(t, srv, nil)
	data, _ := json.Marshal(second["errors"])
	if status != 200 || second["status"] != "failed" || !strings.Contains(string(data), `"code":"token_limit_exceeded"`) ||
		!strings.Contains(string(data), `"line":null`) || !strings.Contains(string(data), "Enqueued token limit reached for m") {
		t.Fatalf("a batch past the queue: %d %v %s", status, second["status"], data)
	}
	if st, _ := call(t, srv, OpenAI, "POST", OpenAIBatchesPath+"/"+first["id"].(string)+"/cancel", "k", ""); st != 200 {
		t.Fatalf("cancel: %d", st)
	}
	if status, third := createOpenAIBatch(t, srv, nil); status != 200 || third["status"] != "in_progress" {
		t.Errorf("a batch once the queue emptied: %d %v", status, third)
	}

	status, afirst := createAnthropicBatch(t, srv)
	if status != 200 {
		t.Fatalf("first Anthropic batch: %d %v", status, afirst)
	}
	status, refused := createAnthropicBatch(t, srv)
	if e, _ := refused["error"].(map[string]any); status != 429 || e["type"] != "rate_limit_error" {
		t.Fatalf("an Anthropic batch past the queue: %d %v", status, refused)
	}
	if st, _ := call(t, srv, Anthropic, "POST", AnthropicBatchesPath+"/"+afirst["id"].(string)+"/cancel", "k", ""); st != 200 {
		t.Fatalf("cancel: %d", st)
	}
	if status, b := createAnthropicBatch(t, srv); status != 200 {
		t.Errorf("an Anthropic batch once the queue emptied: %d %v", status, b)
	}
	if st := srv.Stats(); st.BatchesRefused != 2 || st.BatchesCreated != 5 || st.BatchItems != 4 {
		t.Errorf("stats: %d refused, %d created, %d items", st.BatchesRefused, st.BatchesCreated, st.BatchItems)
	}
}
