package dataset

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pfAssert is one assertion of a promptfoo test, in digest's terms.
type pfAssert struct {
	typ    string // digest's type, "not-" kept
	value  any
	weight float64
	metric string // "" for DefaultMetric
	// threshold and scale grade a judge: llm-rubric given a threshold,
	// g-eval always (see GradeDefaults).
	threshold *float64
	scale     string
}

// asAssertion is p in a dataset line.
func (p pfAssert) asAssertion(value any) Assertion {
	return Assertion{Type: p.typ, Value: value, Weight: p.weight, Metric: p.metric, Threshold: p.threshold, Scale: p.scale}
}

// testThreshold puts a test's threshold, the item's pass mark, on the
// first of its assertions that passes or fails, since a graded judge's
// threshold is its own. It says why when there is none.
func testThreshold(as []Assertion, threshold *float64) string {
	if threshold == nil || len(as) == 0 {
		return ""
	}
	for i := range as {
		if as[i].Scale == "" {
			as[i].Threshold = threshold
			return ""
		}
	}
	return "the test's threshold has no assertion to hold to: its assertions are graded judges (llm-rubric with a threshold, g-eval), each with a threshold of its own. Try: remove the test's threshold"
}

// gradedNames are promptfoo's assertions that take a threshold of their
// own: the graded judges.
var gradedNames = []string{"llm-rubric", "g-eval"}

// grade gives a translated assertion, written name, its threshold and the
// scale GradeDefaults sets, or says why it cannot have them.
func (p *pfAssert) grade(name string, threshold *float64) string {
	a := Assertion{Type: p.typ, Value: p.value, Threshold: threshold}
	if err := GradeDefaults(name, &a); err != nil {
		return err.Error()
	}
	p.threshold, p.scale = a.Threshold, a.Scale
	return ""
}

// promptfooAssertions are the assertion types promptfoo knows. In a CSV
// "__expected" cell, "name: value" is an assertion only when name is one of
// them; any other text is compared with equals, as promptfoo does.
var promptfooAssertions = []string{
	"answer-relevance", "assert-set", "bleu", "classifier", "contains", "contains-all",
	"contains-any", "contains-html", "contains-json", "contains-sql", "contains-xml",
	"context-faithfulness", "context-recall", "context-relevance", "conversation-relevance",
	"cost", "equals", "factuality", "finish-reason", "g-eval", "gleu", "guardrails",
	"icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal",
	"is-sql", "is-valid-function-call", "is-valid-openai-function-call",
	"is-valid-openai-tools-call", "is-xml", "javascript", "latency", "levenshtein",
	"llm-rubric", "meteor", "model-graded-closedqa", "model-graded-factuality",
	"moderation", "perplexity", "perplexity-score", "pi", "python", "regex", "rouge-n",
	"ruby", "search-rubric", "select-best", "similar", "starts-with", "tool-call-f1",
	"trace-error-spans", "trace-span-count", "trace-span-duration", "webhook", "word-count",
}

// assertTry says what to write instead of an assertion digest cannot score.
func assertTry(base string) string {
	switch base {
	case "javascript", "python", "ruby", "webhook":
		return "Try: the same check as regex, contains, equals or is-json, or llm-rubric with --judge"
	case "similar", "levenshtein", "rouge-n", "bleu", "gleu", "meteor":
		return "Try: icontains or regex, or llm-rubric with --judge"
	case "factuality", "model-graded-factuality", "answer-relevance", "context-faithfulness",
		"context-recall", "context-relevance", "conversation-relevance", "search-rubric", "select-best":
		return "Try: llm-rubric with --judge"
	}
	return "Try: one digest scores (equals, contains, icontains, contains-any, contains-all, starts-with, regex, is-json, contains-json, llm-rubric), or remove it"
}

// needsValue is the digest types that compare with a value: in a promptfoo
// test there is no expected answer to fall back on.
var needsValue = []string{"exact", "includes", "icontains", "starts-with", "regex", "judge", "numeric"}

