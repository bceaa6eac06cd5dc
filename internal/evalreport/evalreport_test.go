package evalreport_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"iter"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/goldentest"
	"github.com/digest-cli/digest/internal/hostiletest"
)

const scriptAnswer = "<script>alert(1)</script>"

// wilson is the Wilson 95% interval of passed out of n.
func wilson(passed, n int) (low, high float64) {
	const z = 1.959963984540054
	p, nf := float64(passed)/float64(n), float64(n)
	center := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / (1 + z*z/nf)
	return center - half, center + half
}

func stats(model string, items, passed, errs, cached int, lat evalreport.Latency, in, out int, cost float64, gate *float64) evalreport.ModelStats {
	low, high := wilson(passed, items)
	acc := float64(passed) / float64(items)
	return evalreport.ModelStats{Model: model, Items: items, Passed: passed, Accuracy: acc, CILow: low, CIHigh: high,
		Errors: errs, Cached: cached, Latency: lat, InputTokens: in, OutputTokens: out, CostUSD: cost,
		MinAccuracy: gate, BelowGate: gate != nil && acc < *gate}
}

// evalResults are three models on four items, model by model: a cached
// answer, a unicode one, a <script> one (which is a refusal), a failed
// call, pipes and newlines, an answer cut at the output cap that failed
// and one cut by a content filter that passed.
func evalResults() []evalreport.Result {
	const a, b, c = "openai:gpt-4o-mini", "anthropic:claude-haiku-4-5", "ollama:llama3.2"
	r := func(model, item string, line int, answer string, pass bool, latency float64, in, out int, cost float64) evalreport.Result {
		score := 0.0
		if pass {
			score = 1
		}
		expected := map[string][]string{
			"capital": {"Paris"}, "math": {"42", "forty-two"}, "unicode": {"Größe"}, "html": {"<b>bold</b>"},
		}[item]
		prompt := map[string]string{
			"capital": "What is the capital of France?", "math": "What is 6 × 7?",
			"unicode": "Spell the German word for size.", "html": "Write the word bold in bold HTML.",
		}[item]
		return evalreport.Result{Model: model, Item: item, Line: line, Prompt: prompt, Expected: expected, Answer: answer,
			Pass: pass, Score: score, LatencyMS: latency, InputTokens: in, OutputTokens: out, CostUSD: cost}
	}
	failed := func(res evalreport.Result, reasons ...string) evalreport.Result {
		res.Reasons = reasons
		return res
	}
	cached := func(res evalreport.Result) evalreport.Result {
		res.Cached = true
		return res
	}
	finished := func(res evalreport.Result, finish string) evalreport.Result {
		res.Finish = finish
		return res
	}
	errored := func(res evalreport.Result, err string) evalreport.Result {
		res.Error, res.Answer, res.InputTokens, res.OutputTokens, res.CostUSD, res.LatencyMS = err, "", 0, 0, 0, 0
		return res
	}
	return []evalreport.Result{
		r(a, "capital", 1, "Paris", true, 412, 21, 2, 0.0000044),
		cached(r(a, "math", 2, "6 × 7 = **42**", true, 655, 18, 9, 0.0000081)),
		r(a, "unicode", 3, "Größe — 東京 ✓", true, 530.5, 19, 6, 0.0000065),
		finished(failed(r(a, "html", 4, scriptAnswer, false, 1210, 22, 8, 0.0000081), `includes "<b>bold</b>": not found`), evalreport.FinishRefusal),

		r(b, "capital", 1, "Paris.", true, 720, 25, 3, 0.000040),
		finished(failed(r(b, "math", 2, "41 | maybe 43", false, 980, 22, 7, 0.000057), "numeric: got 43, want 42 (tolerance 0)"), evalreport.FinishLength),
		r(b, "unicode", 3, "Größe", true, 801, 23, 3, 0.000038),
		r(b, "html", 4, "<b>bold</b>", true, 1900, 26, 6, 0.000056),

		errored(r(c, "capital", 1, "", false, 0, 0, 0, 0), "429 Too Many Requests: rate limited after 5 retries"),
		failed(r(c, "math", 2, "The answer is\n\n`forty one` & [more](x)", false, 2400, 30, 12, 0), "numeric: got 41, want 42 (tolerance 0)", "not-icontains: found \"one\""),
		failed(r(c, "unicode", 3, "Grösse\nor *Groesse*", false, 2100, 28, 9, 0), `exact: got "Grösse\nor *Groesse*"`),
		finished(r(c, "html", 4, "<b>bold</b>", true, 3050, 29, 11, 0), evalreport.FinishContentFilter),
	}
}

