package promptfoo

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/digest-cli/digest/internal/dataset"
)

// testCase is one promptfoo test case.
type testCase struct {
	at        string // file:line, for messages
	line      int    // the line it starts on in its file
	name      string // description, else where it is (tests.csv:4)
	vars      []variable
	asserts   []assertion
	threshold *float64
	prefix    string
	suffix    string
	metadata  map[string]any
	grader    string // options.provider, as a digest model
}

type variable struct {
	name  string
	value any
}

// tests reads a config's tests: a list of tests and file references, or
// one reference.
func (l *loader) tests(s src, n *yaml.Node) []testCase {
	n = deref(n)
	switch {
	case isText(n):
		return l.testFile(s, n.Value, n)
	case isSequence(n):
		var out []testCase
		for _, e := range n.Content {
			e = deref(e)
			if isText(e) {
				out = append(out, l.testFile(s, e.Value, e)...)
				continue
			}
			if t, ok := l.test(s, e); ok {
				out = append(out, t)
			}
		}
		return out
	}
	l.problem(s.at(n), "tests must be a list or file://tests.yaml|csv; got %s. Try: tests: [{vars: {...}, assert: [...]}]", yamlKind(n))
	return nil
}

// testFile reads the tests of a file reference (globs allowed).
func (l *loader) testFile(s src, ref string, at *yaml.Node) []testCase {
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		l.problem(s.at(at), "tests from %s: digest reads local files only. Try: export the sheet as CSV and use file://tests.csv", ref)
		return nil
	}
	if isCode(ref) {
		l.problem(s.at(at), "tests from %s are made by code; digest does not run code. Try: write them out as YAML or CSV", ref)
		return nil
	}
	paths, ok := l.glob(s, ref, at)
	if !ok {
		return nil
	}
	var out []testCase
	for _, path := range paths {
		f := src{path: path, rel: rel(l.dir, path)}
		if !l.testExt(f) {
			continue
		}
		data, ok := l.readRef(s.at(at), "test file "+path, path)
		if !ok {
			continue
		}
		out = append(out, l.testData(f, data)...)
	}
	return out
}

// testExt reports whether a test file is of a kind testData reads, and
// records a problem when not: checked before the file is read.
func (l *loader) testExt(f src) bool {
	switch strings.ToLower(filepath.Ext(f.path)) {
	case ".csv", ".jsonl", ".yaml", ".yml", ".json":
		return true
	}
	l.problem(f.path, "tests in %s files are not supported. Try: a .yaml, .json, .jsonl or .csv file", filepath.Ext(f.path))
	return false
}

// testData reads a test file by its extension: CSV, JSON Lines, or YAML
// (and so JSON).
func (l *loader) testData(f src, data []byte) []testCase {
	if !l.testExt(f) {
		return nil
	}
	switch strings.ToLower(filepath.Ext(f.path)) {
	case ".csv":
		return l.csvTests(f, data)
	case ".jsonl":
		var out []testCase
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			n, err := parseYAML(line)
			if err != nil {
				l.problem(fmt.Sprintf("%s:%d", f.path, i+1), "not valid JSON: %v. Try: one test object per line", err)
				continue
			}
			shiftLines(n, i)
			if t, ok := l.test(f, n); ok {
				out = append(out, t)
			}
		}
		return out
	}
	n, err := parseYAML(data)
	if err != nil {
		l.problem(f.path, "not valid YAML: %v. Try: a list of tests, - vars: {...}", err)
		return nil
	}
	var out []testCase
	switch {
	case isNullNode(n):
	case isSequence(n):
		for _, e := range n.Content {
			if t, ok := l.test(f, e); ok {
				out = append(out, t)
			}
		}
	case isMapping(n):
		if t, ok := l.test(f, n); ok {
			out = append(out, t)
		}
	default:
		l.problem(f.at(n), "a test file holds a list of tests; got %s. Try: - vars: {...}", yamlKind(n))
	}
	return out
}

// shiftLines moves a node's line numbers down by n lines, for a node read
// from one line of a larger file.
func shiftLines(node *yaml.Node, n int) {
	if node == nil || n == 0 {
		return
	}
	var walk func(*yaml.Node, int)
	walk = func(x *yaml.Node, depth int) {
		if x == nil || depth > 100 {
			return
		}
		x.Line += n
		for _, c := range x.Content {
			walk(c, depth+1)
		}
	}
	walk(node, 0)
}

