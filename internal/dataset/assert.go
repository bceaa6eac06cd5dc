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
		return nil, fmt.Errorf(`"assert" must be a list of {"type", "value"?, "weight"?, "threshold"?, "metric"?}; got %s`, kind(raw))
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
	pf, why := translateAssert(a.Type, a.Value, a.Weight)
	if why != "" {
		return nil, errors.New(why)
	}
	out := make([]Assertion, len(pf))
	for i, p := range pf {
		out[i] = Assertion{Type: p.typ, Value: p.value, Weight: p.weight, Threshold: a.Threshold, Metric: a.Metric}
	}
	return out, nil
}

// parseOneAssert reads an assertion; one of promptfooLists keeps its
// promptfoo name, for parseAssert to translate.
func parseOneAssert(raw []byte, render func(string) (string, error)) (Assertion, error) {
	var a Assertion
	if !isObject(raw) {
		return a, fmt.Errorf(`must be an object {"type", "value"?, "weight"?, "threshold"?, "metric"?}; got %s`, kind(raw))
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
	return a, checkValue(a)
}

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