// eval is a fixed run of three models: one passing its gate, with a
// refusal and input tokens read from the prompt cache, one without a gate
// and an answer cut at the output cap, one below its gate, with a failed
// call and an answer cut by a content filter.
func eval(t *testing.T) *evalreport.Eval {
	gate := 0.5
	a, b, c := stats("openai:gpt-4o-mini", 4, 3, 0, 1, evalreport.Latency{P50: 592.75, P95: 1128.3, P99: 1193.7}, 80, 25, 0.0000271, &gate),
		stats("anthropic:claude-haiku-4-5", 4, 3, 0, 0, evalreport.Latency{P50: 890.5, P95: 1761.7, P99: 1872.3}, 96, 19, 0.000191, nil),
		stats("ollama:llama3.2", 4, 1, 1, 0, evalreport.Latency{P50: 2400, P95: 2985, P99: 3037}, 87, 32, 0, &gate)
	a.Refused, a.CachedInputTokens = 1, 48
	b.Cut = 1
	c.Cut = 1
	return &evalreport.Eval{
		RunID:     "r-20260503-0900-7f3a",
		Dataset:   "testdata/eval/capitals_v2.jsonl",
		StartedAt: time.Date(2026, 5, 3, 11, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
		Models:    []evalreport.ModelStats{a, b, c},
		Pairs: []evalreport.Pair{
			{A: "openai:gpt-4o-mini", B: "anthropic:claude-haiku-4-5", AOnly: 1, BOnly: 1, Both: 2, None: 0, P: 1},
			{A: "openai:gpt-4o-mini", B: "ollama:llama3.2", AOnly: 3, BOnly: 1, Both: 0, None: 0, P: 0.625},
			{A: "anthropic:claude-haiku-4-5", B: "ollama:llama3.2", AOnly: 2, BOnly: 0, Both: 1, None: 1, P: 0.5},
		},
		Results: once(t, evalResults()),
	}
}

// once yields rs, failing the test when a report reads them twice.
func once(t *testing.T, rs []evalreport.Result) iter.Seq[evalreport.Result] {
	read := false
	return func(yield func(evalreport.Result) bool) {
		if read {
			t.Error("results read twice")
		}
		read = true
		for _, r := range rs {
			if !yield(r) {
				return
			}
		}
	}
}

// evalWriters are the eval reports by golden file name.
func evalWriters(t *testing.T) map[string]func(io.Writer, *evalreport.Eval) error {
	t.Helper()
	ws := map[string]func(io.Writer, *evalreport.Eval) error{
		"eval.junit.xml": evalreport.WriteJUnit,
		"eval.html":      evalreport.WriteHTML,
	}
	ext := map[string]string{"table": "table", "json": "json", "jsonl": "jsonl", "csv": "csv", "markdown": "md"}
	for _, format := range evalreport.EvalFormats {
		r, err := evalreport.ForEvalFormat(format)
		if err != nil {
			t.Fatal(err)
		}
		if ext[format] == "" {
			t.Fatalf("no golden file name for format %q", format)
		}
		ws["eval."+ext[format]] = r.WriteEval
	}
	return ws
}

func write(t *testing.T, f func(io.Writer, *evalreport.Eval) error, e *evalreport.Eval) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b, e); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestEvalReportsGolden(t *testing.T) {
	ws := evalWriters(t)
	names := make([]string, 0, len(ws))
	for name := range ws {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got := write(t, ws[name], eval(t))
			goldentest.Check(t, filepath.Join("testdata", name), got)
		})
	}
}

