package offline

import (
	"context"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

func judgeReq(system, rubric, answer string) provider.Request {
	return provider.Request{System: system, Messages: []provider.Message{{Role: "user",
		Content: "Rubric:\n" + rubric + "\n\nQuestion:\nWhat is 2+2?\n\nAnswer:\n" + answer}}}
}

// The offline judge grades by the rubric's words in the answer: PASS at
// half or more, graded on the scale its system prompt names, the same
// every time; a retry (the reply and a reminder after it) is graded alike.
func TestOfflineJudge(t *testing.T) {
	p := New(func(s string) int { return len(s) })
	const plain = "You grade answers. Given a rubric, a question and an answer, reply with\nPASS or FAIL on the first line, then one sentence saying why. Judge only by the rubric."
	const graded = "You grade answers. Given a rubric, a question and an answer, score the answer from 1 (worst) to 5 (best) by the rubric alone.\nReply with only a JSON object."
	retry := judgeReq(graded, "Mentions Paris and France", "Paris, of course.")
	retry.Messages = append(retry.Messages, provider.Message{Role: "assistant", Content: "?"}, provider.Message{Role: "user", Content: "Your reply could not be read."})
	for _, tt := range []struct {
		req  provider.Request
		want string
	}{
		{judgeReq(plain, "The answer is correct. Expected: 4", "It is 4."), "PASS\noffline judge: 1 of 1 rubric words are in the answer"},
		{judgeReq(plain, "Mentions Paris and France", "Lyon."), "FAIL\noffline judge: 0 of 3 rubric words are in the answer"},
		{judgeReq(graded, "Mentions Paris and France", "Paris, of course."), `{"score": 2, "reason": "offline judge: 1 of 3 rubric words are in the answer"}`},
		{retry, `{"score": 2, "reason": "offline judge: 1 of 3 rubric words are in the answer"}`},
		{judgeReq(graded, "Be ok", "Anything."), `{"score": 5, "reason": "offline judge: 0 of 0 rubric words are in the answer"}`},
	} {
		for range 2 {
			res, err := p.Complete(context.Background(), tt.req)
			if err != nil || res.Text != tt.want || res.Usage.OutputTokens != len(tt.want) {
				t.Errorf("%q: %q, %v; want %q", tt.req.Messages[0].Content, res.Text, err, tt.want)
			}
		}
	}
	// Any other request is answered as before: its last line back.
	res, err := p.Complete(context.Background(), provider.Request{System: "Be brief.", Messages: []provider.Message{{Role: "user", Content: "Rubric:\nx"}}})
	if err != nil || res.Text != "x" {
		t.Errorf("not a judge's request: %q, %v", res.Text, err)
	}
}
