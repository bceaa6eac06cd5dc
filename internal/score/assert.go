package score

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/digest-cli/digest/internal/dataset"
)

type kind int

const (
	kindExact kind = iota
	kindIncludes
	kindIContains
	kindStartsWith
	kindRegex
	kindNumeric
	kindChoice
	kindJSON
	kindJSONSchema
	kindJudge
	kindRefusal
)

// kinds maps digest's assertion types to how they are scored; the names a
// user may write, promptfoo's among them, are dataset's table.
var kinds = map[string]kind{
	"exact":         kindExact,
	"includes":      kindIncludes,
	"icontains":     kindIContains,
	"starts-with":   kindStartsWith,
	"regex":         kindRegex,
	"numeric":       kindNumeric,
	"choice":        kindChoice,
	"json":          kindJSON,
	"json-schema":   kindJSONSchema,
	"judge":         kindJudge,
	"refusal":       kindRefusal, // the model declined; no value
	"contains-json": kindJSON,    // JSON found inside the text
}

// assertType is a parsed assertion type.
type assertType struct {
	name   string // as written, lower-cased: "not-contains"
	kind   kind
	not    bool
	inside bool // contains-json: JSON anywhere in the answer
}

func parseType(name string) (assertType, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	canonical, known := dataset.AssertionType(n, false)
	base, not := strings.CutPrefix(canonical, "not-")
	k, ok := kinds[base]
	if !known || !ok {
		if n == "" {
			return assertType{}, errors.New("assertion has no type")
		}
		return assertType{}, fmt.Errorf("unknown assertion type %q (known: %s)", name, dataset.KnownAssertions())
	}
	return assertType{name: n, kind: k, not: not, inside: base == "contains-json"}, nil
}

// typeLabel is a type for messages: lower-cased and trimmed, or the raw
// text quoted when it is not a plain name.
func typeLabel(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		return ""
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return strconv.Quote(clip(name))
		}
	}
	return clip(n)
}

// needsExpected is whether the type compares against Expected when it is
// given no value.
func (t assertType) needsExpected() bool {
	switch t.kind {
	case kindJSON, kindJudge, kindRefusal:
		return false
	}
	return true
}

// check is one assertion, validated and ready to run.
type check struct {
	assertType
	pos    int
	weight float64
	vals   []string // exact, includes, icontains, starts-with: the accepted texts
	folded []string // icontains: vals case-folded
	res    []*regexp.Regexp
	nums   []float64
	picks  []int // choice: accepted indexes
	schema *jsonschema.Schema
	rubric string
	// scale grades a judge (nil: PASS or FAIL); threshold is then its own
	// pass mark on 0-1, NaN for the scale's midpoint.
	scale     *dataset.Scale
	threshold float64
	metric    *metricTally // the tally of the assertion's metric
}