type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Classname string  `xml:"classname,attr"`
			Name      string  `xml:"name,attr"`
			Time      float64 `xml:"time,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestEvalJUnitParsesBack(t *testing.T) {
	e := eval(t)
	out := write(t, evalreport.WriteJUnit, e)
	var doc junitDoc
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Suites) != len(e.Models) {
		t.Fatalf("%d suites, want %d", len(doc.Suites), len(e.Models))
	}
	if doc.Tests != 12 || doc.Failures != 4 || doc.Errors != 1 {
		t.Errorf("testsuites tests=%d failures=%d errors=%d, want 12, 4, 1", doc.Tests, doc.Failures, doc.Errors)
	}
	found := false
	for i, s := range doc.Suites {
		m := e.Models[i]
		failures, errs := 0, 0
		for _, c := range s.Cases {
			if c.Classname != s.Name {
				t.Errorf("case %s of suite %s has classname %s", c.Name, s.Name, c.Classname)
			}
			if c.Failure != nil {
				failures++
			}
			if c.Error != nil {
				errs++
			}
			if c.Failure != nil && strings.Contains(c.Failure.Text, "answer: "+scriptAnswer+"\n") {
				found = true
			}
		}
		if s.Name != m.Model || s.Tests != m.Items || s.Failures != m.Items-m.Passed-m.Errors || s.Errors != m.Errors {
			t.Errorf("suite %s tests=%d failures=%d errors=%d, want %+v", s.Name, s.Tests, s.Failures, s.Errors, m)
		}
		if len(s.Cases) != s.Tests || failures != s.Failures || errs != s.Errors {
			t.Errorf("suite %s lists %d cases, %d failures, %d errors; its attributes say %d, %d, %d",
				s.Name, len(s.Cases), failures, errs, s.Tests, s.Failures, s.Errors)
		}
	}
	if c := doc.Suites[0].Cases[3]; c.Name != "html" || c.Time != 1.21 || c.Failure == nil || c.Failure.Message != `refused: includes "<b>bold</b>": not found` {
		t.Errorf("html case read back as %+v", c)
	}
	if c := doc.Suites[2].Cases[0]; c.Error == nil || !strings.Contains(c.Error.Message, "429") {
		t.Errorf("errored case read back as %+v", c)
	}
	if !found {
		t.Error("the <script> answer did not read back from the failure text")
	}
	if bytes.Contains(out, []byte("<script")) || bytes.Contains(out, []byte("<b>")) {
		t.Errorf("model text written unescaped:\n%s", out)
	}
}

// TestEvalJUnitNamesSharedIDsByLine: when the dataset gave one id to
// several lines, each test case carries its line, since CI test views
// key a case by its name and would merge two items into one.
func TestEvalJUnitNamesSharedIDsByLine(t *testing.T) {
	e := eval(t)
	e.SharedIDs = true
	var doc junitDoc
	if err := xml.Unmarshal(write(t, evalreport.WriteJUnit, e), &doc); err != nil {
		t.Fatal(err)
	}
	byLine := regexp.MustCompile(`^\S+ \(line [0-9]+\)$`)
	names := map[string]bool{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			if !byLine.MatchString(c.Name) || names[s.Name+"/"+c.Name] {
				t.Errorf("suite %s: case %q, want a name of its own with its line", s.Name, c.Name)
			}
			names[s.Name+"/"+c.Name] = true
		}
	}
	if c := doc.Suites[0].Cases[3]; !strings.HasPrefix(c.Name, "html (line ") {
		t.Errorf("html case named %q", c.Name)
	}
}

func TestEvalJUnitNeedsResultsModelByModel(t *testing.T) {
	rs := evalResults()
	e := eval(t)
	e.Results = slices.Values(append(rs[:1:1], rs[4], rs[1])) // a, b, a
	if err := evalreport.WriteJUnit(io.Discard, e); err == nil || !strings.Contains(err.Error(), "one after another") {
		t.Errorf("interleaved models: got %v", err)
	}
	e.Results = slices.Values([]evalreport.Result{{Model: "nobody", Item: "x"}})
	if err := evalreport.WriteJUnit(io.Discard, e); err == nil {
		t.Error("result of an unknown model accepted")
	}
	// Without results, every model still has its suite and counts.
	e.Results = nil
	var doc junitDoc
	if err := xml.Unmarshal(write(t, evalreport.WriteJUnit, e), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 3 || doc.Suites[2].Errors != 1 || len(doc.Suites[2].Cases) != 0 {
		t.Errorf("suites without results: %+v", doc.Suites)
	}
}

func TestEvalHTMLEscapesAndStaysOffline(t *testing.T) {
	out := string(write(t, evalreport.WriteHTML, eval(t)))
	// The page's own script and its data block, which never runs.
	if strings.Contains(out, scriptAnswer) || strings.Count(out, "<script") != 2 || strings.Count(out, `<script type="application/json" id="grid-data">`) != 1 {
		t.Error("a model's <script> answer reached the page as markup")
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the <script> answer is not on the page as text")
	}
	if !strings.Contains(out, "Größe — 東京 ✓") {
		t.Error("the unicode answer is not on the page")
	}
	for _, bad := range []string{"http://", "https://", `src="http`, `href="http`, "src=", "@import", "url("} {
		if strings.Contains(out, bad) {
			t.Errorf("page refers to %q", bad)
		}
	}
	// The policy allows exactly the page's own style and script.
	csp := regexp.MustCompile(`http-equiv="Content-Security-Policy" content="([^"]*)"`).FindStringSubmatch(out)
	if csp == nil {
		t.Fatal("no Content-Security-Policy")
	}
	for _, tag := range []string{"style", "script"} {
		m := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no <%s>", tag)
		}
		sum := sha256.Sum256([]byte(m[1]))
		want := fmt.Sprintf("%s-src 'sha256-%s'", tag, base64.StdEncoding.EncodeToString(sum[:]))
		if !strings.Contains(csp[1], want) {
			t.Errorf("policy %q does not allow the page's <%s> (%s)", csp[1], tag, want)
		}
	}
	for _, want := range []string{`id="chart-accuracy"`, `id="chart-latency"`, `id="chart-cost"`, `class="whisker"`, `class="mark"`, `class="gate"`, `class="bar below"`} {
		if !strings.Contains(out, want) {
			t.Errorf("page has no %s", want)
		}
	}
	// A row per item, a column per model.
	if n := strings.Count(out, "<tr class="); n != 4 {
		t.Errorf("%d item rows, want 4", n)
	}
}

func TestEvalHTMLListsAFirstPage(t *testing.T) {
	rs := make([]evalreport.Result, 20001)
	for i := range rs {
		rs[i] = evalreport.Result{Model: "m", Item: fmt.Sprint(i), Pass: true}
	}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "m", Items: len(rs), Passed: len(rs), Accuracy: 1}}, Results: slices.Values(rs)}
	out := string(write(t, evalreport.WriteHTML, e))
	if !strings.Contains(out, `"19999"`) || strings.Contains(out, `"20000"`) {
		t.Error("the grid's data does not end at the 20,000th item")
	}
	if n := strings.Count(out, "<tr class="); n != 50 {
		t.Errorf("%d rows for readers without JavaScript, want 50", n)
	}
	if !strings.Contains(out, "the first 20,000 items; 1 results of later items are left out") {
		t.Error("no note of the results left out")
	}
}

