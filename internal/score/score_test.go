package score

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/provider"
)

func f64(v float64) *float64 { return &v }

func item(expected ...string) dataset.Item {
	return dataset.Item{ID: "q1", Line: 7, Format: dataset.Native, Expected: expected,
		Messages: []provider.Message{{Role: "user", Content: "What is 8*9?"}}}
}

func with(it dataset.Item, asserts ...dataset.Assertion) dataset.Item {
	it.Asserts = asserts
	return it
}

var capitals = []string{"Paris", "London", "Berlin", "Madrid"}

func mc(expected ...string) dataset.Item {
	it := item(expected...)
	it.Format = dataset.Inspect
	it.Choices = capitals
	return it
}

// oneCase is an item with one assertion and an answer that passes it or
// not; run negated, the outcome flips.
type oneCase struct {
	name   string
	it     dataset.Item
	a      dataset.Assertion
	answer string
	pass   bool
	reason string // a failure's reason holds this
}

var personSchema = map[string]any{
	"type":       "object",
	"required":   []any{"name", "age"},
	"properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer", "minimum": 0}},
}

func oneCases() []oneCase {
	A := func(typ string, v any) dataset.Assertion { return dataset.Assertion{Type: typ, Value: v} }
	return []oneCase{
		// exact: trimmed, any of the values.
		{"exact", item("72"), A("exact", nil), " 72\n", true, ""},
		{"exact/mismatch", item("72"), A("exact", nil), "71", false, `exact: got "71", want "72"`},
		{"exact/any", item("72", "seventy-two"), A("exact", nil), "seventy-two", true, ""},
		{"exact/case", item("Paris"), A("exact", nil), "paris", false, `want "Paris"`},
		{"exact/value", item("ignored"), A("exact", "yes"), "yes", true, ""},
		{"exact/number value", item(), A("exact", 72.0), "72", true, ""},
		{"exact/list value", item(), A("exact", []any{"a", "b"}), "b", true, ""},
		{"exact/list reason", item(), A("exact", []any{"a", "b", "c", "d", "e"}), "z", false, `want "a", "b", "c" or 2 more`},
		// includes
		{"includes", item("Paris"), A("includes", nil), "It is Paris.", true, ""},
		{"includes/case", item("Paris"), A("includes", nil), "it is paris", false, `includes: "Paris" not found in "it is paris"`},
		{"includes/any", item(), A("includes", []any{"Rome", "Paris"}), "Paris!", true, ""},
		// icontains, Unicode-aware
		{"icontains", item("PARIS"), A("icontains", nil), "it is paris", true, ""},
		{"icontains/greek", item("ΣΟΦΊΑ"), A("icontains", nil), "η σοφία μας", true, ""},
		{"icontains/final sigma", item("σοφος"), A("icontains", nil), "ΣΟΦΟΣ", true, ""},
		{"icontains/kelvin", item("k"), A("icontains", nil), "300 \u212a", true, ""},
		{"icontains/miss", item("Rome"), A("icontains", nil), "paris", false, `icontains: "Rome" not found in "paris"`},
		// starts-with: openai/evals Match, the answer left-trimmed.
		{"starts-with", item("Paris"), A("starts-with", nil), "  Paris is the capital.", true, ""},
		{"starts-with/ideal space", item(" Paris"), A("starts-with", nil), "Paris.", true, ""},
		{"starts-with/miss", item("Paris"), A("starts-with", nil), "The capital is Paris", false, `starts-with: "The capital is Paris" does not start with "Paris"`},
		{"starts-with/any", item("Lyon", "Paris"), A("starts-with", nil), "Paris", true, ""},
		// regex
		{"regex", item(), A("regex", `^\d{3}-\d{4}$`), "555-1234", true, ""},
		{"regex/miss", item(), A("regex", `^\d{3}-\d{4}$`), "5551234", false, `regex: no match for "^\\d{3}-\\d{4}$" in "5551234"`},
		{"regex/expected", item(`(?i)paris`), A("regex", nil), "PARIS", true, ""},
		// numeric
		{"numeric/gsm8k", item("72"), A("numeric", nil), "She sold 48/2 = 24 clips in May.\n48+24 = 72\n#### 72", true, ""},
		{"numeric/miss", item("72"), A("numeric", nil), "#### 71", false, "numeric: got 71, want 72"},
		{"numeric/value", item(), A("numeric", 1234.0), "The answer is 1,234.", true, ""},
		{"numeric/none", item("72"), A("numeric", nil), "I don't know.", false, `numeric: no number in the answer "I don't know."`},
		// choice
		{"choice", mc("B"), A("choice", nil), "The answer is B.", true, ""},
		{"choice/miss", mc("B"), A("choice", nil), "A", false, `choice: got A ("Paris"), want B ("London")`},
		{"choice/none", mc("B"), A("choice", nil), "I am not sure", false, `choice: no choice letter or choice text found in "I am not sure"`},
		// json
		{"json", item(), A("json", nil), `{"a": 1}`, true, ""},
		{"json/fence", item(), A("json", nil), "```json\n{\"a\": [1, 2]}\n```", true, ""},
		{"json/invalid", item(), A("json", nil), `{"a": 1`, false, "json: not valid JSON"},
		{"json/prose", item(), A("json", nil), `Here: {"a": 1}`, false, "json: not valid JSON"},
		// json-schema
		{"json-schema", item(), A("json-schema", personSchema), `{"name": "Ada", "age": 36}`, true, ""},
		{"json-schema/fence", item(), A("json-schema", personSchema), "```json\n{\"name\": \"Ada\", \"age\": 36}\n```", true, ""},
		{"json-schema/invalid", item(), A("json-schema", personSchema), `{"name": "Ada", "age": -1}`, false, "json-schema: not valid against the schema: at '/age'"},
		{"json-schema/missing", item(), A("json-schema", personSchema), `{"name": "Ada"}`, false, "json-schema: not valid against the schema: "},
		{"json-schema/not json", item(), A("json-schema", personSchema), `name: Ada`, false, "json-schema: not valid JSON"},
		{"json-schema/text schema", item(), A("json-schema", `{"type": "array"}`), `[1]`, true, ""},
		{"json-schema/expected schema", item(`{"type": "array"}`), A("json-schema", nil), `{}`, false, "not valid against the schema"},
		// judge, with the fake judge of scorer(): passes answers holding "good".
		{"judge", item("72"), A("judge", "Is it right?"), "a good answer", true, ""},
		{"judge/fail", item("72"), A("judge", nil), "a bad answer", false, "judge: FAIL: a bad answer"},
		// refusal, by the text of a whole answer (see refusal_test.go).
		{"refusal", item("72"), A("refusal", nil), "I'm sorry, but I can't help with that.", true, ""},
		{"refusal/empty", item(), A("refusal", nil), "", true, ""},
		{"refusal/answer", item("72"), A("refusal", nil), "It is 72.", false, `refusal: the answer is not a refusal: "It is 72."`},
		{"refusal/is-refusal", item(), A("is-refusal", nil), "As an AI, I cannot do that.", true, ""},
		{"refusal/is-refusal answer", item(), A("is-refusal", nil), "72", false, `is-refusal: the answer is not a refusal: "72"`},
	}
}

