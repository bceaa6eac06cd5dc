package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// AssertionTypes are digest's assertion types, without their "not-"
// forms: what scoring implements. contains-json, promptfoo's, has no
// digest name of its own and is scored as itself. refusal passes when the
// model declined to answer (see score's refusal check).
var AssertionTypes = []string{
	"exact", "includes", "icontains", "starts-with", "regex", "numeric",
	"choice", "json", "json-schema", "judge", "refusal",
}

// promptfooNames is promptfoo's assertion names, each with the digest
// type it is scored as. With AssertionTypes it is the one table of names
// digest reads, in a dataset line and in --assert alike. is-json with a
// value is json-schema (promptfoo then validates against the value as a
// schema).
var promptfooNames = []struct{ name, digest string }{
	{"equals", "exact"},
	{"contains", "includes"},
	{"contains-any", "includes"}, // a list value: any may match
	{"icontains-any", "icontains"},
	{"is-json", "json"},
	{"contains-json", "contains-json"},
	{"llm-rubric", "judge"},
	{"model-graded-closedqa", "judge"},
	{"g-eval", "judge"}, // graded 0-10, passing at 0.7 (GradeDefaults)
	{"is-refusal", "refusal"},
}

// KnownAssertions says which names are known, for messages.
func KnownAssertions() string {
	names := make([]string, len(promptfooNames))
	for i, p := range promptfooNames {
		names[i] = p.name
	}
	return strings.Join(AssertionTypes, ", ") + `, each also with "not-", and promptfoo's ` + strings.Join(names, ", ")
}

// AssertionType returns the digest name of an assertion type, translating
// promptfoo's names (equals → exact, contains → includes, is-json → json,
// llm-rubric → judge, is-refusal → refusal, ...; contains-json stays,
// having no digest equivalent), lower-cased and keeping a "not-" prefix,
// and whether it is known. hasValue tells is-json from is-json with a schema.
func AssertionType(t string, hasValue bool) (string, bool) {
	neg := ""
	base := strings.ToLower(strings.TrimSpace(t))
	if rest, ok := strings.CutPrefix(base, "not-"); ok {
		neg, base = "not-", rest
	}
	if base == "is-json" && hasValue {
		return neg + "json-schema", true
	}
	if slices.Contains(AssertionTypes, base) {
		return neg + base, true
	}
	for _, p := range promptfooNames {
		if p.name == base {
			return neg + p.digest, true
		}
	}
	return t, false
}

// parseAsserts reads an "assert" list. render, when not nil, fills the
// {{var}} placeholders of string values (promptfoo renders them too).
func parseAsserts(raw []byte, render func(string) (string, error)) ([]Assertion, error) {
	if !isArray(raw) {
		return nil, fmt.Errorf(`"assert" must be a list of {"type", "value"?, "weight"?, "threshold"?, "metric"?, "scale"?}; got %s`, kind(raw))
	}
	els := elements(raw)
	out := make([]Assertion, 0, len(els))
	for i, el := range els {
		as, err := parseAssert(el, render)
		if err != nil {
			return nil, fmt.Errorf(`"assert"[%d]: %w`, i, err)
		}
		out = append(out, as...)
	}
	return out, nil
}

// promptfooLists are promptfoo's assertions over a list of values, which
// promptfoo also reads from a comma-separated string: read as they are in
// a promptfoo test file, so that a test case means the same in a JSON
// Lines file as in YAML or CSV.
var promptfooLists = []string{"contains-any", "icontains-any", "contains-all", "icontains-all"}

func parseAssert(raw []byte, render func(string) (string, error)) ([]Assertion, error) {
	a, err := parseOneAssert(raw, render)
	if err != nil || !slices.Contains(promptfooLists, strings.TrimPrefix(strings.ToLower(strings.TrimSpace(a.Type)), "not-")) {
		return []Assertion{a}, err
	}
	pf, why := TranslateAssert(a.Type, a.Value, a.Weight)
	if why != "" {
		return nil, errors.New(why)
	}
	out := make([]Assertion, len(pf))
	for i, p := range pf {
		out[i] = Assertion{Type: p.Type, Value: p.Value, Weight: p.Weight, Threshold: a.Threshold, Metric: a.Metric}
	}
	return out, nil
}