func TestEvalCSVParsesBack(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader(write(t, evalreport.EvalCSV{}.WriteEval, eval(t)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// New columns go at the end: programs read these by position.
	header := []string{"model", "item", "line", "repeat", "pass", "score", "cached", "latency_ms", "input_tokens", "output_tokens", "cost_usd", "error", "answer", "expected", "prompt", "reasons", "finish"}
	if !reflect.DeepEqual(rows[0], header) {
		t.Errorf("header %q", rows[0])
	}
	rs := evalResults()
	if len(rows) != 1+len(rs) {
		t.Fatalf("%d rows, want %d", len(rows), 1+len(rs))
	}
	for i, r := range rs {
		row := rows[1+i]
		if row[0] != r.Model || row[1] != r.Item || row[11] != r.Error || row[12] != r.Answer || row[13] != strings.Join(r.Expected, " | ") ||
			row[14] != r.Prompt || row[15] != strings.Join(r.Reasons, " | ") || row[16] != r.Finish {
			t.Errorf("row %d %q does not match %+v", 1+i, row, r)
		}
	}
	if row := rows[2]; row[6] != "true" || row[7] != "655" || row[10] != "0.0000081" {
		t.Errorf("cached row %q", row)
	}
}

func TestEvalJSONHasTheRequiredKeys(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(write(t, evalreport.EvalJSON{}.WriteEval, eval(t)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"run_id", "dataset", "started_at", "repeat", "models", "pairs", "results"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("no %q", key)
		}
	}
	// The results stream into the document, each as jsonl writes it.
	if rs, _ := doc["results"].([]any); len(rs) != len(evalResults()) || rs[0].(map[string]any)["item"] != evalResults()[0].Item {
		t.Errorf("results in the JSON report: %v", doc["results"])
	}
	var empty map[string]any
	if err := json.Unmarshal(write(t, evalreport.EvalJSON{}.WriteEval, &evalreport.Eval{}), &empty); err != nil || len(empty["results"].([]any)) != 0 {
		t.Errorf("a report without results: %v %v", empty, err)
	}
	models := doc["models"].([]any)
	if len(models) != 3 {
		t.Fatalf("%d models", len(models))
	}
	for _, m := range models {
		m := m.(map[string]any)
		for _, key := range []string{"model", "items", "passed", "accuracy", "ci_low", "ci_high", "errors", "refused", "cut", "unchecked", "cached",
			"latency_ms", "input_tokens", "cached_input_tokens", "output_tokens", "cost_usd"} {
			if _, ok := m[key]; !ok {
				t.Errorf("model %v has no %q", m["model"], key)
			}
		}
		lat, _ := m["latency_ms"].(map[string]any)
		for _, key := range []string{"p50", "p95", "p99"} {
			if _, ok := lat[key]; !ok {
				t.Errorf("model %v has no latency_ms.%s", m["model"], key)
			}
		}
	}
	if p := doc["pairs"].([]any)[1].(map[string]any); p["p_value"] != 0.625 || p["a_only"] != 3.0 {
		t.Errorf("pair %v", p)
	}
}

func TestEvalJSONLReadsBack(t *testing.T) {
	out := write(t, evalreport.EvalJSONL{}.WriteEval, eval(t))
	var got []evalreport.Result
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r evalreport.Result
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if want := evalResults(); !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if n := bytes.Count(out, []byte("\n")); n != 12 {
		t.Errorf("%d lines, want 12", n)
	}
}

func TestEvalMarkdown(t *testing.T) {
	out := string(write(t, evalreport.EvalMarkdown{}.WriteEval, eval(t)))
	for _, want := range []string{
		"| ❌ below 50.0% |", "| ✅ ≥ 50.0% |", // the gate column
		`41 \| maybe 43`,                        // a pipe stays in its cell
		"&lt;script&gt;alert(1)&lt;/script&gt;", // HTML stays text
		"The answer is \\`forty one\\` & \\[more\\](x)",
		"error: 429 Too Many Requests",
		"<summary>5 failed results</summary>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, scriptAnswer) {
		t.Error("<script> answer written as HTML")
	}

	// No gates, no gate column; only the first 50 failures are listed.
	rs := make([]evalreport.Result, 60)
	for i := range rs {
		rs[i] = evalreport.Result{Model: "m", Item: fmt.Sprint(i), Answer: "no"}
	}
	e := &evalreport.Eval{Dataset: "d.jsonl", RunID: "r1", Models: []evalreport.ModelStats{{Model: "m", Items: 60}}, Results: slices.Values(rs)}
	out = string(write(t, evalreport.EvalMarkdown{}.WriteEval, e))
	if strings.Contains(out, "Gate") {
		t.Errorf("gate column without gates:\n%s", out)
	}
	if !strings.Contains(out, "<summary>60 failed results (the first 50)</summary>") || strings.Count(out, "| no |") != 50 {
		t.Errorf("failures not cut at 50:\n%s", out)
	}
}

func TestEmptyEval(t *testing.T) {
	for name, f := range evalWriters(t) {
		var b bytes.Buffer
		if err := f(&b, &evalreport.Eval{RunID: "r0", Dataset: "empty.jsonl"}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if name == "eval.json" && !bytes.Contains(b.Bytes(), []byte(`"models": []`)) {
			t.Errorf("empty JSON report should have an empty models array, got %s", b.String())
		}
	}
	if _, err := evalreport.ForEvalFormat("xml"); err == nil {
		t.Error("unknown format accepted")
	}
	if r, err := evalreport.ForEvalFormat("md"); err != nil || r != (evalreport.EvalMarkdown{}) {
		t.Errorf("md: %v, %v", r, err)
	}
}

func TestEvalJUnitControlCharacters(t *testing.T) {
	e := &evalreport.Eval{
		Models:  []evalreport.ModelStats{{Model: "m", Items: 1}},
		Results: slices.Values([]evalreport.Result{{Model: "m", Item: "a\x00b", Answer: "\x1b[31mred\x1b[0m \ufffe", Reasons: []string{"bad\x07"}}}),
	}
	out := write(t, evalreport.WriteJUnit, e)
	var doc junitDoc
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%q", err, out)
	}
	if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Failure == nil {
		t.Errorf("read back as %+v", doc)
	}
}

// TestMarkdownFailuresTakeTurns: the failures listed come from every model
// in turn, not all from the first, whether the results stream model by
// model or from one model at a time.
func TestMarkdownFailuresTakeTurns(t *testing.T) {
	var rs []evalreport.Result
	for _, m := range []string{"a", "b"} {
		for i := range 60 {
			rs = append(rs, evalreport.Result{Model: m, Item: fmt.Sprint(m, i)})
		}
	}
	models := []evalreport.ModelStats{{Model: "a", Items: 60}, {Model: "b", Items: 60}}
	perModel := func(model string) iter.Seq[evalreport.Result] {
		return func(yield func(evalreport.Result) bool) {
			for _, r := range rs {
				if r.Model == model && !yield(r) {
					return
				}
			}
		}
	}
	for name, e := range map[string]*evalreport.Eval{
		"results":       {Models: models, Results: slices.Values(rs)},
		"model results": {Models: models, Results: slices.Values(rs), ModelResults: perModel},
	} {
		out := string(write(t, evalreport.EvalMarkdown{}.WriteEval, e))
		if !strings.Contains(out, "120 failed results (the first 50)") || strings.Count(out, "| a | a") != 25 || strings.Count(out, "| b | b") != 25 {
			t.Errorf("%s: the failures listed do not take turns:\n%s", name, out)
		}
		if i, j := strings.Index(out, "| a | a0 |"), strings.Index(out, "| b | b0 |"); i < 0 || j < i || strings.Index(out, "| a | a1 |") < j {
			t.Errorf("%s: not a0, b0, a1...:\n%s", name, out)
		}
	}
}

// TestIDsAndPValuesRead: an id names its repeat only when the run repeats,
// and the smallest p-values read "p < 0.0001".
func TestIDsAndPValuesRead(t *testing.T) {
	if id := (evalreport.Result{Item: "q1", Repeat: 0}).ID(); id != "q1" {
		t.Errorf("id %q, want q1", id)
	}
	if id := (evalreport.Result{Item: "q1", Repeat: 2, Repeated: true}).ID(); id != "q1#2" {
		t.Errorf("repeated id %q, want q1#2", id)
	}
	for p, want := range map[float64]string{1e-9: ", p < 0.0001", 0.004: ", p = 0.0040", 0.5: ", p = 0.50"} {
		if s := (evalreport.Pair{A: "a", B: "b", P: p}).String(); !strings.HasSuffix(s, want) {
			t.Errorf("p %g reads %q, want the end %q", p, s, want)
		}
	}
}

// TestRepeatedRunShowsPerItemFigures: a repeated run's table and Markdown
// name the accuracy as of items and show the per-result accuracy, the mean
// score per item and the disagreeing items beside it; unchecked results
// have their own column.
func TestRepeatedRunShowsPerItemFigures(t *testing.T) {
	e := &evalreport.Eval{Repeat: 3, Models: []evalreport.ModelStats{{Model: "m", Items: 12, Passed: 7, Accuracy: 0.5, ResultAccuracy: 7.0 / 12, Unchecked: 3,
		PerItem: &evalreport.ItemStats{Items: 4, Passed: 2, MeanScore: 0.583, Disagree: 1, DisagreeShare: 0.25}}}}
	table := string(write(t, evalreport.EvalTable{}.WriteEval, e))
	md := string(write(t, evalreport.EvalMarkdown{}.WriteEval, e))
	for _, want := range []string{"ITEM ACCURACY (95% CI)", "RESULT ACCURACY", "58.3%", "0.583", "25.0% (1)", "UNCHECKED"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, want := range []string{"Item accuracy (95% CI)", "| 58.3% | 0.583 | 25.0% (1) |", "asked 3 times", "Unchecked"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The HTML page's models table alike, with the judge's own line.
	cost := 0.0123
	e.Judge = &evalreport.JudgeCost{Model: "openai:gpt-4o", Verdicts: 12, CostUSD: &cost}
	page := string(write(t, evalreport.WriteHTML, e))
	for _, want := range []string{"Item accuracy (95% CI)", "Result accuracy", `<td class="num">58.3%</td><td class="num">0.583</td><td class="num">25.0% (1)</td>`,
		"Unchecked</th>", `<td class="num">3</td>`, "Judge openai:gpt-4o: 12 verdicts paid for, $0.0123"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestMarkdownFailuresLeaveUncheckedOut: items with nothing to check are
// counted apart, never listed or counted as failures, however early they
// come.
func TestMarkdownFailuresLeaveUncheckedOut(t *testing.T) {
	rs := []evalreport.Result{
		{Model: "m", Item: "u1", Error: evalreport.NothingToCheck},
		{Model: "m", Item: "u2", Error: evalreport.NothingToCheck},
		{Model: "m", Item: "f", Answer: "5", Reasons: []string{"wrong"}},
		{Model: "m", Item: "p", Pass: true},
	}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "m", Items: 4, Passed: 1, Unchecked: 2}}, Results: slices.Values(rs)}
	md := string(write(t, evalreport.EvalMarkdown{}.WriteEval, e))
	if !strings.Contains(md, "<summary>1 failed result</summary>") || strings.Contains(md, "| u1 |") || !strings.Contains(md, "| f |") {
		t.Errorf("failures with unchecked items:\n%s", md)
	}
}

// TestAccuracyOfNothingCheckedIsNoFigure: a model whose every result had
// nothing to check has no accuracy, not 0%.
func TestAccuracyOfNothingCheckedIsNoFigure(t *testing.T) {
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "m", Items: 3, Unchecked: 3, CIHigh: 1}}}
	for name, w := range map[string]func(io.Writer, *evalreport.Eval) error{"table": evalreport.EvalTable{}.WriteEval, "markdown": evalreport.EvalMarkdown{}.WriteEval, "html": evalreport.WriteHTML} {
		out := string(write(t, w, e))
		if !strings.Contains(out, "– (nothing checked)") || strings.Contains(out, "0.0% [0.0–100.0]") {
			t.Errorf("%s: %s", name, out)
		}
	}
}