// fakeJudge passes answers that hold "good" and fails with "ERR" in them.
// Graded, it gives the score written "score=N" in the answer.
func fakeJudge(_ context.Context, q JudgeRequest) (Verdict, error) {
	answer := q.Answer
	if strings.Contains(answer, "ERR") {
		return Verdict{}, errors.New("judge model unavailable")
	}
	if q.Scale != nil {
		var n float64
		_, after, _ := strings.Cut(answer, "score=")
		fmt.Sscan(after, &n)
		return Verdict{Score: n, Reason: "graded " + answer}, nil
	}
	if strings.Contains(answer, "good") {
		return Verdict{Pass: true, Reason: "PASS: " + answer}, nil
	}
	return Verdict{Reason: "FAIL: " + answer}, nil
}

func scorer() *Scorer { return &Scorer{Judge: fakeJudge} }

func TestAssertionTypes(t *testing.T) {
	for _, tc := range oneCases() {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scorer().Score(context.Background(), with(tc.it, tc.a), tc.answer)
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			checkResult(t, res, tc.pass, tc.reason)
		})
	}
}

func TestNotForms(t *testing.T) {
	for _, tc := range oneCases() {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.a
			a.Type = "not-" + a.Type
			res, err := scorer().Score(context.Background(), with(tc.it, a), tc.answer)
			if err != nil {
				t.Fatalf("Score: %v", err)
			}
			if res.Pass == tc.pass {
				t.Fatalf("%s: Pass = %v, want %v", a.Type, res.Pass, !tc.pass)
			}
			if res.Pass {
				if len(res.Reasons) != 0 || res.Score != 1 {
					t.Errorf("passing result %+v", res)
				}
				return
			}
			if len(res.Reasons) != 1 || !strings.HasPrefix(res.Reasons[0], a.Type+": ") {
				t.Errorf("Reasons = %q, want one starting %q", res.Reasons, a.Type+": ")
			}
			if res.Score != 0 {
				t.Errorf("Score = %v, want 0", res.Score)
			}
		})
	}
}

func checkResult(t *testing.T, res Result, pass bool, reason string) {
	t.Helper()
	if res.Pass != pass {
		t.Fatalf("Pass = %v, want %v (reasons %q)", res.Pass, pass, res.Reasons)
	}
	if pass {
		if res.Score != 1 || len(res.Reasons) != 0 {
			t.Errorf("passing result %+v, want score 1 and no reasons", res)
		}
		return
	}
	if res.Score != 0 {
		t.Errorf("Score = %v, want 0", res.Score)
	}
	if len(res.Reasons) != 1 || !strings.Contains(res.Reasons[0], reason) {
		t.Errorf("Reasons = %q, want one holding %q", res.Reasons, reason)
	}
}