// parseOneAssert reads an assertion; one of promptfooLists keeps its
// promptfoo name, for parseAssert to translate.
func parseOneAssert(raw []byte, render func(string) (string, error)) (Assertion, error) {
	var a Assertion
	if !isObject(raw) {
		return a, fmt.Errorf(`must be an object {"type", "value"?, "weight"?, "threshold"?, "metric"?, "scale"?}; got %s`, kind(raw))
	}
	o := members(raw)
	t, ok := o.get("type")
	if !ok {
		return a, fmt.Errorf(`"type" is missing`)
	}
	if !isString(t) {
		return a, fmt.Errorf(`"type" must be a string; got %s`, kind(t))
	}
	if v, ok := o.opt("value"); ok {
		if err := json.Unmarshal(v, &a.Value); err != nil {
			return a, fmt.Errorf(`"value": %v`, err)
		}
		if render != nil {
			var err error
			if a.Value, err = renderValue(a.Value, render); err != nil {
				return a, fmt.Errorf(`"value": %w`, err)
			}
		}
	}
	name := unquote(t)
	if low := strings.ToLower(strings.TrimSpace(name)); slices.Contains(promptfooLists, strings.TrimPrefix(low, "not-")) {
		a.Type = low
	}
	typ, known := AssertionType(name, a.Value != nil)
	if a.Type != "" {
		typ, known = a.Type, true
	}
	if !known {
		return a, fmt.Errorf(`unknown type %q; digest knows %s`, name, KnownAssertions())
	}
	a.Type = typ
	if w, ok := o.opt("weight"); ok {
		f, err := number(w)
		if err != nil || f < 0 {
			return a, fmt.Errorf(`"weight" must be a number >= 0; got %s`, shown(w))
		}
		a.Weight = f
	}
	if th, ok := o.opt("threshold"); ok {
		f, err := number(th)
		if err != nil || f < 0 || f > 1 {
			return a, fmt.Errorf(`"threshold" must be a number from 0 to 1; got %s`, shown(th))
		}
		a.Threshold = &f
	}
	if m, ok := o.opt("metric"); ok {
		if !isString(m) {
			return a, fmt.Errorf(`"metric" must be a string such as "bias"; got %s`, kind(m))
		}
		a.Metric = unquote(m)
		if err := ValidMetric(a.Metric); err != nil {
			return a, fmt.Errorf(`"metric": %w`, err)
		}
	}
	if sc, ok := o.opt("scale"); ok {
		if !isString(sc) {
			return a, fmt.Errorf(`"scale" must be a string such as "1-5"; got %s`, kind(sc))
		}
		a.Scale = unquote(sc)
	}
	if err := GradeDefaults(name, &a); err != nil {
		return a, err
	}
	return a, checkValue(a)
}

// GradeDefaults checks a's scale and gives promptfoo's graded judges
// theirs, name being the type as written: g-eval scores 0-10 and passes
// at 0.7 unless given a threshold, as in promptfoo; llm-rubric with a
// threshold scores 0-1 (promptfoo's llm-rubric score) and passes at it;
// without one it is the PASS or FAIL judge, as before. A scale on any
// type but judge, or on not-judge, is an error.
func GradeDefaults(name string, a *Assertion) error {
	low := strings.ToLower(strings.TrimSpace(name))
	base, neg := strings.CutPrefix(low, "not-")
	switch {
	case base == "g-eval" && neg:
		return errors.New("not-g-eval has no digest equivalent: a graded judge has no not- form. Try: g-eval with criteria that ask for the opposite")
	case base == "g-eval" && a.Scale == "":
		a.Scale = "0-10"
		if a.Threshold == nil {
			th := GEvalThreshold
			a.Threshold = &th
		}
	case base == "llm-rubric" && !neg && a.Scale == "" && a.Threshold != nil:
		a.Scale = "0-1"
	}
	if a.Scale == "" {
		return nil
	}
	if _, err := ParseScale(a.Scale); err != nil {
		return fmt.Errorf(`"scale": %w`, err)
	}
	typ := strings.ToLower(strings.TrimSpace(a.Type))
	if t, known := AssertionType(typ, a.Value != nil); known {
		typ = t
	}
	switch typ {
	case "judge":
		return nil
	case "not-judge":
		return errors.New(`"scale": a graded judge has no not- form. Try: judge, with a rubric that asks for the opposite`)
	}
	return fmt.Errorf(`"scale" grades a judge assertion only, not %s. Try: remove it, or type judge`, clip(typ))
}

