package openai

import (
	"bytes"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

// Whatever an output or error file holds, reading it never panics, every
// problem names its line, and every result belongs to the batch and has
// exactly one of an answer or an error.
func FuzzParseBatchOutput(f *testing.F) {
	f.Add([]byte(`{"id":"r","custom_id":"a","response":{"status_code":200,"body":{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}},"error":null}`))
	f.Add([]byte(`{"custom_id":"a","response":{"status_code":429,"body":{"error":{"message":"slow","code":"rate_limit_exceeded"}}}}` + "\n" + `{"custom_id":"b","response":null,"error":{"code":"batch_expired","message":"late"}}`))
	f.Add([]byte(`{"custom_id":"a","response":{"status_code":200,"body":{"choices":[{"message":{"content":[{"type":"text","text":"x"}]}}]}}}` + "\n\n{"))
	f.Add([]byte(`{"custom_id":"zz"}` + "\n" + `null` + "\n" + `"a"`))
	c := New(Options{APIKey: "sk-fuzz-0123456789abcdef"})
	sent := map[string]provider.Request{"a": {Model: "m", MaxTokens: 10}, "b": {Model: "o3-mini"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		provider.YieldBatchLines(bytes.NewReader(data), c.name, "file f", func(line []byte) (provider.BatchResult, string) { return c.resultLine(line, sent, c.parseAnswer) }, func(res provider.BatchResult, err error) bool {
			if err != nil {
				if !strings.Contains(err.Error(), "line ") {
					t.Fatalf("error %q names no line", err)
				}
				return true
			}
			if _, ok := sent[res.CustomID]; !ok {
				t.Fatalf("result for %q, not in the batch", res.CustomID)
			}
			if res.Err != nil && (res.Response.Text != "" || res.Response.Usage != provider.Usage{}) {
				t.Fatalf("both an error and an answer: %+v", res)
			}
			if u := res.Response.Usage; u.InputTokens < 0 || u.OutputTokens > provider.OutputBound(sent[res.CustomID]) {
				t.Fatalf("usage %+v beyond what the request could use", u)
			}
			return true
		})
	})
}