func TestNotReasons(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		value  any
		answer string
		reason string
	}{
		{"not-exact", "72", "72", `not-exact: got "72", which equals "72"`},
		{"not-includes", "Paris", "in Paris", `not-includes: found "Paris" in "in Paris"`},
		{"not-icontains", "PARIS", "in paris", `not-icontains: found "PARIS" in "in paris"`},
		{"not-starts-with", "Sorry", "Sorry, no.", `not-starts-with: "Sorry, no." starts with "Sorry"`},
		{"not-regex", `\d+`, "call 555", `not-regex: "\\d+" matches "555"`},
		{"not-numeric", "72", "#### 72", "not-numeric: got 72, which equals 72"},
		{"not-json", nil, "[]", `not-json: the answer holds valid JSON: "[]"`},
		{"not-judge", nil, "good", "not-judge: the judge passed it: PASS: good"},
	} {
		res, err := scorer().Score(context.Background(), with(item(), dataset.Assertion{Type: tc.typ, Value: tc.value}), tc.answer)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		if res.Pass || len(res.Reasons) != 1 || res.Reasons[0] != tc.reason {
			t.Errorf("%s on %q: %+v, want the reason %q", tc.typ, tc.answer, res, tc.reason)
		}
	}
}

func TestAliases(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		value  any
		answer string
		pass   bool
	}{
		{"equals", "72", "72 ", true},
		{"equals", "72", "71", false},
		{"contains", "Paris", "in Paris", true},
		{"contains", "Paris", "in paris", false},
		{"not-contains", "sorry", "in Paris", true},
		{"icontains", "paris", "PARIS", true},
		{"starts-with", "Yes", "Yes.", true},
		{"regex", "^a+$", "aaa", true},
		{"is-json", nil, `{"a":1}`, true},
		{"is-json", nil, `{a:1}`, false},
		{"is-json", personSchema, `{"name":"Ada","age":1}`, true}, // with a value: a schema
		{"is-json", personSchema, `{"name":"Ada"}`, false},
		{"not-is-json", nil, `nope`, true},
		{"contains-json", nil, `Sure! Here it is: {"a": {"b": [1, 2]}} Hope it helps.`, true},
		{"contains-json", nil, "Here:\n```json\n[1, 2]\n```\nDone.", true},
		{"contains-json", nil, `{"a": 1}`, true},
		{"contains-json", nil, `no json {here}`, false},
		{"contains-json", personSchema, `Result: {"x": 1} and {"name": "Ada", "age": 3}.`, true},
		{"contains-json", personSchema, `Result: {"x": 1}.`, false},
		{"not-contains-json", nil, `plain text`, true},
		{"llm-rubric", "Is it polite?", "a good answer", true},
		{"llm-rubric", "Is it polite?", "rude", false},
		{"model-graded-closedqa", "Is it correct?", "a good answer", true},
		{"EXACT", "72", "72", true},
		{" Not-Exact ", "72", "71", true},
	} {
		res, err := scorer().Score(context.Background(), with(item(), dataset.Assertion{Type: tc.typ, Value: tc.value}), tc.answer)
		if err != nil {
			t.Errorf("%s: %v", tc.typ, err)
			continue
		}
		if res.Pass != tc.pass {
			t.Errorf("%s %v on %q: Pass = %v, want %v (%q)", tc.typ, tc.value, tc.answer, res.Pass, tc.pass, res.Reasons)
		}
	}
}