// translateAssert turns a promptfoo assertion into digest's, or says why it
// cannot be: the reason ends with what to try. contains-all and
// icontains-all become one contains per value, each with its share of the
// weight: all must pass, as in promptfoo.
func translateAssert(name string, value any, weight float64) ([]pfAssert, string) {
	low := strings.ToLower(strings.TrimSpace(name))
	neg, base := "", low
	if rest, ok := strings.CutPrefix(low, "not-"); ok {
		neg, base = "not-", rest
	}
	switch base {
	case "contains-any", "icontains-any", "contains-all", "icontains-all":
		if s, ok := value.(string); ok {
			value = splitList(s)
		}
		if l, ok := value.([]any); !ok || len(l) == 0 {
			return nil, base + " needs a list of values (or a comma-separated string). Try: value: [a, b]"
		}
	case "equals", "contains", "icontains", "starts-with":
		switch value.(type) {
		case []any, map[string]any:
			return nil, base + " compares with one string, not " + valueKind(value) + ". Try: contains-any for a list of strings"
		}
	}
	if base == "contains-all" || base == "icontains-all" {
		if neg != "" {
			return nil, "not-" + base + " has no digest equivalent. Try: one not-contains per value that must be missing"
		}
		one := "includes"
		if base == "icontains-all" {
			one = "icontains"
		}
		vals := value.([]any)
		if weight == 0 {
			weight = 1 // digest's default weight
		}
		out := make([]pfAssert, len(vals))
		for i, v := range vals {
			out[i] = pfAssert{typ: one, value: v, weight: weight / float64(len(vals))}
		}
		return out, ""
	}
	typ, known := AssertionType(name, value != nil)
	if !known {
		if slices.Contains(promptfooAssertions, base) {
			return nil, "assertion " + strconv.Quote(low) + " is not one digest scores. " + assertTry(base)
		}
		return nil, "unknown assertion type " + strconv.Quote(name) + ". " + assertTry("")
	}
	if slices.Contains(needsValue, strings.TrimPrefix(typ, "not-")) && emptyValue(value) {
		return nil, low + " needs a value. Try: value: the text to look for"
	}
	if strings.TrimPrefix(typ, "not-") == "regex" {
		for _, s := range valueStrings(value) {
			if _, err := regexp.Compile(s); err != nil {
				return nil, "regex " + strconv.Quote(clip(s)) + " is not one Go can run (RE2: no lookaround or backreferences). Try: an equivalent without them"
			}
		}
	}
	return []pfAssert{{typ: typ, value: value, weight: weight}}, ""
}

func emptyValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return strings.TrimSpace(v) == ""
	case []any:
		return len(v) == 0
	}
	return false
}

func valueKind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return "that"
}

// splitList reads promptfoo's comma-separated list ("a, b, \"c, d\""),
// double quotes keeping a comma in a value.
func splitList(s string) []any {
	var out []any
	var cur strings.Builder
	quoted := false
	flush := func() {
		f := strings.TrimSpace(cur.String())
		if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
			f = f[1 : len(f)-1]
		}
		if f != "" {
			out = append(out, f)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// csvAssertion matches promptfoo's string form of an assertion:
// [not-]type[(threshold)][:value].
var csvAssertion = regexp.MustCompile(`^(not-)?(\w+(?:-\w+)*)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$`)

// assertionFromString reads an "__expected" cell as promptfoo does:
// "javascript:", "fn:", "eval:" and "python:" are code; "grade:" and
// "llm-rubric:" a rubric; "type: value" an assertion of a type promptfoo
// knows; anything else a value that the answer must equal.
func assertionFromString(cell string) ([]pfAssert, string) {
	s := strings.TrimSpace(cell)
	for _, p := range []struct{ prefix, typ string }{
		{"javascript:", "javascript"}, {"fn:", "javascript"}, {"eval:", "javascript"},
		{"python:", "python"}, {"grade:", "llm-rubric"}, {"llm-rubric:", "llm-rubric"},
	} {
		if rest, ok := strings.CutPrefix(s, p.prefix); ok {
			return translateAssert(p.typ, strings.TrimSpace(rest), 0)
		}
	}
	if m := csvAssertion.FindStringSubmatch(s); m != nil && slices.Contains(promptfooAssertions, m[2]) {
		var threshold *float64
		if m[3] != "" {
			th, err := strconv.ParseFloat(m[3], 64)
			if !slices.Contains(gradedNames, m[2]) || err != nil || th > 1 {
				return nil, "a threshold in " + strconv.Quote(clip(s)) + " is for graded assertions (llm-rubric, g-eval), from 0 to 1. Try: the assertion without (" + m[3] + ")"
			}
			threshold = &th
		}
		var value any
		if strings.Contains(s, ":") {
			value = strings.TrimSpace(m[4])
		}
		as, why := translateAssert(m[1]+m[2], value, 0)
		for i := range as {
			if why == "" {
				why = as[i].grade(m[1]+m[2], threshold)
			}
		}
		if why != "" {
			return nil, why
		}
		return as, ""
	}
	return []pfAssert{{typ: "exact", value: s}}, ""
}
