package score

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/provider"
)

// fuzzTypes are the assertion types FuzzScore picks from.
var fuzzTypes = []string{
	"exact", "includes", "icontains", "starts-with", "regex", "numeric", "choice", "json", "json-schema", "judge",
	"not-exact", "not-includes", "not-icontains", "not-starts-with", "not-regex", "not-numeric", "not-choice",
	"not-json", "not-json-schema", "not-judge",
	"equals", "contains", "is-json", "contains-json", "not-contains-json", "llm-rubric", "model-graded-closedqa",
	"refusal", "not-refusal", "is-refusal", "not-is-refusal",
}

// fuzzFinishes are why the fuzzed answer ended, picked by typ's high part.
var fuzzFinishes = []provider.Finish{"", provider.FinishStop, provider.FinishRefusal, provider.FinishLength, provider.FinishContentFilter}

// FuzzScore scores arbitrary answers, ended for any reason, against
// arbitrary values of every assertion type: no panic, a score in [0, 1]
// that agrees with Pass and the reasons, and messages on one line. An
// empty value means the item's expected answer.
func FuzzScore(f *testing.F) {
	f.Add(uint8(0), "72", " 72 ")
	f.Add(uint8(4), `^\d+$`, "123")
	f.Add(uint8(4), `a(`, "x")
	f.Add(uint8(5), "", "She had 48 + 24 = 72\n#### 72")
	f.Add(uint8(5), "-1,234.5", "The answer is −1,234.5%.")
	f.Add(uint8(6), "", "The answer is (B).")
	f.Add(uint8(6), "London", "B) London")
	f.Add(uint8(7), "", "```json\n{\"a\": [1, 2]}\n```")
	f.Add(uint8(8), `{"type":"object","required":["a"]}`, `{"a":1}`)
	f.Add(uint8(8), `{"$ref":"file:///etc/passwd"}`, `{}`)
	f.Add(uint8(8), `{"type":"bogus"}`, `{}`)
	f.Add(uint8(9), "Is it good?", "good")
	f.Add(uint8(9), "", "ERR")
	f.Add(uint8(23), "", `text {"a": {"b": [1, {"c": null}]}} {{{{ more`)
	f.Add(uint8(27), "", "I'm sorry, but I can't help with that.")
	f.Add(uint8(28+2*31), "", "Sure: 72")
	f.Add(uint8(29), "x", "")
	f.Fuzz(func(t *testing.T, typ uint8, value, answer string) {
		name := fuzzTypes[int(typ)%len(fuzzTypes)]
		it := item("72")
		if strings.HasSuffix(name, "choice") {
			it = mc("B")
		}
		var v any
		if value != "" {
			v = value
		}
		ans := Answer{Text: answer, Finish: fuzzFinishes[int(typ)/len(fuzzTypes)%len(fuzzFinishes)]}
		res, err := scorer().ScoreAnswer(context.Background(), with(it, dataset.Assertion{Type: name, Value: v, Weight: 2}), ans)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.Item != "q1" || se.Line != 7 {
				t.Fatalf("error %v does not name the item", err)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			if !errors.Is(err, ErrInvalid) && !strings.Contains(answer, "ERR") {
				t.Fatalf("%s: error %v is neither invalid nor from the judge", name, err)
			}
			return
		}
		if res.Score < 0 || res.Score > 1 || res.Pass != (res.Score == 1) || res.Pass != (len(res.Reasons) == 0) {
			t.Fatalf("%s on %q: inconsistent %+v", name, answer, res)
		}
		for _, r := range res.Reasons {
			if strings.ContainsAny(r, "\r\n") || !strings.HasPrefix(r, name+": ") {
				t.Fatalf("bad reason %q", r)
			}
		}
		// The not- form inverts the outcome.
		neg := "not-" + name
		if rest, ok := strings.CutPrefix(name, "not-"); ok {
			neg = rest
		}
		nres, err := scorer().ScoreAnswer(context.Background(), with(it, dataset.Assertion{Type: neg, Value: v}), ans)
		if err != nil {
			t.Fatalf("%s passes but %s errs: %v", name, neg, err)
		}
		if nres.Pass == res.Pass {
			t.Fatalf("%s and %s on %q agree: %+v, %+v", name, neg, answer, res, nres)
		}
	})
}