// prepare validates a and readies it to run.
func (s *Scorer) prepare(it dataset.Item, a dataset.Assertion) (*check, error) {
	t, err := parseType(a.Type)
	if err != nil {
		return nil, err
	}
	c := &check{assertType: t, weight: a.Weight, threshold: math.NaN()}
	if math.IsNaN(a.Weight) || math.IsInf(a.Weight, 0) || a.Weight < 0 {
		return nil, fmt.Errorf("weight %v: it must be a number >= 0", a.Weight)
	}
	if c.weight == 0 {
		c.weight = 1
	}
	if th := a.Threshold; th != nil && !(*th >= 0 && *th <= 1) {
		return nil, fmt.Errorf("threshold %v: it must be between 0 and 1", *th)
	}
	if a.Scale != "" {
		if t.kind != kindJudge || t.not {
			return nil, fmt.Errorf("scale %q grades a judge assertion only, not %s. Try: type judge, or remove the scale", clip(a.Scale), t.name)
		}
		sc, err := dataset.ParseScale(a.Scale)
		if err != nil {
			return nil, err
		}
		c.scale = &sc
		if a.Threshold != nil {
			c.threshold = *a.Threshold
		}
	}
	if t.kind == kindRefusal {
		// Nothing to compare with: a value, which promptfoo's
		// is-refusal ignores too, is ignored.
		return c, nil
	}
	// The value, or else the item's expected answers.
	vals, err := strs(a.Value)
	explicit := len(vals) > 0
	if err != nil {
		if t.kind != kindJSON && t.kind != kindJSONSchema {
			return nil, err
		}
		vals = nil
	}
	if !explicit && err == nil {
		vals = nonEmpty(it.Expected)
	}
	noValue := func() error {
		return errors.New("no value, and the item has no expected answer to compare with")
	}
	switch t.kind {
	case kindExact, kindIncludes, kindIContains, kindStartsWith:
		if len(vals) == 0 {
			return nil, noValue()
		}
		c.vals = vals
		if t.kind == kindIContains {
			c.folded = make([]string, len(vals))
			for i, v := range vals {
				c.folded[i] = fold(v)
			}
		}
	case kindRegex:
		if len(vals) == 0 {
			return nil, noValue()
		}
		for _, v := range vals {
			re, err := compileRegexp(v)
			if err != nil {
				return nil, err
			}
			c.res = append(c.res, re)
		}
	case kindNumeric:
		nums, err := expectedNumbers(vals)
		if err != nil {
			return nil, err
		}
		if len(nums) == 0 {
			return nil, noValue()
		}
		c.nums = nums
	case kindChoice:
		if len(vals) == 0 {
			return nil, noValue()
		}
		for _, v := range vals {
			i, ok := expectedChoice(v, it.Choices)
			if !ok {
				if len(it.Choices) == 0 {
					return nil, fmt.Errorf("expected %q is not a choice letter (A, B, ...), and the item has no choices", clip(v))
				}
				return nil, fmt.Errorf("expected %q is neither a choice letter from A to %c nor one of the item's choices", clip(v), 'A'+rune(min(len(it.Choices), 26)-1))
			}
			c.picks = append(c.picks, i)
		}
	case kindJSON, kindJSONSchema:
		// A schema: the value; for json-schema also Expected.
		var schema any = a.Value
		if isEmpty(schema) {
			schema = nil
			if t.kind == kindJSONSchema && len(vals) > 0 {
				schema = vals[0]
			}
		}
		if schema == nil {
			if t.kind == kindJSONSchema {
				return nil, errors.New("no schema: give the JSON schema as the value")
			}
			break
		}
		sch, err := compileSchema(schema)
		if err != nil {
			return nil, err
		}
		c.schema = sch
	case kindJudge:
		if s.Judge == nil {
			return nil, ErrNoJudge
		}
		if explicit {
			c.rubric = strings.Join(vals, "\n")
		} else if len(vals) > 0 {
			c.rubric = "The answer is correct. Expected: " + strings.Join(vals, " or ")
		} else {
			c.rubric = "The answer is correct."
		}
	}
	return c, nil
}

