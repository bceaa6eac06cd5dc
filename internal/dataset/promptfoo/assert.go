package promptfoo

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/dataset"
)

// assertion is one assertion of a promptfoo test, in digest's terms.
type assertion struct {
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
func (p assertion) asAssertion(value any) dataset.Assertion {
	return dataset.Assertion{Type: p.typ, Value: value, Weight: p.weight, Metric: p.metric, Threshold: p.threshold, Scale: p.scale}
}

// testThreshold puts a test's threshold, the item's pass mark, on the
// first of its assertions that passes or fails, since a graded judge's
// threshold is its own. It says why when there is none.
func testThreshold(as []dataset.Assertion, threshold *float64) string {
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
func (p *assertion) grade(name string, threshold *float64) string {
	a := dataset.Assertion{Type: p.typ, Value: p.value, Threshold: threshold}
	if err := dataset.GradeDefaults(name, &a); err != nil {
		return err.Error()
	}
	p.threshold, p.scale = a.Threshold, a.Scale
	return ""
}

// csvAssertion matches promptfoo's string form of an assertion:
// [not-]type[(threshold)][:value].
var csvAssertion = regexp.MustCompile(`^(not-)?(\w+(?:-\w+)*)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$`)

// assertionFromString reads an "__expected" cell as promptfoo does:
// "javascript:", "fn:", "eval:" and "python:" are code; "grade:" and
// "llm-rubric:" a rubric; "type: value" an assertion of a type promptfoo
// knows; anything else a value that the answer must equal.
func assertionFromString(cell string) ([]assertion, string) {
	s := strings.TrimSpace(cell)
	for _, p := range []struct{ prefix, typ string }{
		{"javascript:", "javascript"}, {"fn:", "javascript"}, {"eval:", "javascript"},
		{"python:", "python"}, {"grade:", "llm-rubric"}, {"llm-rubric:", "llm-rubric"},
	} {
		if rest, ok := strings.CutPrefix(s, p.prefix); ok {
			return translate(p.typ, strings.TrimSpace(rest), 0)
		}
	}
	if m := csvAssertion.FindStringSubmatch(s); m != nil && dataset.IsPromptfooAssertion(m[2]) {
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
		as, why := translate(m[1]+m[2], value, 0)
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
	return []assertion{{typ: "exact", value: s}}, ""
}

// translate is dataset.TranslateAssert's assertions, to be graded and
// rendered per test.
func translate(name string, value any, weight float64) ([]assertion, string) {
	as, why := dataset.TranslateAssert(name, value, weight)
	if why != "" {
		return nil, why
	}
	out := make([]assertion, len(as))
	for i, a := range as {
		out[i] = assertion{typ: a.Type, value: a.Value, weight: a.Weight}
	}
	return out, ""
}

// clip shortens a piece of a file for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	n := 40
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