func TestWeightsAndThresholds(t *testing.T) {
	ok := dataset.Assertion{Type: "includes", Value: "Paris"}
	bad := dataset.Assertion{Type: "includes", Value: "Rome"}
	w := func(a dataset.Assertion, weight float64, threshold *float64) dataset.Assertion {
		a.Weight, a.Threshold = weight, threshold
		return a
	}
	for _, tc := range []struct {
		name    string
		asserts []dataset.Assertion
		score   float64
		pass    bool
		reasons int
	}{
		{"all pass", []dataset.Assertion{ok, ok}, 1, true, 0},
		{"one fails: all must pass", []dataset.Assertion{ok, bad}, 0.5, false, 1},
		{"weight 0 is 1", []dataset.Assertion{w(ok, 0, nil), w(bad, 1, nil)}, 0.5, false, 1},
		{"weighted", []dataset.Assertion{w(ok, 3, nil), w(bad, 1, nil)}, 0.75, false, 1},
		{"threshold met", []dataset.Assertion{w(ok, 3, f64(0.7)), w(bad, 1, nil)}, 0.75, true, 1},
		{"threshold met exactly", []dataset.Assertion{w(ok, 3, f64(0.75)), w(bad, 1, nil)}, 0.75, true, 1},
		{"threshold missed", []dataset.Assertion{w(ok, 3, f64(0.8)), w(bad, 1, nil)}, 0.75, false, 1},
		{"largest threshold wins", []dataset.Assertion{w(ok, 3, f64(0.5)), w(bad, 1, f64(0.9))}, 0.75, false, 1},
		{"two thirds", []dataset.Assertion{ok, ok, w(bad, 0, f64(0.6666666666666666))}, 2.0 / 3, true, 1},
		{"threshold 0", []dataset.Assertion{w(bad, 1, f64(0))}, 0, true, 1},
		{"all fail", []dataset.Assertion{bad, bad}, 0, false, 2},
		{"huge weights", []dataset.Assertion{w(ok, 1e308, nil), w(bad, 1e308, nil)}, 0.5, false, 1},
		{"tiny weight", []dataset.Assertion{w(ok, 1e-300, nil), w(bad, 1, nil)}, 1e-300, false, 1},
	} {
		res, err := scorer().Score(context.Background(), with(item(), tc.asserts...), "Paris")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Pass != tc.pass || !near(res.Score, tc.score) || len(res.Reasons) != tc.reasons {
			t.Errorf("%s: %+v, want pass %v, score %v, %d reasons", tc.name, res, tc.pass, tc.score, tc.reasons)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func TestNumeric(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   float64
		found  bool
	}{
		{"#### 72", 72, true},
		{"Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips altogether.\n#### 72", 72, true},
		{"#### 1,234\nsome trailing 99", 1234, true}, // the number after ####, not the last
		{"The answer is 1,234.", 1234, true},
		{"Total: 1,234,567 units", 1234567, true},
		{"1,2,3", 3, true},
		{"It is -3.5 degrees", -3.5, true},
		{"It is −3.5 degrees", -3.5, true}, // U+2212
		{"x = -7", -7, true},
		{"(-2)", -2, true},
		{"costs $72", 72, true},
		{"lost -$3.50", -3.5, true},
		{"€1,000", 1000, true},
		{"72%", 72, true},
		{"from 10-20", 20, true},
		{"COVID-19", 19, true},
		{"0.5", 0.5, true},
		{"about .25", 0.25, true},
		{"3.14159", 3.14159, true},
		{"1.5e3 m", 1500, true},
		{"3eggs and 4", 4, true},
		{"answer: 42.", 42, true},
		{"#### ", 0, false},
		{"#### none, but earlier 5", 5, true}, // nothing after ####: the last number
		{"no number here", 0, false},
		{"", 0, false},
		{"12 apples, 7 pears", 7, true},
		{"1e999", 0, true}, // overflows to +Inf: found, matches nothing finite
	} {
		got, found := answerNumber(tc.answer)
		if found != tc.found || (found && tc.want != 0 && got != tc.want) {
			t.Errorf("answerNumber(%q) = %v, %v; want %v, %v", tc.answer, got, found, tc.want, tc.found)
		}
	}
	// Tolerance: relative or absolute.
	for _, tc := range []struct {
		tol    float64
		want   string
		answer string
		pass   bool
	}{
		{0, "72", "72.0000001", true},            // default 1e-6, absolute
		{0, "72", "72.01", false},                // beyond it
		{0, "1e12", "1000000000001", true},       // relative: 1e-12 off
		{0, "0", "0.0000005", true},              // absolute near zero
		{-1, "72", "72.0000001", false},          // negative: exact
		{-1, "72", "72.000", true},               // exact
		{0.01, "100", "100.9", true},             // relative 1%
		{0.01, "100", "102", false},              // more than 1%
		{0, "#### 18", "The answer is 18", true}, // expected read like an answer
		{0, "$1,234.50", "1234.5", true},
		{0, "72", "-72", false},
	} {
		s := &Scorer{Tolerance: tc.tol}
		res, err := s.Score(context.Background(), with(item(tc.want), dataset.Assertion{Type: "numeric"}), tc.answer)
		if err != nil {
			t.Fatalf("numeric %q: %v", tc.want, err)
		}
		if res.Pass != tc.pass {
			t.Errorf("tolerance %v: %q vs %q: Pass = %v, want %v (%q)", tc.tol, tc.answer, tc.want, res.Pass, tc.pass, res.Reasons)
		}
	}
	// An expected answer with no number is the dataset's mistake.
	_, err := scorer().Score(context.Background(), with(item("seventy-two"), dataset.Assertion{Type: "numeric"}), "72")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `has no number`) {
		t.Errorf("numeric with a non-number expected: err = %v", err)
	}
}

func TestChoice(t *testing.T) {
	for _, tc := range []struct {
		answer string
		want   int
		found  bool
	}{
		{"B", 1, true},
		{"b", 1, true},
		{"(B)", 1, true},
		{"B)", 1, true},
		{"[C]", 2, true},
		{"B.", 1, true},
		{" **B** ", 1, true},
		{"Answer: B", 1, true},
		{"ANSWER: C", 2, true},
		{"The answer is B.", 1, true},
		{"The answer is (d)", 3, true},
		{"The correct answer is option C because...", 2, true},
		{"I think A is tempting, but the answer is D.", 3, true},
		{"Answer: A. No wait, the answer is C.", 2, true},
		{"B) London", 1, true},
		{"(C) Berlin, since ...", 2, true},
		{"London", 1, true},
		{"london.", 1, true},
		{"The answer is Madrid.", 3, true},
		{"The answer is Berlin", 2, true}, // the text, not the letter B
		{"E", 0, false},                   // only four choices
		{"The answer is a city", 0, false},
		{"I don't know", 0, false},
		{"", 0, false},
	} {
		got, found := answerChoice(tc.answer, capitals)
		if found != tc.found || (found && got != tc.want) {
			t.Errorf("answerChoice(%q) = %d, %v; want %d, %v", tc.answer, got, found, tc.want, tc.found)
		}
	}
	// Expected as a letter, a choice text, or in any answer form.
	for _, exp := range []string{"B", "b", "(B)", "London", "london", "Answer: B"} {
		res, err := scorer().Score(context.Background(), with(mc(exp), dataset.Assertion{Type: "choice"}), "The answer is B.")
		if err != nil || !res.Pass {
			t.Errorf("expected %q: %+v, %v", exp, res, err)
		}
	}
	// Without choices, letters only.
	res, err := scorer().Score(context.Background(), with(item("C"), dataset.Assertion{Type: "choice"}), "Answer: C")
	if err != nil || !res.Pass {
		t.Errorf("choice without choices: %+v, %v", res, err)
	}
	// An expected answer that names no choice is the dataset's mistake.
	for _, it := range []dataset.Item{mc("Rome"), mc("F"), item("Rome")} {
		_, err := scorer().Score(context.Background(), with(it, dataset.Assertion{Type: "choice"}), "A")
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("choice expecting %q: err = %v, want an invalid assertion", it.Expected, err)
		}
	}
}

