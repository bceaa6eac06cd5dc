package dataset

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

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

// TranslateAssert turns a promptfoo assertion into digest's, or says why it
// cannot be: the reason ends with what to try. contains-all and
// icontains-all become one contains per value, each with its share of the
// weight: all must pass, as in promptfoo.
func TranslateAssert(name string, value any, weight float64) ([]Assertion, string) {
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
		out := make([]Assertion, len(vals))
		for i, v := range vals {
			out[i] = Assertion{Type: one, Value: v, Weight: weight / float64(len(vals))}
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
	return []Assertion{{Type: typ, Value: value, Weight: weight}}, ""
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

// IsPromptfooAssertion reports whether name, without "not-", is an
// assertion type promptfoo knows: in a CSV "__expected" cell, "name: value"
// is an assertion only then.
func IsPromptfooAssertion(name string) bool { return slices.Contains(promptfooAssertions, name) }