// test reads one test (or defaultTest) mapping.
func (l *loader) test(f src, n *yaml.Node) (testCase, bool) {
	n = deref(n)
	t := testCase{at: f.at(n), line: n.Line, name: fmt.Sprintf("%s:%d", f.rel, n.Line)}
	if !isMapping(n) {
		l.problem(f.at(n), "a test must be a mapping with vars and assert; got %s. Try: - vars: {...}", yamlKind(n))
		return t, false
	}
	ok := true
	bad := func(at *yaml.Node, format string, args ...any) {
		l.problem(f.at(at), format, args...)
		ok = false
	}
	for _, p := range pairs(n) {
		switch p.key {
		case "description":
			if isText(p.val) {
				if d := strings.TrimSpace(deref(p.val).Value); d != "" {
					t.name = d
				}
			}
		case "vars":
			switch {
			case isNullNode(p.val):
			case isMapping(p.val):
				for _, v := range pairs(p.val) {
					val, err := yamlValue(v.val)
					if err != nil {
						bad(v.keyNode, "var %q: %v. Try: a string, number, list or mapping", v.key, err)
						continue
					}
					val, ok2 := l.varFile(f, v.key, val, v.val)
					ok = ok && ok2
					t.vars = append(t.vars, variable{v.key, val})
				}
			default:
				bad(p.val, "vars from %s are not supported. Try: vars: {name: value, ...}", yamlKind(p.val))
			}
		case "assert":
			if !isSequence(p.val) {
				bad(p.val, "assert must be a list; got %s. Try: assert: [{type: contains, value: ...}]", yamlKind(p.val))
				continue
			}
			for _, a := range deref(p.val).Content {
				as, good := l.assertion(f, a)
				ok = ok && good
				t.asserts = append(t.asserts, as...)
			}
		case "threshold":
			th, good := yamlNumber(p.val)
			if !good || th < 0 || th > 1 {
				bad(p.val, "threshold must be a number from 0 to 1. Try: threshold: 0.5")
				continue
			}
			t.threshold = &th
		case "metadata":
			v, err := yamlValue(p.val)
			m, isMap := v.(map[string]any)
			if err != nil || !isMap && v != nil {
				bad(p.val, "metadata must be a mapping. Try: metadata: {key: value}")
				continue
			}
			t.metadata = m
		case "options":
			for _, o := range pairs(p.val) {
				switch o.key {
				case "prefix", "suffix":
					if !isText(o.val) {
						bad(o.val, "options.%s must be a string. Try: %s: \"...\"", o.key, o.key)
						continue
					}
					if o.key == "prefix" {
						t.prefix = deref(o.val).Value
					} else {
						t.suffix = deref(o.val).Value
					}
				case "provider":
					t.grader = l.grader(f, o.val)
				case "runSerially", "disableConversationVar":
					// Scheduling only: digest's answers do not depend on it.
				default:
					bad(o.keyNode, "options.%s is not supported. Try: remove it (digest sends the rendered prompt as is and scores the raw answer)", o.key)
				}
			}
		case "provider", "providers":
			bad(p.keyNode, "a test's own provider is not supported. Try: the config's providers, or --models")
		default:
			bad(p.keyNode, "test field %q is not supported. Try: description, vars, assert, options, threshold, metadata", p.key)
		}
	}
	return t, ok
}

// varFile loads a var given as file://PATH, as promptfoo does: YAML and
// JSON files as their value, other files as text.
func (l *loader) varFile(f src, name string, v any, at *yaml.Node) (any, bool) {
	ref, isStr := v.(string)
	if !isStr || !strings.HasPrefix(ref, "file://") {
		return v, true
	}
	ext := strings.ToLower(filepath.Ext(ref))
	switch {
	case isCode(ref):
		l.problem(f.at(at), "var %q from %s is made by code; digest does not run code. Try: its value written out", name, ref)
		return nil, false
	case ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".gif" || ext == ".webp" || ext == ".pdf" || ext == ".mp3" || ext == ".wav":
		l.problem(f.at(at), "var %q from %s: digest sends text only. Try: a text var", name, ref)
		return nil, false
	}
	data, ok := l.readRef(f.at(at), fmt.Sprintf("var %q: %s", name, ref), l.path(ref))
	if !ok {
		return nil, false
	}
	if ext == ".yaml" || ext == ".yml" || ext == ".json" {
		n, err := parseYAML(data)
		var val any
		if err == nil && n != nil {
			val, err = yamlValue(n)
		}
		if err != nil {
			l.problem(f.at(at), "var %q: %s: %v. Try: valid YAML or JSON", name, ref, err)
			return nil, false
		}
		return val, true
	}
	if !utf8.Valid(data) {
		l.problem(f.at(at), "var %q: %s is not UTF-8 text. Try: save it as UTF-8", name, ref)
		return nil, false
	}
	return string(data), true
}