func TestJSONFences(t *testing.T) {
	for _, tc := range []struct {
		answer string
		pass   bool
	}{
		{`{"a": 1}`, true},
		{"  [1, 2, 3]\n", true},
		{"```json\n{\"a\": 1}\n```", true},
		{"```JSON\n{\"a\": 1}\n```", true},
		{"```\n{\"a\": 1}\n```", true},
		{"~~~json\n{\"a\": 1}\n~~~", true},
		{"```{\"a\": 1}```", true},
		{"```json\n{\"a\": 1\n```", false},
		{"```json\n{\"a\": 1}\n```\nMore text", false},
		{`"just a string"`, true},
		{`42`, true},
		{``, false},
		{`{"a": 1} {"b": 2}`, false},
	} {
		res, err := scorer().Score(context.Background(), with(item(), dataset.Assertion{Type: "json"}), tc.answer)
		if err != nil {
			t.Fatal(err)
		}
		if res.Pass != tc.pass {
			t.Errorf("json on %q: Pass = %v, want %v (%q)", tc.answer, res.Pass, tc.pass, res.Reasons)
		}
	}
}

func TestInvalidAssertions(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Scorer
		it   dataset.Item
		msg  string
	}{
		{"bad regex", scorer(), with(item(), dataset.Assertion{Type: "regex", Value: "a("}),
			`item "q1" (line 7): assert #1 regex: invalid pattern "a(" (Go RE2 syntax): missing closing ): "a("`},
		{"lookahead", scorer(), with(item(), dataset.Assertion{Type: "regex", Value: "(?=a)"}), "invalid pattern"},
		{"unknown type", scorer(), with(item("x"), dataset.Assertion{Type: "exact"}, dataset.Assertion{Type: "similar"}),
			`item "q1" (line 7): assert #2 similar: unknown assertion type "similar"`},
		{"no type", scorer(), with(item("x"), dataset.Assertion{}), "assertion has no type"},
		{"invalid schema", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: map[string]any{"type": "bogus"}}),
			`item "q1" (line 7): assert #1 json-schema: invalid schema: at '/type': value must be one of 'array', 'boolean'`},
		{"schema bad pattern", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: map[string]any{"pattern": "(?="}}),
			`invalid schema: at '/pattern': '(?=' is not valid regex`},
		{"schema bad pointer", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: `{"$ref": "#/defs/x"}`}),
			`invalid schema: json-pointer in "#/defs/x" not found`},
		{"schema not JSON", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: "{not json"}), "invalid schema: not JSON"},
		{"schema not an object", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: []any{1.0}}), "invalid schema: want a JSON object"},
		{"schema reads a file", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: map[string]any{"$ref": "file:///etc/passwd"}}),
			"schemas may not refer to other files or URLs"},
		{"schema reads a relative file", scorer(), with(item(), dataset.Assertion{Type: "json-schema", Value: map[string]any{"$ref": "other.json"}}),
			"schemas may not refer to other files or URLs"},
		{"json-schema without schema", scorer(), with(item(), dataset.Assertion{Type: "json-schema"}), "no schema"},
		{"no value, no expected", scorer(), with(item(), dataset.Assertion{Type: "exact"}), "no value, and the item has no expected answer"},
		{"object value", scorer(), with(item(), dataset.Assertion{Type: "includes", Value: map[string]any{"a": 1.0}}), `value {"a":1}: want a string`},
		{"nested list", scorer(), with(item(), dataset.Assertion{Type: "includes", Value: []any{[]any{"a"}}}), "a list may hold strings and numbers only"},
		{"negative weight", scorer(), with(item("x"), dataset.Assertion{Type: "exact", Weight: -1}), "weight -1"},
		{"threshold above 1", scorer(), with(item("x"), dataset.Assertion{Type: "exact", Threshold: f64(1.5)}), "threshold 1.5"},
		{"bad default", &Scorer{Default: "fuzzy"}, item("x"), `item "q1" (line 7): fuzzy: --assert: unknown assertion type "fuzzy"`},
		{"nil judge", &Scorer{}, with(item("x"), dataset.Assertion{Type: "judge"}), "judge assertion needs --judge MODEL"},
		{"nil judge, default", &Scorer{Default: "judge"}, item("x"), "judge assertion needs --judge MODEL"},
		{"promptfoo without asserts", &Scorer{}, dataset.Item{ID: "t3", Line: 3, Format: dataset.Promptfoo},
			`item "t3" (line 3): no assertion: a promptfoo test case needs an "assert" list`},
	} {
		res, err := tc.s.Score(context.Background(), tc.it, "answer")
		if err == nil {
			t.Errorf("%s: no error, result %+v", tc.name, res)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", tc.name, err)
		}
		var se *Error
		if !errors.As(err, &se) || se.Item != tc.it.ID || se.Line != tc.it.Line {
			t.Errorf("%s: %#v does not name the item", tc.name, err)
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error\n%v\nwant it to hold\n%v", tc.name, err, tc.msg)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", tc.name, err)
		}
	}
}