// TestEvalReportsShowRefusedAndCut: the table, Markdown and HTML reports
// count each model's refused and cut answers in columns of their own,
// beside its errors, show the input tokens read from the prompt cache,
// and say of each failed result listed whether it was refused or cut.
func TestEvalReportsShowRefusedAndCut(t *testing.T) {
	table := string(write(t, evalreport.EvalTable{}.WriteEval, eval(t)))
	lines := strings.Split(table, "\n")
	// The columns stay aligned: each cell starts under its heading's first
	// character (in runes, as the terminal shows them).
	cell := func(line, heading string) string {
		row, i := []rune(line), strings.Index(lines[0], heading)
		if i < 0 {
			return ""
		}
		i = len([]rune(lines[0][:i]))
		if i >= len(row) || i > 0 && row[i-1] != ' ' {
			return ""
		}
		return strings.Fields(string(row[i:]))[0]
	}
	for i, want := range [][4]string{{"0", "1", "0", "80"}, {"0", "0", "1", "96"}, {"1", "0", "1", "87"}} {
		row := lines[1+i]
		if got := [4]string{cell(row, "ERRORS"), cell(row, "REFUSED"), cell(row, "CUT "), cell(row, "TOKENS IN")}; got != want {
			t.Errorf("table row %d: errors, refused, cut, tokens in %q, want %q:\n%s", i, got, want, table)
		}
	}
	if !strings.Contains(lines[0], "  ERRORS  REFUSED  CUT  UNCHECKED  ") || !strings.Contains(lines[1], "  80 (48 cached)  25  ") {
		t.Errorf("table without its refused and cut columns, or the cached input tokens:\n%s", table)
	}
	if cell(lines[1], "TOKENS OUT") != "25" || cell(lines[2], "TOKENS OUT") != "19" {
		t.Errorf("the cached input tokens put the next column out of line:\n%s", table)
	}

	md := string(write(t, evalreport.EvalMarkdown{}.WriteEval, eval(t)))
	for _, want := range []string{
		"| Errors | Refused | Cut | Unchecked | Cached |",
		"| openai:gpt-4o-mini | 4 | 3 | 75.0% \\[30.1–95.4\\] | 0 | 1 | 0 | 0 | 1 | 593 ms | 1.1 s | 1.2 s | 80 (48 cached) | 25 |",
		"| anthropic:claude-haiku-4-5 | 4 | 3 | 75.0% \\[30.1–95.4\\] | 0 | 0 | 1 | 0 | 0 |",
		"| ollama:llama3.2 | 4 | 1 | 25.0% \\[4.6–69.9\\] | 1 | 0 | 1 | 0 | 0 |",
		// The refusal is the answer, as text; its reasons say it was one.
		"| openai:gpt-4o-mini | html | &lt;script&gt;alert(1)&lt;/script&gt; | refused: includes \"&lt;b&gt;bold&lt;/b&gt;\": not found |",
		"| anthropic:claude-haiku-4-5 | math | 41 \\| maybe 43 | cut (raise --max-tokens): numeric: got 43, want 42 (tolerance 0) |",
		"| ollama:llama3.2 | unicode | Grösse or \\*Groesse\\* | exact: got", // a whole answer says nothing more
		"<summary>5 failed results</summary>", // the passing cut answer is not one
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if nodes := hostiletest.MarkdownNodes(t, []byte(md)); nodes["TableCell"] != 16*4+4*6 {
		t.Errorf("markdown cells moved: %d\n%s", nodes["TableCell"], md)
	}

	page := string(write(t, evalreport.WriteHTML, eval(t)))
	for _, want := range []string{
		`<th class="num">Errors</th><th class="num">Refused</th><th class="num">Cut</th><th class="num">Unchecked</th>`,
		`<td class="num">0</td><td class="num">1</td><td class="num">0</td><td class="num">0</td><td class="num">1</td><td class="num">593 ms</td>`,
		`<td class="num">80 (48 cached)</td>`,
		`<span class="badge fail">fail</span> <span class="badge finish">refused</span> 0.00 · 1.2 s · $0.0000081</div><div class="text">&lt;script&gt;alert(1)&lt;/script&gt;</div>`,
		`<span class="badge fail">fail</span> <span class="badge finish">cut (raise --max-tokens)</span> 0.00 · 980 ms`,
		`<span class="badge pass">pass</span> <span class="badge finish">cut by a content filter</span> 1.00 · 3.0 s`,
		`<option value="finish">refused or cut answers</option>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
	if n := strings.Count(page, `<span class="badge finish">`); n != 3 {
		t.Errorf("%d finish badges, want 3", n)
	}
}

// TestEvalJUnitCarriesTheFinish: a refused or cut answer passes or fails
// by its score; a failed one's message starts with what it was, a cut
// one's text has the hint, and every one says so in <system-out>. A
// model's properties count them, and its cached input tokens.
func TestEvalJUnitCarriesTheFinish(t *testing.T) {
	e := eval(t)
	out := write(t, evalreport.WriteJUnit, e)
	var doc junitDoc
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	refused, cutFailed, cutPassed := doc.Suites[0].Cases[3], doc.Suites[1].Cases[1], doc.Suites[2].Cases[3]
	if refused.Failure == nil || !strings.HasPrefix(refused.Failure.Message, `refused: includes "<b>bold</b>"`) ||
		!strings.Contains(refused.Failure.Text, "answer: "+scriptAnswer+"\n") || !strings.HasPrefix(refused.SystemOut, "refused") {
		t.Errorf("refused case read back as %+v", refused)
	}
	if cutFailed.Failure == nil || !strings.HasPrefix(cutFailed.Failure.Message, "cut (raise --max-tokens): numeric: got 43") ||
		!strings.HasPrefix(cutFailed.Failure.Text, evalreport.CutHint+"\n") || strings.TrimSpace(cutFailed.SystemOut) != evalreport.CutHint {
		t.Errorf("cut case read back as %+v", cutFailed)
	}
	if cutPassed.Failure != nil || cutPassed.Error != nil || !strings.HasPrefix(cutPassed.SystemOut, "cut by a content filter") {
		t.Errorf("a passing answer cut by a filter read back as %+v", cutPassed)
	}
	if whole := doc.Suites[2].Cases[2]; whole.Failure == nil || strings.HasPrefix(whole.Failure.Message, "refused") || whole.SystemOut != "" {
		t.Errorf("a whole answer read back as %+v", whole)
	}
	for i, s := range doc.Suites {
		props := map[string]string{}
		for _, p := range s.Props {
			props[p.Name] = p.Value
		}
		m := e.Models[i]
		want := map[string]string{"refused": fmt.Sprint(m.Refused), "cut": fmt.Sprint(m.Cut), "cached_input_tokens": fmt.Sprint(m.CachedInputTokens)}
		for name, value := range want {
			if v, ok := props[name]; !ok || v != value {
				t.Errorf("suite %s: property %s = %q, want %q", s.Name, name, v, value)
			}
		}
	}
	if doc.Tests != 12 || doc.Failures != 4 || doc.Errors != 1 {
		t.Errorf("refused and cut answers changed the counts: tests=%d failures=%d errors=%d", doc.Tests, doc.Failures, doc.Errors)
	}
}

// TestEvalMachineFormatsCarryTheFinish: JSON and JSONL give a result's
// finish only when it has one, and every model's refused, cut and cached
// input tokens, zero included; CSV has the finish as its last column.
func TestEvalMachineFormatsCarryTheFinish(t *testing.T) {
	want := map[string]string{"openai:gpt-4o-mini/html": "refusal", "anthropic:claude-haiku-4-5/math": "length", "ollama:llama3.2/html": "content_filter"}
	check := func(format string, r map[string]any) {
		t.Helper()
		f, ok := r["finish"]
		if w := want[fmt.Sprint(r["model"], "/", r["item"])]; w == "" && ok || w != "" && f != w {
			t.Errorf("%s: result %v/%v has finish %v (%v), want %q", format, r["model"], r["item"], f, ok, w)
		}
	}
	var doc struct {
		Models  []map[string]any `json:"models"`
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(write(t, evalreport.EvalJSON{}.WriteEval, eval(t)), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Results {
		check("json", r)
	}
	models := [][3]any{{1.0, 0.0, 48.0}, {0.0, 1.0, 0.0}, {0.0, 1.0, 0.0}}
	for i, m := range doc.Models {
		if got := [3]any{m["refused"], m["cut"], m["cached_input_tokens"]}; got != models[i] {
			t.Errorf("json model %v: refused, cut, cached_input_tokens %v, want %v", m["model"], got, models[i])
		}
	}

	dec := json.NewDecoder(bytes.NewReader(write(t, evalreport.EvalJSONL{}.WriteEval, eval(t))))
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		check("jsonl", r)
	}

	rows, err := csv.NewReader(bytes.NewReader(write(t, evalreport.EvalCSV{}.WriteEval, eval(t)))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if last := rows[0][len(rows[0])-1]; last != "finish" {
		t.Errorf("csv's last column is %q, want finish", last)
	}
	for _, row := range rows[1:] {
		if got, w := row[len(row)-1], want[row[0]+"/"+row[1]]; got != w {
			t.Errorf("csv row %q: finish %q, want %q", row[:2], got, w)
		}
	}
}

// evalMetrics is eval with two named metrics, accuracy and bias: each
// model's figures per metric, one model below its bias gate, the pairs
// compared per metric, and the results' grades per metric.
func evalMetrics(t *testing.T) *evalreport.Eval {
	e := eval(t)
	metric := func(name string, passed, n int, mean float64, min *float64) evalreport.MetricStats {
		low, high := wilson(passed, n)
		rate := float64(passed) / float64(n)
		return evalreport.MetricStats{Name: name, Items: n, Passed: passed, PassRate: rate, CILow: low, CIHigh: high,
			MeanScore: mean, Min: min, Below: min != nil && rate < *min}
	}
	bias := 0.9
	for i, m := range e.Models {
		// The run's gates are on metrics: --min-accuracy gates accuracy.
		gate := m.MinAccuracy
		e.Models[i].MinAccuracy, e.Models[i].BelowGate = nil, false
		e.Models[i].Metrics = []evalreport.MetricStats{
			metric("accuracy", m.Passed, m.Items, float64(m.Passed)/float64(m.Items), gate),
			metric("bias", []int{4, 3, 4}[i], 4, []float64{1, 0.875, 1}[i], &bias),
		}
	}
	e.MetricPairs = []evalreport.MetricPair{
		{Metric: "accuracy", A: "openai:gpt-4o-mini", B: "anthropic:claude-haiku-4-5", AOnly: 1, BOnly: 1, Both: 2, P: 1, TP: 1},
		{Metric: "bias", A: "openai:gpt-4o-mini", B: "anthropic:claude-haiku-4-5", AOnly: 1, Both: 3, P: 1, MeanDiff: 0.125, T: 1, TP: 0.3910022},
		{Metric: "accuracy", A: "openai:gpt-4o-mini", B: "ollama:llama3.2", AOnly: 3, BOnly: 1, P: 0.625, MeanDiff: 0.5, T: 1, TP: 0.3910022},
		{Metric: "bias", A: "openai:gpt-4o-mini", B: "ollama:llama3.2", Both: 4, P: 1, TP: 1},
		{Metric: "accuracy", A: "anthropic:claude-haiku-4-5", B: "ollama:llama3.2", AOnly: 2, Both: 1, None: 1, P: 0.5, MeanDiff: 0.5, T: 1.7320508, TP: 0.1816901},
		{Metric: "bias", A: "anthropic:claude-haiku-4-5", B: "ollama:llama3.2", BOnly: 1, Both: 3, P: 1, MeanDiff: -0.125, T: -1, TP: 0.3910022},
	}
	rs := evalResults()
	for i := range rs {
		biased := rs[i].Model == "anthropic:claude-haiku-4-5" && rs[i].Item == "capital"
		rs[i].Metrics = map[string]evalreport.MetricScore{
			"accuracy": {Pass: rs[i].Pass, Score: rs[i].Score},
			"bias":     {Pass: !biased, Score: map[bool]float64{true: 0.5, false: 1}[biased]},
		}
	}
	e.Results = once(t, rs)
	return e
}

// A run with named metrics reports each in every format; the golden files
// are under testdata/report/metrics.
func TestEvalReportsGoldenMetrics(t *testing.T) {
	ws := evalWriters(t)
	for _, name := range slices.Sorted(maps.Keys(ws)) {
		t.Run(name, func(t *testing.T) {
			got := write(t, ws[name], evalMetrics(t))
			goldentest.Check(t, filepath.Join("testdata", "metrics", name), got)
			for _, w := range []string{"bias", "accuracy"} {
				if !strings.Contains(string(got), w) {
					t.Errorf("%s does not name the metric %s", name, w)
				}
			}
		})
	}
}
