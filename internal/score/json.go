package score

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// cache keeps compiled regular expressions and schemas, since a dataset
// usually repeats the same few on every line. It is bounded: when full it
// starts over.
type cache[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

const cacheSize = 256

func (c *cache[T]) get(key string, build func() (T, error)) (T, error) {
	c.mu.Lock()
	v, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := build()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= cacheSize {
		c.m = make(map[string]T)
	}
	c.m[key] = v
	c.mu.Unlock()
	return v, nil
}

var (
	regexps cache[*regexp.Regexp]
	schemas cache[*jsonschema.Schema]
)

func compileRegexp(pattern string) (*regexp.Regexp, error) {
	return regexps.get(pattern, func() (*regexp.Regexp, error) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			var se *syntax.Error
			if errors.As(err, &se) {
				return nil, fmt.Errorf("invalid pattern %q (Go RE2 syntax): %s: %q", clip(pattern), se.Code, clip(se.Expr))
			}
			return nil, fmt.Errorf("invalid pattern %q (Go RE2 syntax): %v", clip(pattern), err)
		}
		return re, nil
	})
}

// schemaURL is where a schema is compiled from; it resolves no reference.
const schemaURL = "mem:///schema.json"

// compileSchema compiles a JSON schema given as an object or as JSON text.
// It reads no file and no URL: a $ref outside the schema itself (other
// than the JSON Schema meta-schemas, which are built in) is an error, so
// that a dataset cannot make digest read local files.
func compileSchema(v any) (*jsonschema.Schema, error) {
	var text string
	if s, ok := v.(string); ok {
		text = s
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("invalid schema: %v", err)
		}
		text = string(b)
	}
	return schemas.get(text, func() (*jsonschema.Schema, error) {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("invalid schema: not JSON: %v (in %q)", err, clip(text))
		}
		switch doc.(type) {
		case map[string]any, bool:
		default:
			return nil, fmt.Errorf("invalid schema: want a JSON object, got %q", clip(text))
		}
		c := jsonschema.NewCompiler()
		c.UseLoader(noLoader{})
		c.AssertFormat()
		if err := c.AddResource(schemaURL, doc); err != nil {
			return nil, fmt.Errorf("invalid schema: %v", err)
		}
		sch, err := c.Compile(schemaURL)
		if err != nil {
			var se *jsonschema.SchemaValidationError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("invalid schema: %s", leafFailures(se.Err.Error()))
			}
			return nil, fmt.Errorf("invalid schema: %s", strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), schemaURL, "")), " "))
		}
		return sch, nil
	})
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("schemas may not refer to other files or URLs")
}

// checkJSON runs a json, json-schema or contains-json check.
func (c *check) checkJSON(answer string) (pass bool, fail, negFail string) {
	var cands []string
	if c.inside {
		cands = findJSON(answer)
		if len(cands) == 0 {
			return false, fmt.Sprintf("no JSON found in %q", clip(answer)), ""
		}
	} else {
		body := unfence(answer)
		if err := validJSON(body); err != nil {
			return false, fmt.Sprintf("not valid JSON: %v, in %q", err, clip(body)), ""
		}
		cands = []string{body}
	}
	if c.schema == nil {
		return true, "", fmt.Sprintf("the answer holds valid JSON: %q", clip(cands[0]))
	}
	var first string
	for _, cand := range cands {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(cand))
		if err != nil {
			continue // cannot happen: validJSON passed
		}
		err = c.schema.Validate(inst)
		if err == nil {
			return true, "", fmt.Sprintf("%q is valid against the schema", clip(cand))
		}
		if first == "" {
			first = schemaFailure(err)
		}
	}
	return false, fmt.Sprintf("not valid against the schema: %s", first), ""
}

// schemaFailure is a validation error on one line: its innermost
// failures, without the first line (which only names the schema's URL) and
// the "'allOf' failed" lines that merely lead to them.
func schemaFailure(err error) string {
	return oneLine(leafFailures(err.Error()))
}

// leafFailures reads the library's indented tree of failures,
//
//	jsonschema validation failed with 'mem:///schema.json#'
//	- at '': 'allOf' failed
//	  - at '/age': minimum: got -1, want 0
//
// and keeps its leaves: "at '/age': minimum: got -1, want 0".
func leafFailures(text string) string {
	lines := strings.Split(text, "\n")
	if len(lines) < 2 {
		return strings.ReplaceAll(text, schemaURL, "")
	}
	lines = lines[1:]
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	var leaves []string
	for i, l := range lines {
		if i+1 < len(lines) && indent(lines[i+1]) > indent(l) {
			continue
		}
		leaves = append(leaves, strings.TrimPrefix(strings.TrimSpace(l), "- "))
	}
	return strings.ReplaceAll(strings.Join(leaves, "; "), schemaURL, "")
}

// validJSON is nil when s is one JSON value.
func validJSON(s string) error {
	if json.Valid([]byte(s)) {
		return nil
	}
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return err
}

// unfence is the trimmed answer, or the body of a Markdown code fence when
// the whole answer is one: "```json\n{...}\n```" (or ``` with no or any
// language tag, or ~~~).
func unfence(answer string) string {
	t := strings.TrimSpace(answer)
	for _, f := range []string{"```", "~~~"} {
		if len(t) < 2*len(f) || !strings.HasPrefix(t, f) || !strings.HasSuffix(t, f) {
			continue
		}
		inner := t[len(f) : len(t)-len(f)]
		nl := strings.IndexByte(inner, '\n')
		if nl < 0 {
			return strings.TrimSpace(inner) // ```{"a":1}```
		}
		if tag := strings.TrimSpace(inner[:nl]); strings.ContainsAny(tag, "{}[]\"") {
			return strings.TrimSpace(inner) // no tag: ```{"a":\n1}```
		}
		return strings.TrimSpace(inner[nl+1:])
	}
	return t
}

// maxStarts bounds how many places findJSON tries to decode from, so that
// text like "{{{{..." costs linear time, not quadratic.
const maxStarts = 200

var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_-]*[ \t]*\r?\n(.*?)```")

// findJSON is the JSON in a text, for contains-json: the whole text (or
// its one code fence) if it is JSON, else the code fences that hold JSON,
// else every JSON object ({...}) found inside the text, in order.
func findJSON(answer string) []string {
	if body := unfence(answer); validJSON(body) == nil {
		return []string{body}
	}
	var out []string
	for _, m := range fence.FindAllStringSubmatch(answer, -1) {
		if body := strings.TrimSpace(m[1]); validJSON(body) == nil {
			out = append(out, body)
		}
	}
	if len(out) > 0 {
		return out
	}
	tries := 0
	for i := 0; i < len(answer) && tries < maxStarts; {
		j := strings.IndexByte(answer[i:], '{')
		if j < 0 {
			break
		}
		i += j
		tries++
		dec := json.NewDecoder(strings.NewReader(answer[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil {
			end := i + int(dec.InputOffset())
			out = append(out, strings.TrimSpace(answer[i:end]))
			i = end
			continue
		}
		i++
	}
	return out
}