func TestJudge(t *testing.T) {
	var got struct{ rubric, question, answer string }
	calls := 0
	judge := func(ctx context.Context, q JudgeRequest) (Verdict, error) {
		calls++
		got.rubric, got.question, got.answer = q.Rubric, q.Question, q.Answer
		return fakeJudge(ctx, q)
	}
	s := &Scorer{Judge: judge}
	ctx := context.Background()

	res, err := s.Score(ctx, with(item("72"), dataset.Assertion{Type: "judge", Value: "Polite and correct."}), "a good answer")
	if err != nil || !res.Pass {
		t.Fatalf("pass: %+v, %v", res, err)
	}
	if got.rubric != "Polite and correct." || got.question != "What is 8*9?" || got.answer != "a good answer" {
		t.Errorf("judge called with %+v", got)
	}
	// No value: the rubric is built from the expected answer.
	res, err = s.Score(ctx, with(item("72"), dataset.Assertion{Type: "judge"}), "bad\nanswer")
	if err != nil || res.Pass || len(res.Reasons) != 1 || res.Reasons[0] != "judge: FAIL: bad answer" {
		t.Fatalf("fail: %+v, %v", res, err)
	}
	if got.rubric != "The answer is correct. Expected: 72" {
		t.Errorf("default rubric %q", got.rubric)
	}
	// No value, no expected answer.
	if _, err := s.Score(ctx, with(item(), dataset.Assertion{Type: "llm-rubric"}), "good"); err != nil || got.rubric != "The answer is correct." {
		t.Errorf("rubric without expected: %q, %v", got.rubric, err)
	}
	// The judge's failure is an error, not an invalid assertion.
	_, err = s.Score(ctx, with(item("72"), dataset.Assertion{Type: "judge"}), "ERR")
	if err == nil || errors.Is(err, ErrInvalid) || err.Error() != `item "q1" (line 7): assert #1 judge: judge model unavailable` {
		t.Errorf("judge error: %v", err)
	}
	// The judge is called only once every assertion is known valid.
	calls = 0
	_, err = s.Score(ctx, with(item("72"), dataset.Assertion{Type: "judge"}, dataset.Assertion{Type: "regex", Value: "("}), "good")
	if !errors.Is(err, ErrInvalid) || calls != 0 {
		t.Errorf("judge called %d times before an invalid assertion (err %v)", calls, err)
	}
	// Judge calls come after the cheap checks, and all are counted.
	res, err = s.Score(ctx, with(item("72"), dataset.Assertion{Type: "judge"}, dataset.Assertion{Type: "includes", Value: "72"}), "good: 71")
	if err != nil || res.Pass || res.Score != 0.5 || len(res.Reasons) != 1 || !strings.HasPrefix(res.Reasons[0], "includes:") {
		t.Errorf("judge with includes: %+v, %v", res, err)
	}
	// The judge sees the last user message.
	it := item("x")
	it.Messages = []provider.Message{{Role: "user", Content: "first"}, {Role: "assistant", Content: "reply"}, {Role: "user", Content: "second"}}
	if _, err := s.Score(ctx, with(it, dataset.Assertion{Type: "judge"}), "good"); err != nil || got.question != "second" {
		t.Errorf("question %q, %v", got.question, err)
	}
}