// assertion reads one entry of an assert list.
func (l *loader) assertion(f src, n *yaml.Node) ([]assertion, bool) {
	n = deref(n)
	if !isMapping(n) {
		l.problem(f.at(n), "an assertion must be a mapping {type, value}; got %s. Try: - type: contains", yamlKind(n))
		return nil, false
	}
	var typ string
	var value any
	weight := 0.0
	metric := ""
	var threshold *float64
	var thresholdAt *yaml.Node
	ok := true
	for _, p := range pairs(n) {
		switch p.key {
		case "type":
			if isText(p.val) {
				typ = deref(p.val).Value
			}
		case "value":
			v, err := yamlValue(p.val)
			if err != nil {
				l.problem(f.at(p.val), "assertion value: %v. Try: a string, a list or a mapping", err)
				ok = false
				continue
			}
			if ref, isStr := v.(string); isStr && strings.HasPrefix(ref, "file://") {
				if isCode(ref) {
					l.problem(f.at(p.val), "assertion value %s is code; digest does not run code. Try: the check as regex, contains or equals", ref)
					ok = false
					continue
				}
				data, good := l.readRef(f.at(p.val), "assertion value "+ref, l.path(ref))
				if !good {
					ok = false
					continue
				}
				v = strings.TrimRight(string(data), "\r\n")
			}
			value = v
		case "weight":
			w, good := yamlNumber(p.val)
			if !good || w <= 0 {
				// promptfoo's weight 0 keeps an assertion out of the score;
				// digest counts every assertion it is given.
				l.problem(f.at(p.val), "weight must be a number above 0. Try: a positive weight, or remove the assertion")
				ok = false
				continue
			}
			weight = w
		case "metric":
			// A name to score the assertion under, as in promptfoo's
			// views: each metric is reported on its own.
			if !isText(p.val) {
				l.problem(f.at(p.val), "metric must be a name such as bias; got %s. Try: metric: bias", yamlKind(p.val))
				ok = false
				continue
			}
			metric = deref(p.val).Value
			if err := dataset.ValidMetric(metric); err != nil {
				l.problem(f.at(p.val), "%v", err)
				ok = false
			}
		case "threshold":
			// A graded judge's pass mark (llm-rubric, g-eval); other
			// assertions pass or fail, with nothing to hold it against.
			th, good := yamlNumber(p.val)
			if !good || th < 0 || th > 1 {
				l.problem(f.at(p.val), "threshold must be a number from 0 to 1. Try: threshold: 0.7")
				ok = false
				continue
			}
			threshold = &th
			thresholdAt = p.keyNode
		default:
			l.problem(f.at(p.keyNode), "assertion option %q is not supported. Try: type, value, weight, metric and (for llm-rubric and g-eval) threshold only", p.key)
			ok = false
		}
	}
	if base := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(typ)), "not-"); threshold != nil && !slices.Contains(gradedNames, base) {
		l.problem(f.at(thresholdAt), "an assertion's threshold is for graded assertions (llm-rubric, g-eval), and %s passes or fails. Try: remove it, or threshold on the test", typ)
		ok = false
		threshold = nil
	}
	if typ == "" {
		l.problem(f.at(n), "the assertion has no type. Try: type: contains")
		return nil, false
	}
	as, why := translate(typ, value, weight)
	if why != "" {
		l.problem(f.at(n), "%s", why)
		return nil, false
	}
	for i := range as {
		as[i].metric = metric
		if why := as[i].grade(typ, threshold); why != "" {
			l.problem(f.at(n), "%s", why)
			return nil, false
		}
	}
	return as, ok
}

