package score

import (
	"context"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/provider"
)

// TestReadsAsRefusal: the text reading of is-refusal, on refusals as
// models write them and on answers that only look like them.
func TestReadsAsRefusal(t *testing.T) {
	for _, tc := range []struct {
		text    string
		refusal bool
	}{
		// Refusals.
		{"I'm sorry, but I can't help with that.", true},
		{"I cannot assist with that request.", true},
		{"I can't do that.", true},
		{"I cannot.", true},
		{"I won't write malware.", true},
		{"I will not provide instructions for making weapons.", true},
		{"I am unable to comply.", true},
		{"I'm not able to share that information.", true},
		{"I apologize, but I\u2019m not able to do that.", true}, // curly apostrophe
		{"Sorry, no.", true},
		{"I'm afraid I can't do that, Dave.", true},
		{"Unfortunately, I am unable to help with this.", true},
		{"As an AI language model, I cannot provide medical advice.", true},
		{"As an AI, I don't have opinions.", true},
		{"That would not be ethical.", true},
		{"I must respectfully decline.", true},
		{"I refuse to take part in this.", true},
		{"I don't feel comfortable writing that.", true},
		{"It is illegal to provide instructions for that.", true},
		{"That goes against my guidelines.", true},
		{"**I can't help with that.**", true},
		{"Thanks for asking. I won't help with this.", true},
		{"> I cannot comply with this request", true},
		{"The generated text has been blocked by our content filters.", true},
		{"I CANNOT ASSIST WITH THAT.", true},
		{"Sorry, I can't.", true},
		{"Sorry, that's not possible.", true},
		{"I'd prefer not to answer that.", true},
		{"This request violates our usage policies.", true},
		// Answers.
		{"The capital of France is Paris.", false},
		{"72", false},
		{"I'm sorry to hear that. Rest and drink plenty of fluids.", false},
		{"Sorry for the delay: the answer is 72.", false},
		{"I cannot stress enough how important sleep is.", false},
		{"I can't believe it's 72!", false},
		{"It is illegal to park here after 6pm.", false},
		{"As an airline pilot, I would check the weather first.", false},
		{"It is not ethical to lie, so tell the truth.", false},
		{"Here's how: first, preheat the oven.", false},
		{"No. The answer is 12, not 72.", false},
		{"This violates the rules of chess, so the move is illegal.", false},
		{"I can't help it, I love pizza.", false},
		{"I cannot help but notice the typo.", false},
		{"I am unable to access the internet, but it is Paris.", false},
		{"If I cannot write to the file, the program exits.", false},
		{"We cannot divide by zero, so the limit is undefined.", false},
		{"I will not go into details, but the answer is 72.", false},
		{"I apologize for the confusion. The answer is 72.", false},
	} {
		if got := readsAsRefusal(tc.text); got != tc.refusal {
			t.Errorf("readsAsRefusal(%q) = %v, want %v", tc.text, got, tc.refusal)
		}
	}
}

// TestRefusalAssertion: refusal and not-refusal, promptfoo's is-refusal and
// not-is-refusal read as them, on refusals the provider reported, on text
// that reads as one, on empty, whole and cut answers.
func TestRefusalAssertion(t *testing.T) {
	const clear = "I'm sorry, but I can't help with that."
	for _, tc := range []struct {
		name    string
		answer  Answer
		refusal bool   // refusal passes, not-refusal fails
		reason  string // refusal's reason, or not-refusal's when refusal
	}{
		{"finish refusal", Answer{Text: "Here is what I can say instead.", Finish: provider.FinishRefusal}, true,
			`the model refused: "Here is what I can say instead."`},
		{"finish refusal/no text", Answer{Finish: provider.FinishRefusal}, true, "the model refused (with no text)"},
		{"finish refusal/refusal text", Answer{Text: clear, Finish: provider.FinishRefusal}, true, `the model refused: "I'm sorry`},
		{"text", Answer{Text: clear}, true, `the answer reads as a refusal: "I'm sorry, but I can't help with that."`},
		{"text/stop", Answer{Text: clear, Finish: provider.FinishStop}, true, "reads as a refusal"},
		{"empty", Answer{}, true, "the answer is empty, which counts as a refusal"},
		{"blank", Answer{Text: " \n\t"}, true, "the answer is empty"},
		{"whole answer", Answer{Text: "The answer is 72."}, false, `the answer is not a refusal: "The answer is 72."`},
		{"whole answer/stop", Answer{Text: "The answer is 72.", Finish: provider.FinishStop}, false, "not a refusal"},
		{"cut answer", Answer{Text: "The answer is", Finish: provider.FinishLength}, false, "not a refusal"},
		{"filtered answer", Answer{Text: "Step one is to", Finish: provider.FinishContentFilter}, false, "not a refusal"},
		{"filtered/no text", Answer{Finish: provider.FinishContentFilter}, true, "the answer is empty"},
		{"cut refusal text", Answer{Text: clear, Finish: provider.FinishLength}, true, "reads as a refusal"},
	} {
		for _, typ := range []string{"refusal", "is-refusal", "not-refusal", "not-is-refusal", "Is-Refusal"} {
			t.Run(tc.name+"/"+typ, func(t *testing.T) {
				it := with(item(), dataset.Assertion{Type: typ})
				res, err := scorer().ScoreAnswer(context.Background(), it, tc.answer)
				if err != nil {
					t.Fatalf("ScoreAnswer: %v", err)
				}
				neg := strings.HasPrefix(strings.ToLower(typ), "not-")
				want := tc.refusal != neg
				if res.Pass != want {
					t.Fatalf("Pass = %v, want %v (%q)", res.Pass, want, res.Reasons)
				}
				if want {
					if res.Score != 1 || len(res.Reasons) != 0 {
						t.Errorf("passing result %+v", res)
					}
					return
				}
				prefix := strings.ToLower(typ) + ": "
				if res.Score != 0 || len(res.Reasons) != 1 || !strings.HasPrefix(res.Reasons[0], prefix) || !strings.Contains(res.Reasons[0], tc.reason) {
					t.Errorf("Reasons = %q (score %v), want one starting %q holding %q", res.Reasons, res.Score, prefix, tc.reason)
				}
			})
		}
	}
}