func TestDefaults(t *testing.T) {
	native := item("Paris")
	evals := item("Paris")
	evals.Format = dataset.OpenAIEvals
	inspect := item("Paris")
	inspect.Format = dataset.Inspect
	promptfoo := dataset.Item{ID: "t1", Line: 1, Format: dataset.Promptfoo}
	noFormat := item("Paris")
	noFormat.Format = ""
	for _, tc := range []struct {
		name   string
		s      Scorer
		it     dataset.Item
		answer string
		pass   bool
		reason string
	}{
		// native → exact
		{"native exact", Scorer{}, native, " Paris ", true, ""},
		{"native is not includes", Scorer{}, native, "It is Paris", false, `exact: got "It is Paris", want "Paris"`},
		{"no format → exact", Scorer{}, noFormat, "Paris", true, ""},
		// openai-evals → starts-with
		{"evals starts-with", Scorer{}, evals, "  Paris, of course", true, ""},
		{"evals not includes", Scorer{}, evals, "It is Paris", false, `starts-with: "It is Paris" does not start with "Paris"`},
		// inspect → includes, or choice with choices
		{"inspect includes", Scorer{}, inspect, "It is Paris.", true, ""},
		{"inspect case", Scorer{}, inspect, "it is paris", false, "includes:"},
		{"inspect choice", Scorer{}, mc("B"), "ANSWER: B", true, ""},
		{"inspect choice miss", Scorer{}, mc("B"), "ANSWER: C", false, "choice:"},
		// --assert overrides the format default, on Expected.
		{"default includes", Scorer{Default: "includes"}, native, "It is Paris", true, ""},
		{"default icontains", Scorer{Default: "icontains"}, evals, "it is PARIS", true, ""},
		{"default numeric", Scorer{Default: "numeric"}, item("72"), "#### 72", true, ""},
		{"default not-exact", Scorer{Default: "not-exact"}, native, "London", true, ""},
		{"default json, no expected", Scorer{Default: "json"}, item(), `{}`, true, ""},
		{"default on promptfoo", Scorer{Default: "json"}, promptfoo, `{}`, true, ""},
		// Item asserts beat --assert.
		{"asserts first", Scorer{Default: "exact"}, with(native, dataset.Assertion{Type: "includes"}), "It is Paris", true, ""},
		// Nothing to check.
		{"nothing", Scorer{}, item(), "anything", false, NothingToCheck},
		{"nothing, evals", Scorer{}, dataset.Item{Format: dataset.OpenAIEvals}, "x", false, NothingToCheck},
		{"nothing, inspect", Scorer{}, dataset.Item{Format: dataset.Inspect, Choices: capitals}, "A", false, NothingToCheck},
		{"nothing, empty expected", Scorer{}, item(""), "", false, NothingToCheck},
		{"nothing for the default", Scorer{Default: "exact"}, item(), "x", false, NothingToCheck},
	} {
		res, err := tc.s.Score(context.Background(), tc.it, tc.answer)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if res.Pass != tc.pass {
			t.Errorf("%s: Pass = %v, want %v (%q)", tc.name, res.Pass, tc.pass, res.Reasons)
		}
		if !tc.pass && (len(res.Reasons) != 1 || !strings.Contains(res.Reasons[0], tc.reason)) {
			t.Errorf("%s: Reasons = %q, want one holding %q", tc.name, res.Reasons, tc.reason)
		}
	}
}

