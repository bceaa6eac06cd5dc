package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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