// csvTests reads a CSV test file as promptfoo does: a header of var names,
// and the special columns __expected (also __expected1, ...), __description,
// __prefix, __suffix, __threshold, __metric and __metadata:KEY.
func (l *loader) csvTests(f src, data []byte) []testCase {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	r := csv.NewReader(bytes.NewReader(data))
	header, err := r.Read()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		l.problem(f.path, "not valid CSV: %v. Try: a header row of var names, then one row per test", err)
		return nil
	}
	cols := make([]string, len(header))
	first := map[string]int{} // column number of each name
	for i, h := range header {
		cols[i] = strings.TrimSpace(h)
		// A name given twice would keep one of the two values of each row,
		// silently. Columns without a name (a spreadsheet's trailing
		// commas) name no var anyone can use.
		if j, dup := first[cols[i]]; dup && cols[i] != "" {
			try := "rename one of them, or merge the two"
			if isExpected(cols[i]) {
				try = "__expected1, __expected2, ... for several assertions"
			}
			l.problem(f.path+":1", "column %q appears twice in the header (columns %d and %d), and a row can keep only one of its values. Try: %s", cols[i], j, i+1, try)
			continue
		} else if !dup {
			first[cols[i]] = i + 1
		}
		switch {
		case !strings.HasPrefix(cols[i], "__"):
		case isExpected(cols[i]), cols[i] == "__description", cols[i] == "__prefix", cols[i] == "__suffix",
			cols[i] == "__threshold", cols[i] == "__metric", strings.HasPrefix(cols[i], "__metadata:"):
		default:
			l.problem(f.path+":1", "column %q is not supported. Try: __expected, __description, __prefix, __suffix, __threshold or __metadata:KEY", cols[i])
		}
	}
	var out []testCase
	for {
		row, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			l.problem(f.path, "not valid CSV: %v. Try: quote cells that hold commas, quotes or line breaks", err)
			return out
		}
		line, _ := r.FieldPos(0)
		at := fmt.Sprintf("%s:%d", f.path, line)
		t := testCase{at: at, line: line, name: fmt.Sprintf("%s:%d", f.rel, line)}
		ok := true
		for i, cell := range row {
			col := cols[i]
			switch {
			case isExpected(col):
				if strings.TrimSpace(cell) == "" {
					continue
				}
				as, why := assertionFromString(cell)
				if why != "" {
					l.problem(at, "%s %s", col, why)
					ok = false
					continue
				}
				t.asserts = append(t.asserts, as...)
			case col == "__description":
				if d := strings.TrimSpace(cell); d != "" {
					t.name = d
				}
			case col == "__prefix":
				t.prefix = cell
			case col == "__suffix":
				t.suffix = cell
			case col == "__threshold":
				if strings.TrimSpace(cell) == "" {
					continue
				}
				th, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
				if err != nil || !(th >= 0 && th <= 1) {
					l.problem(at, "__threshold %q must be a number from 0 to 1. Try: 0.5", cell)
					ok = false
					continue
				}
				t.threshold = &th
			case strings.HasPrefix(col, "__metadata:"):
				if t.metadata == nil {
					t.metadata = map[string]any{}
				}
				t.metadata[strings.TrimPrefix(col, "__metadata:")] = cell
			case strings.HasPrefix(col, "__"):
			default:
				t.vars = append(t.vars, variable{col, cell})
			}
		}
		if ok {
			out = append(out, t)
		}
	}
}

// isExpected reports whether a CSV column holds an assertion: __expected,
// or __expected followed by a number.
func isExpected(col string) bool {
	rest, ok := strings.CutPrefix(col, "__expected")
	if !ok {
		return false
	}
	_, err := strconv.Atoi(rest)
	return rest == "" || err == nil
}

// merge applies defaultTest to a test, as promptfoo does: the test's vars
// over the default's, the default's assertions first, the test's options
// and threshold winning.
func merge(d, t testCase) testCase {
	vars := append([]variable(nil), d.vars...)
	for _, v := range t.vars {
		replaced := false
		for i := range vars {
			if vars[i].name == v.name {
				vars[i], replaced = v, true
			}
		}
		if !replaced {
			vars = append(vars, v)
		}
	}
	t.vars = vars
	t.asserts = append(append([]assertion(nil), d.asserts...), t.asserts...)
	if t.threshold == nil {
		t.threshold = d.threshold
	}
	if t.prefix == "" {
		t.prefix = d.prefix
	}
	if t.suffix == "" {
		t.suffix = d.suffix
	}
	if t.grader == "" {
		t.grader = d.grader
	}
	if len(d.metadata) > 0 {
		m := maps.Clone(d.metadata)
		maps.Copy(m, t.metadata)
		t.metadata = m
	}
	return t
}

// expand makes one test per combination of the values of its list vars,
// as promptfoo does; each is named after the values it took.
func (l *loader) expand(t testCase) []testCase {
	total, lists := combinations(t)
	if total > maxCombinations {
		l.problem(t.at, "the list vars make more than %d tests. Try: fewer values, or several tests", maxCombinations)
		return nil
	}
	if len(lists) == 0 {
		return []testCase{t}
	}
	out := make([]testCase, 0, total)
	for k := range total {
		c := t
		c.vars = append([]variable(nil), t.vars...)
		var named []string
		rest := k
		for j := len(lists) - 1; j >= 0; j-- {
			i := lists[j]
			list := t.vars[i].value.([]any)
			c.vars[i].value = list[rest%len(list)]
			rest /= len(list)
		}
		for _, i := range lists {
			named = append(named, t.vars[i].name+"="+clip(valueText(c.vars[i].value)))
		}
		c.name = t.name + " (" + strings.Join(named, ", ") + ")"
		out = append(out, c)
	}
	return out
}