func TestCheckType(t *testing.T) {
	for _, ok := range []string{"exact", "not-exact", "includes", "icontains", "starts-with", "regex", "numeric", "choice",
		"json", "json-schema", "judge", "equals", "contains", "not-contains", "is-json", "contains-json", "llm-rubric",
		"model-graded-closedqa", "Not-Regex"} {
		if err := CheckType(ok); err != nil {
			t.Errorf("CheckType(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "not-", "similar", "not-not-exact", "javascript"} {
		if CheckType(bad) == nil {
			t.Errorf("CheckType(%q) = nil, want an error", bad)
		}
	}
}

func TestReasonsClipped(t *testing.T) {
	long := strings.Repeat("é", 500)
	res, err := scorer().Score(context.Background(), with(item(long), dataset.Assertion{Type: "exact"}), long+"x")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reasons) != 1 || len([]rune(res.Reasons[0])) > 200 || !strings.Contains(res.Reasons[0], "…") {
		t.Errorf("reason not clipped: %q", res.Reasons)
	}
	if strings.Contains(res.Reasons[0], "\n") {
		t.Errorf("reason spans lines")
	}
	res, _ = scorer().Score(context.Background(), with(item("a"), dataset.Assertion{Type: "exact"}), "line1\nline2")
	if strings.Contains(res.Reasons[0], "\n") {
		t.Errorf("reason spans lines: %q", res.Reasons[0])
	}
}

func TestFold(t *testing.T) {
	for _, tc := range [][2]string{{"Straße", "STRAßE"}, {"ǅ", "ǆ"}, {"ſ", "S"}, {"Ω", "ω"}, {"\u212a", "k"}} {
		if fold(tc[0]) != fold(tc[1]) {
			t.Errorf("fold(%q) = %q, fold(%q) = %q", tc[0], fold(tc[0]), tc[1], fold(tc[1]))
		}
	}
}

func TestConcurrent(t *testing.T) {
	s := scorer()
	it := with(item("72"),
		dataset.Assertion{Type: "regex", Value: `\b72\b`},
		dataset.Assertion{Type: "json-schema", Value: personSchema},
		dataset.Assertion{Type: "numeric"},
		dataset.Assertion{Type: "judge"})
	done := make(chan Result)
	for range 8 {
		go func() {
			for range 50 {
				res, err := s.Score(context.Background(), it, `{"name": "good", "age": 72}`)
				if err != nil {
					t.Error(err)
				}
				done <- res
			}
		}()
	}
	for range 8 * 50 {
		if res := <-done; !res.Pass {
			t.Fatalf("%+v", res)
		}
	}
}

// An expected letter is a letter even when a choice's text is a letter too.
func TestExpectedLetterWinsOverChoiceText(t *testing.T) {
	it := dataset.Item{ID: "x", Line: 1, Format: dataset.Inspect, Choices: []string{"B", "A"}, Expected: []string{"A"}}
	s := &Scorer{}
	for answer, want := range map[string]bool{"A": true, "The answer is A.": true, "B": false} {
		r, err := s.Score(context.Background(), it, answer)
		if err != nil || r.Pass != want {
			t.Errorf("answer %q: pass %v, %v; want %v", answer, r.Pass, err, want)
		}
	}
}

// TestEveryNameADatasetTakesScores: --assert takes every assertion name a
// dataset line takes (contains-any once exited 2 while a line accepted it).
func TestEveryNameADatasetTakesScores(t *testing.T) {
	names := append([]string{"equals", "contains", "contains-any", "icontains-any", "is-json", "contains-json", "llm-rubric", "model-graded-closedqa", "is-refusal"},
		dataset.AssertionTypes...)
	for _, n := range names {
		for _, name := range []string{n, "not-" + n, strings.ToUpper(n)} {
			if _, known := dataset.AssertionType(name, false); !known {
				t.Errorf("a dataset line refuses %q", name)
			}
			if err := CheckType(name); err != nil {
				t.Errorf("--assert %s: %v", name, err)
			}
		}
	}
	if err := CheckType("contains-all"); err == nil || !strings.Contains(err.Error(), "promptfoo's equals") {
		t.Errorf("an unknown name: %v", err)
	}
}

// Assertions that name metrics are scored per metric, each as the whole
// item is: its weighted share, pass when all its assertions pass or at its
// lowest threshold. The item's own pass and score stay over every
// assertion.
func TestScorePerMetric(t *testing.T) {
	half := 0.5
	it := dataset.Item{ID: "m", Format: dataset.Native, Expected: []string{"42"}, Asserts: []dataset.Assertion{
		{Type: "includes", Value: "42"},
		{Type: "not-icontains", Value: "obviously", Metric: "bias", Weight: 3},
		{Type: "not-icontains", Value: "clearly", Metric: "bias", Weight: 1},
		{Type: "includes", Value: "because", Metric: "reasoning", Threshold: &half},
		{Type: "includes", Value: "therefore", Metric: "reasoning"},
	}}
	var s Scorer
	res, err := s.Score(context.Background(), it, "Clearly it is 42 because of maths.")
	if err != nil {
		t.Fatal(err)
	}
	want := []MetricResult{{"accuracy", true, 1}, {"bias", false, 0.75}, {"reasoning", true, 0.5}}
	if len(res.Metrics) != len(want) {
		t.Fatalf("metrics %+v, want %+v", res.Metrics, want)
	}
	for i, w := range want {
		if g := res.Metrics[i]; g.Name != w.Name || g.Pass != w.Pass || math.Abs(g.Score-w.Score) > 1e-12 {
			t.Errorf("metric %d = %+v, want %+v", i, g, w)
		}
	}
	if m, ok := res.Metric("bias"); !ok || m.Score != 0.75 {
		t.Errorf("Metric(bias) = %+v, %v", m, ok)
	}
	// Over all: 1+3+1 of weights 1+3+1+1+1 passed, and the threshold 0.5
	// applies to the item as before.
	if math.Abs(res.Score-5.0/7) > 1e-12 || !res.Pass {
		t.Errorf("item: pass %v score %v, want pass at 5/7", res.Pass, res.Score)
	}
	if names := s.MetricNames(it); strings.Join(names, " ") != "accuracy bias reasoning" {
		t.Errorf("MetricNames = %v", names)
	}
	// Without names, one metric, accuracy, equal to the item's grade.
	res, err = s.Score(context.Background(), dataset.Item{ID: "p", Format: dataset.Native, Expected: []string{"42"}}, "43")
	if err != nil || len(res.Metrics) != 1 || res.Metrics[0] != (MetricResult{"accuracy", false, 0}) || res.Pass {
		t.Errorf("plain item: %+v, %v", res, err)
	}
	// --assert TYPE@METRIC names the default assertion's metric.
	s.Default, s.DefaultMetric = "exact", "sums"
	res, err = s.Score(context.Background(), dataset.Item{ID: "d", Format: dataset.Native, Expected: []string{"42"}}, "42")
	if err != nil || len(res.Metrics) != 1 || res.Metrics[0] != (MetricResult{"sums", true, 1}) {
		t.Errorf("default assertion: %+v, %v", res, err)
	}
}
