package anthropic

import (
	"bytes"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

// Whatever a results file holds, reading it never panics, every problem
// names its line, and every result belongs to the batch and has exactly
// one of an answer or an error.
func FuzzParseBatchResults(f *testing.F) {
	f.Add([]byte(`{"custom_id":"a","result":{"type":"succeeded","message":{"type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":3,"output_tokens":1}}}}`))
	f.Add([]byte(`{"custom_id":"a","result":{"type":"errored","error":{"type":"error","error":{"type":"overloaded_error","message":"busy"}}}}` + "\n" + `{"custom_id":"b","result":{"type":"expired"}}`))
	f.Add([]byte(`{"custom_id":"b","result":{"type":"canceled"}}` + "\n\n{"))
	f.Add([]byte(`{"custom_id":"zz"}` + "\n" + `null` + "\n" + `"a"`))
	c := New(Options{APIKey: "sk-ant-fuzz-0123456789abcdef"})
	sent := map[string]provider.Request{"a": {Model: "m", MaxTokens: 10}, "b": {Model: "m"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		provider.YieldBatchLines(bytes.NewReader(data), name, "b results", func(line []byte) (provider.BatchResult, string) { return c.resultLine(line, sent) }, func(res provider.BatchResult, err error) bool {
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
			sentReq := sent[res.CustomID]
			sentReq.MaxTokens = max(sentReq.MaxTokens, DefaultMaxTokens)
			if u := res.Response.Usage; u.InputTokens < 0 || u.OutputTokens > provider.OutputBound(sentReq) {
				t.Fatalf("usage %+v beyond what the request could use", u)
			}
			return true
		})
	})
}