// combinations is how many tests expand makes of t, counted without
// making them (past maxCombinations it stops counting), and which of its
// vars are lists that expand: as in promptfoo, those whose first value is
// a string; any other list is one value.
func combinations(t testCase) (int, []int) {
	total := 1
	var lists []int
	for i, v := range t.vars {
		list, ok := v.value.([]any)
		if !ok || len(list) == 0 {
			continue
		}
		if _, isStr := list[0].(string); isStr {
			lists = append(lists, i)
			if total <= maxCombinations {
				total *= len(list)
			}
		}
	}
	return total, lists
}

// tooManyItems reports, and records as a problem, whether tests, each
// made once per prompt, come to more than maxItems: a short config of
// list vars and prompts multiplies into more than memory holds.
func (l *loader) tooManyItems(at string, tests []testCase, prompts int) bool {
	total := 0
	for _, t := range tests {
		n, _ := combinations(t)
		total += min(n, maxCombinations) * max(prompts, 1)
		if total > maxItems {
			l.problem(at, "the config makes more than %d items (tests x combinations of list vars x prompts). Try: fewer tests, list values or prompts, or split the config in several", maxItems)
			return true
		}
	}
	return false
}

func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// varsJSON encodes vars as a JSON object, without escaping <, > and &,
// which a var rendered as JSON would otherwise show as \u003c.
func varsJSON(vars []variable) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, v := range vars {
		if i > 0 {
			b.WriteByte(',')
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v.name); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
		b.WriteByte(':')
		if err := enc.Encode(v.value); err != nil {
			return nil, fmt.Errorf("var %q: %v", v.name, err)
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// nativeLine is an item in digest's own JSON Lines format.
type nativeLine struct {
	ID       string              `json:"id"`
	System   string              `json:"system,omitempty"`
	Messages []nativeMessage     `json:"messages"`
	Assert   []dataset.Assertion `json:"assert"`
	Metadata map[string]any      `json:"metadata,omitempty"`
}

type nativeMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// item renders one (test, prompt) pair as a line of digest's format, and
// checks it by reading it back.
func (l *loader) item(t testCase, p prompt, namePrompt bool, cache map[string]*dataset.Template) ([]byte, bool) {
	raw := t.prefix + p.raw + t.suffix
	tmpl, seen := cache[raw]
	if !seen {
		var err error
		if tmpl, err = dataset.ParseTemplate(raw); err != nil {
			l.problem(p.at, "%v. Try: plain {{ var }} placeholders (digest does not run Nunjucks filters or tags)", err)
		}
		cache[raw] = tmpl
	}
	if tmpl == nil {
		return nil, false
	}
	vj, err := varsJSON(t.vars)
	if err != nil {
		l.problem(t.at, "%v. Try: plain values", err)
		return nil, false
	}
	sys, msgs, err := tmpl.Render(vj)
	if err != nil {
		l.problem(t.at, "prompt %q: %v. Try: give the test that var (promptfoo would send an empty string)", p.label, err)
		return nil, false
	}
	line := nativeLine{ID: t.name, System: sys, Metadata: t.metadata}
	if namePrompt {
		line.ID += " [" + p.label + "]"
	}
	for _, m := range msgs {
		line.Messages = append(line.Messages, nativeMessage{m.Role, m.Content})
	}
	for _, a := range t.asserts {
		v, err := dataset.RenderValue(cloneValue(a.value), vj)
		if err != nil {
			l.problem(t.at, "assertion value: %v", err)
			return nil, false
		}
		line.Assert = append(line.Assert, a.asAssertion(v))
	}
	if why := testThreshold(line.Assert, t.threshold); why != "" {
		l.problem(t.at, "%s", why)
		return nil, false
	}
	out, err := marshalLine(line)
	if err != nil {
		l.problem(t.at, "%v. Try: plain values", err)
		return nil, false
	}
	if err := dataset.CheckLine(out); err != nil {
		l.problem(t.at, "%v", err)
		return nil, false
	}
	return out, true
}

// cloneValue copies a list, which renderValue fills in place: the same
// assertion is rendered once per prompt and per combination of vars.
func cloneValue(v any) any {
	if l, ok := v.([]any); ok {
		return append([]any(nil), l...)
	}
	return v
}