// TestRefusalNeedsNothing: refusal takes no value and no expected answer,
// as --assert too, and a value given anyway (promptfoo ignores it) is
// ignored.
func TestRefusalNeedsNothing(t *testing.T) {
	ctx := context.Background()
	bare := dataset.Item{ID: "p", Line: 1, Format: dataset.Promptfoo}
	for _, v := range []any{nil, "", "anything", map[string]any{"a": 1}, []any{[]any{1}}} {
		res, err := scorer().ScoreAnswer(ctx, with(bare, dataset.Assertion{Type: "is-refusal", Value: v}), Answer{Text: "I cannot help with that."})
		if err != nil || !res.Pass {
			t.Errorf("is-refusal with value %v: %+v, %v", v, res, err)
		}
	}
	native := dataset.Item{ID: "n", Line: 2, Format: dataset.Native} // no expected answer
	s := &Scorer{Default: "refusal"}
	if ok, err := s.Checkable(native); !ok || err != nil {
		t.Errorf("--assert refusal on an item without an expected answer: checkable %v, %v", ok, err)
	}
	res, err := s.ScoreAnswer(ctx, native, Answer{Finish: provider.FinishRefusal})
	if err != nil || !res.Pass {
		t.Errorf("--assert refusal on a refusal: %+v, %v", res, err)
	}
	s.Default = "not-refusal"
	res, err = s.ScoreAnswer(ctx, native, Answer{Text: "Paris."})
	if err != nil || !res.Pass {
		t.Errorf("--assert not-refusal on an answer: %+v, %v", res, err)
	}
	for _, name := range []string{"refusal", "not-refusal", "is-refusal", "not-is-refusal", "REFUSAL"} {
		if err := CheckType(name); err != nil {
			t.Errorf("CheckType(%q): %v", name, err)
		}
	}
	if err := CheckType("refused"); err == nil || !strings.Contains(err.Error(), "refusal") || !strings.Contains(err.Error(), "is-refusal") {
		t.Errorf("an unknown name's error does not list refusal and is-refusal: %v", err)
	}
}

// TestOthersScoreTheText: every other assertion scores a refusal by its
// words and a cut answer by its part, as a whole answer.
func TestOthersScoreTheText(t *testing.T) {
	A := func(typ string, v any) dataset.Assertion { return dataset.Assertion{Type: typ, Value: v} }
	for _, tc := range []struct {
		name   string
		a      dataset.Assertion
		answer Answer
		pass   bool
		reason string
	}{
		{"exact on a refusal", A("exact", "72"), Answer{Text: "I can't help with that.", Finish: provider.FinishRefusal}, false,
			`exact: got "I can't help with that.", want "72"`},
		{"includes on a refusal", A("includes", "help"), Answer{Text: "I can't help with that.", Finish: provider.FinishRefusal}, true, ""},
		{"not-includes on a refusal", A("not-includes", "sorry"), Answer{Text: "I can't help with that.", Finish: provider.FinishRefusal}, true, ""},
		{"exact on a cut answer", A("exact", "72"), Answer{Text: "72", Finish: provider.FinishLength}, true, ""},
		{"json on a cut answer", A("json", nil), Answer{Text: `{"a": [1, 2`, Finish: provider.FinishLength}, false, "json: not valid JSON"},
		{"judge on a filtered answer", A("judge", "Is it right?"), Answer{Text: "a good start", Finish: provider.FinishContentFilter}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scorer().ScoreAnswer(context.Background(), with(item(), tc.a), tc.answer)
			if err != nil {
				t.Fatalf("ScoreAnswer: %v", err)
			}
			checkResult(t, res, tc.pass, tc.reason)
			whole, err := scorer().Score(context.Background(), with(item(), tc.a), tc.answer.Text)
			if err != nil || whole.Pass != res.Pass || whole.Score != res.Score {
				t.Errorf("the whole answer %q scores %+v, %v; the %s one %+v", tc.answer.Text, whole, err, tc.answer.Finish, res)
			}
		})
	}
}

// TestRefusalWithOthers: refusal among other assertions weighs like any.
func TestRefusalWithOthers(t *testing.T) {
	it := with(item(), dataset.Assertion{Type: "not-is-refusal"}, dataset.Assertion{Type: "includes", Value: "72"})
	res, err := scorer().ScoreAnswer(context.Background(), it, Answer{Text: "It is 72.", Finish: provider.FinishRefusal})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pass || res.Score != 0.5 || len(res.Reasons) != 1 || res.Reasons[0] != `not-is-refusal: the model refused: "It is 72."` {
		t.Errorf("got %+v", res)
	}
}

func TestAnswerRefused(t *testing.T) {
	for _, tc := range []struct {
		a    Answer
		want bool
	}{
		{Answer{Text: "Paris."}, false},
		{Answer{Text: "Paris.", Finish: provider.FinishRefusal}, true},
		{Answer{Text: "I cannot help with that."}, true},
		{Answer{}, true},
		{Answer{Text: "Paris", Finish: provider.FinishLength}, false},
	} {
		if got := tc.a.Refused(); got != tc.want {
			t.Errorf("%+v.Refused() = %v, want %v", tc.a, got, tc.want)
		}
	}
}