// run checks an answer; why is the failure's reason when ok is false.
// share is what the assertion adds to the score, times its weight: 1 or
// 0 as it passes or fails, a graded judge's normalised score. Only
// refusal looks at why the answer ended: the others score its text, a
// refusal's words or a cut answer's part as they are.
func (c *check) run(ctx context.Context, s *Scorer, it dataset.Item, a Answer) (share float64, ok bool, why string, err error) {
	answer := a.Text
	var pass bool
	var fail, negFail string // reasons for the plain and the not- form
	switch c.kind {
	case kindExact:
		got := strings.TrimSpace(answer)
		for _, v := range c.vals {
			if got == strings.TrimSpace(v) {
				pass, negFail = true, fmt.Sprintf("got %q, which equals %q", clip(got), clip(v))
				break
			}
		}
		fail = fmt.Sprintf("got %q, want %s", clip(got), quoteAny(c.vals))
	case kindIncludes, kindIContains:
		hay, needles := answer, c.vals
		if c.kind == kindIContains {
			hay, needles = fold(answer), c.folded
		}
		for i, v := range needles {
			if strings.Contains(hay, v) {
				pass, negFail = true, fmt.Sprintf("found %q in %q", clip(c.vals[i]), clip(answer))
				break
			}
		}
		fail = fmt.Sprintf("%s not found in %q", quoteAny(c.vals), clip(answer))
	case kindStartsWith:
		got := strings.TrimLeft(answer, spaces)
		for _, v := range c.vals {
			if strings.HasPrefix(got, strings.TrimLeft(v, spaces)) {
				pass, negFail = true, fmt.Sprintf("%q starts with %q", clip(got), clip(v))
				break
			}
		}
		fail = fmt.Sprintf("%q does not start with %s", clip(got), quoteAny(c.vals))
	case kindRegex:
		pats := make([]string, len(c.res))
		for i, re := range c.res {
			pats[i] = re.String()
			if m := re.FindStringIndex(answer); m != nil && !pass {
				pass, negFail = true, fmt.Sprintf("%q matches %q", clip(re.String()), clip(answer[m[0]:m[1]]))
			}
		}
		fail = fmt.Sprintf("no match for %s in %q", quoteAny(pats), clip(answer))
	case kindNumeric:
		got, found := answerNumber(answer)
		if !found {
			fail = fmt.Sprintf("no number in the answer %q", clip(answer))
			break
		}
		for _, want := range c.nums {
			if s.numEqual(got, want) {
				pass, negFail = true, fmt.Sprintf("got %s, which equals %s", fmtNum(got), fmtNum(want))
				break
			}
		}
		wants := make([]string, len(c.nums))
		for i, n := range c.nums {
			wants[i] = fmtNum(n)
		}
		fail = fmt.Sprintf("got %s, want %s", fmtNum(got), strings.Join(wants, " or "))
	case kindChoice:
		got, found := answerChoice(answer, it.Choices)
		if !found {
			fail = fmt.Sprintf("no choice letter or choice text found in %q", clip(answer))
			break
		}
		for _, p := range c.picks {
			if got == p {
				pass, negFail = true, fmt.Sprintf("got %s", choiceName(got, it.Choices))
				break
			}
		}
		wants := make([]string, len(c.picks))
		for i, p := range c.picks {
			wants[i] = choiceName(p, it.Choices)
		}
		fail = fmt.Sprintf("got %s, want %s", choiceName(got, it.Choices), strings.Join(wants, " or "))
	case kindJSON, kindJSONSchema:
		pass, fail, negFail = c.checkJSON(answer)
	case kindRefusal:
		pass, fail, negFail = refusalWhy(a)
	case kindJudge:
		v, err := s.Judge(ctx, JudgeRequest{Rubric: c.rubric, Question: question(it), Answer: answer, Scale: c.scale})
		if err != nil {
			return 0, false, "", err
		}
		if c.scale != nil {
			share, ok, why, err := c.graded(v)
			if err != nil || ok {
				return share, ok, "", err
			}
			return share, false, c.name + ": " + why, nil
		}
		jp, reason := v.Pass, oneLine(v.Reason)
		if reason == "" {
			reason = "no reason given"
		}
		pass = jp
		fail = reason
		negFail = "the judge passed it: " + reason
	}
	if c.not {
		if !pass {
			return 1, true, "", nil
		}
		return 0, false, c.name + ": " + negFail, nil
	}
	if pass {
		return 1, true, "", nil
	}
	return 0, false, c.name + ": " + fail, nil
}

func (s *Scorer) numEqual(got, want float64) bool {
	if got == want {
		return true
	}
	tol := s.Tolerance
	switch {
	case tol == 0:
		tol = DefaultTolerance
	case tol < 0 || math.IsNaN(tol):
		return false
	}
	d := math.Abs(got - want)
	return d <= tol || d <= tol*max(math.Abs(got), math.Abs(want))
}

// strs reads an assertion's value as the texts it accepts: a string, a
// number, a boolean or a list of them. nil and "" give none.
func strs(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if v == "" {
			return nil, nil
		}
		return []string{v}, nil
	case []string:
		return nonEmpty(v), nil
	case []any:
		var out []string
		for _, e := range v {
			switch e.(type) {
			case []any, []string, map[string]any:
				return nil, fmt.Errorf("value: a list may hold strings and numbers only, not %s", jsonText(e))
			}
			s, err := strs(e)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	case json.Number:
		return []string{v.String()}, nil
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}, nil
	case float32:
		return []string{strconv.FormatFloat(float64(v), 'f', -1, 32)}, nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return []string{fmt.Sprint(v)}, nil
	case bool:
		return []string{strconv.FormatBool(v)}, nil
	}
	return nil, fmt.Errorf("value %s: want a string, a number or a list of them", clip(jsonText(v)))
}

// isEmpty is whether an assertion's value is absent.
func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case []string:
		return len(v) == 0
	}
	return false
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// IsJudge reports whether an assertion type is graded by a judge model.
func IsJudge(name string) bool {
	t, err := parseType(name)
	return err == nil && t.kind == kindJudge
}
