package openai

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

// Whatever a Responses answer holds, reading it never panics; an error is
// a *provider.Error; an answer has a known finish, no key in its text, and
// usage within what the request could use, its cached parts within its
// input. The same body read as a batch result line is a result of the
// batch or a problem naming its line.
func FuzzParseResponsesAnswer(f *testing.F) {
	f.Add([]byte(`{"id":"resp_1","object":"response","status":"completed","error":null,"incomplete_details":null,"output":[{"type":"reasoning","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}]}],"usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":8,"cache_write_tokens":4},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":25}}`))
	f.Add([]byte(`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"type":"message","phase":"commentary","content":[{"type":"refusal","refusal":"no"}]}]}`))
	f.Add([]byte(`{"status":"failed","error":{"code":"rate_limit_exceeded","message":"slow"}}`))
	f.Add([]byte(`{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":5}]}],"usage":{"input_tokens":"1e400","input_tokens_details":{"cached_tokens":-1}}}`))
	f.Add([]byte(`{"error":{"message":"upstream","code":502}}`))
	f.Add([]byte(`{"custom_id":"a","response":{"status_code":200,"body":{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}]}}}`))
	const key = "sk-fuzz-0123456789abcdef"
	r := NewResponses(Options{APIKey: key})
	sent := map[string]provider.Request{"a": {Model: "gpt-5-pro", MaxTokens: 10}, "b": {Model: "gpt-4o"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, req := range sent {
			resp, err := r.parseAnswer(req, http.StatusOK, http.Header{}, nil, data)
			if err != nil {
				var pe *provider.Error
				if !errors.As(err, &pe) || resp != (provider.Response{}) {
					t.Fatalf("error %v (%T) with answer %+v", err, err, resp)
				}
				continue
			}
			switch resp.Finish {
			case provider.FinishStop, provider.FinishLength, provider.FinishRefusal, provider.FinishContentFilter:
			default:
				t.Fatalf("finish %q", resp.Finish)
			}
			if strings.Contains(resp.Text, key) {
				t.Fatalf("the key in the text %q", resp.Text)
			}
			u := resp.Usage
			if u.InputTokens < 0 || u.InputTokens > provider.InputBound(req) || u.OutputTokens < 0 || u.OutputTokens > provider.OutputBound(req) ||
				u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 || u.CacheReadTokens+u.CacheWriteTokens > u.InputTokens {
				t.Fatalf("usage %+v beyond what %+v could use", u, req)
			}
		}
		provider.YieldBatchLines(bytes.NewReader(data), r.chat.name, "file f", func(line []byte) (provider.BatchResult, string) {
			return r.chat.resultLine(line, sent, r.parseAnswer)
		}, func(res provider.BatchResult, err error) bool {
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
			return true
		})
	})
}