// GEvalThreshold is the pass mark of a g-eval assertion without a
// threshold: promptfoo's default.
const GEvalThreshold = 0.7

// checkValue catches, at read time, a regular expression that could never
// be scored (scoring compiles them with Go's regexp too). Other values are
// left to scoring, which knows best what it accepts.
func checkValue(a Assertion) error {
	if strings.TrimPrefix(a.Type, "not-") != "regex" {
		return nil
	}
	for _, s := range valueStrings(a.Value) {
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Errorf(`"value" is not a valid regular expression (Go RE2 syntax: no lookaround or backreferences): %v`, err)
		}
	}
	return nil
}

// valueStrings returns the strings of a value: itself, or those of a list.
func valueStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// renderValue fills placeholders in a string value or in the strings of a
// list; objects (schemas) are left alone.
func renderValue(v any, render func(string) (string, error)) (any, error) {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, "{{") {
			return v, nil
		}
		return render(v)
	case []any:
		for i, e := range v {
			if s, ok := e.(string); ok && strings.Contains(s, "{{") {
				r, err := render(s)
				if err != nil {
					return nil, err
				}
				v[i] = r
			}
		}
	}
	return v, nil
}

// number reads a JSON number that fits a float64.
func number(raw []byte) (float64, error) {
	if !isNumber(raw) {
		return 0, fmt.Errorf("not a number")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("out of range")
	}
	return f, nil
}

// shown is a short rendering of a raw value for a message: numbers as
// written, anything else by kind.
func shown(raw []byte) string {
	if isNumber(raw) && len(raw) <= 32 {
		return string(raw)
	}
	return kind(raw)
}

// Scale is the range of a graded judge's score: whole numbers from Lo to
// Hi, such as 1 to 5. A score may fall between two of them (3.5).
type Scale struct {
	Lo, Hi int
}

// MaxScale is the highest a scale may reach: 0-100 is the widest.
const MaxScale = 100

// ParseScale reads a scale written "LO-HI", two whole numbers with
// 0 <= LO < HI <= 100, such as "1-5", "0-10" or "0-1"; spaces around
// either are allowed.
func ParseScale(s string) (Scale, error) {
	lo, hi, ok := strings.Cut(s, "-")
	l, errL := strconv.Atoi(strings.TrimSpace(lo))
	h, errH := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || errL != nil || errH != nil || strings.TrimSpace(lo) != strconv.Itoa(l) || strings.TrimSpace(hi) != strconv.Itoa(h) {
		return Scale{}, fmt.Errorf("scale %q is not LO-HI, two whole numbers such as \"1-5\" or \"0-10\"", clip(s))
	}
	if l < 0 || h > MaxScale || l >= h {
		return Scale{}, fmt.Errorf("scale %q: it must run from a low to a higher whole number within 0-%d, such as \"1-5\"", clip(s), MaxScale)
	}
	return Scale{Lo: l, Hi: h}, nil
}

// String writes the scale as ParseScale reads it.
func (s Scale) String() string { return strconv.Itoa(s.Lo) + "-" + strconv.Itoa(s.Hi) }

// Contains reports whether a score lies on the scale.
func (s Scale) Contains(score float64) bool {
	return score >= float64(s.Lo) && score <= float64(s.Hi)
}

// Normalize maps a score on the scale to 0-1: (score-Lo)/(Hi-Lo).
func (s Scale) Normalize(score float64) float64 {
	return (score - float64(s.Lo)) / float64(s.Hi-s.Lo)
}

// Midpoint is the score a graded judge without a threshold passes at:
// (Lo+Hi)/2, 3 on 1-5.
func (s Scale) Midpoint() float64 { return float64(s.Lo+s.Hi) / 2 }
