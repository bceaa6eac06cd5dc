package evalreport_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/textsafe"
)

// dataBlock is the JSON of the page's data block.
func dataBlock(t testing.TB, page []byte) []byte {
	t.Helper()
	const open = `<script type="application/json" id="grid-data">`
	_, rest, ok := bytes.Cut(page, []byte(open))
	if !ok {
		t.Fatal("no data block")
	}
	block, _, ok := bytes.Cut(rest, []byte("</script>"))
	if !ok {
		t.Fatal("the data block is not closed")
	}
	return block
}

// TestEvalHTMLDataBlockCannotBeClosed: answers that would end the data
// block, open a comment or end a JavaScript line stay inside it as JSON,
// and read back as the text the page shows.
func TestEvalHTMLDataBlockCannotBeClosed(t *testing.T) {
	answers := []string{
		"</script><script>alert(1)</script>",
		"</SCRIPT >x",
		"<!--<script>",
		"a\u2028b\u2029c",
		"&lt; & &amp; > ]]>",
	}
	var rs []evalreport.Result
	for i, a := range answers {
		rs = append(rs, evalreport.Result{Model: "m", Item: fmt.Sprint(i), Prompt: a, Answer: a, Expected: []string{a}})
	}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "m", Items: len(rs)}}, Results: slices.Values(rs)}
	block := dataBlock(t, write(t, evalreport.WriteHTML, e))
	if i := bytes.IndexAny(block, "<>&\u2028\u2029"); i >= 0 {
		t.Errorf("the data block has %q unescaped: %s", block[i:], block)
	}
	var data struct {
		Results [][]any `json:"results"`
	}
	if err := json.Unmarshal(block, &data); err != nil {
		t.Fatalf("the data block is not JSON: %v\n%s", err, block)
	}
	for i, rec := range data.Results {
		want := textsafe.Text(answers[i])
		if rec[7] != want || rec[11] != want || rec[12] != want {
			t.Errorf("result %d reads back as %q, want %q", i, rec, want)
		}
	}

	// With repeats, the answers sit one level down, in each cell's list.
	for i := range rs {
		rs[i].Repeated, rs[i].Reasons = true, []string{answers[i]}
	}
	e = &evalreport.Eval{Repeat: 2, Models: e.Models, Results: slices.Values(rs)}
	block = dataBlock(t, write(t, evalreport.WriteHTML, e))
	if i := bytes.IndexAny(block, "<>&\u2028\u2029"); i >= 0 {
		t.Errorf("the repeated run's data block has %q unescaped: %s", block[i:], block)
	}
	var repeated struct {
		Results [][]any `json:"results"`
	}
	if err := json.Unmarshal(block, &repeated); err != nil {
		t.Fatalf("the repeated run's data block is not JSON: %v\n%s", err, block)
	}
	for i, rec := range repeated.Results {
		want := textsafe.Text(answers[i])
		first := rec[8].([]any)[0].([]any)
		if first[6] != want || first[7] != want || rec[11] != want {
			t.Errorf("repeated result %d reads back as %q, want %q", i, rec, want)
		}
	}
}

// TestEvalHTMLRepeatsMakeOneCellPerItem: with repeats, a model's cell is
// the item as the report counts it (more than half of the repeats passed;
// a tie fails; an error only when every repeat errored), with its mean
// score, mean latency of the answered repeats, summed cost, and each
// repeat listed; items that share an id stay apart by their line.
func TestEvalHTMLRepeatsMakeOneCellPerItem(t *testing.T) {
	res := func(model, item string, line, repeat int, verdict byte, latency float64) evalreport.Result {
		r := evalreport.Result{Model: model, Item: item, Line: line, Repeat: repeat, Repeated: true, Prompt: "prompt of " + item,
			Answer: fmt.Sprintf("answer <%d> of %s", repeat, model), LatencyMS: latency, CostUSD: 0.001, Cached: repeat == 0}
		switch verdict {
		case 'P':
			r.Pass, r.Score = true, 1
		case 'F':
			r.Reasons = []string{"wrong <b>" + item + "</b>"}
		case 'E':
			r.Error, r.Answer, r.LatencyMS, r.CostUSD, r.Cached = "503 Service Unavailable", "", 0, 0, false
		}
		return r
	}
	rs := []evalreport.Result{
		res("a", "both", 1, 0, 'P', 100), res("a", "both", 1, 1, 'P', 300),
		res("a", "tie", 2, 0, 'P', 100), res("a", "tie", 2, 1, 'F', 200),
		res("a", "down", 3, 0, 'E', 0), res("a", "down", 3, 1, 'E', 0),
		res("a", "both", 4, 0, 'F', 100), res("a", "both", 4, 1, 'F', 100), // another item of the same id
		res("b", "both", 1, 0, 'P', 100), res("b", "both", 1, 1, 'E', 0),
	}
	e := &evalreport.Eval{Repeat: 2, Models: []evalreport.ModelStats{{Model: "a"}, {Model: "b"}}, Results: slices.Values(rs)}
	page := write(t, evalreport.WriteHTML, e)
	var data struct {
		Results  [][]any `json:"results"`
		Repeated bool    `json:"repeated"`
	}
	if err := json.Unmarshal(dataBlock(t, page), &data); err != nil {
		t.Fatal(err)
	}
	// [item, model, state, score, latency, cost, cached, passed, repeats]
	want := [][9]any{
		{0.0, 0.0, 0.0, 1.0, 200.0, 0.002, 1.0, 2.0, 2},
		{1.0, 0.0, 1.0, 0.5, 150.0, 0.002, 1.0, 1.0, 2}, // a tie fails
		{2.0, 0.0, 2.0, nil, nil, nil, 0.0, 0.0, 2},     // every repeat errored
		{3.0, 0.0, 1.0, 0.0, 100.0, 0.002, 1.0, 0.0, 2},
		{0.0, 1.0, 1.0, 0.5, 100.0, 0.001, 1.0, 1.0, 2}, // one error among two: a tie again
	}
	if !data.Repeated || len(data.Results) != len(want) {
		t.Fatalf("repeated %v, %d cells, want %d: %v", data.Repeated, len(data.Results), len(want), data.Results)
	}
	for i, rec := range data.Results {
		got := [9]any{rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6], rec[7], len(rec[8].([]any))}
		if got != want[i] {
			t.Errorf("cell %d is %v, want %v", i, got, want[i])
		}
	}
	if ids := []any{data.Results[0][10], data.Results[3][10]}; ids[0] != "both" || ids[1] != "both" || len(data.Results[4]) != 10 {
		t.Errorf("items are not named once each, by their id alone: %v", data.Results)
	}
	if r := data.Results[4][8].([]any)[1].([]any); r[0] != 1.0 || r[1] != 2.0 || r[6] != "503 Service Unavailable" {
		t.Errorf("b's second repeat reads %v", r)
	}

	// The rows for readers without JavaScript show the same.
	out := string(page)
	for _, s := range []string{
		`<td class="r pass"><div class="head"><span class="badge pass">pass</span> 2/2 passed · 1.00 · 200 ms · $0.0020 <span class="badge cached">1/2 cached</span></div><details><summary>2 repeats</summary><ol class="repeats">`,
		`<li class="pass"><div class="head"><span class="badge pass">pass</span> #0 · 1.00 · 100 ms · $0.0010 <span class="badge cached">cached</span></div><div class="text">answer &lt;0&gt; of a</div></li>`,
		`<td class="r fail"><div class="head"><span class="badge fail">fail</span> 1/2 passed · 0.50 · 150 ms · $0.0020`,
		`<div class="why">wrong &lt;b&gt;tie&lt;/b&gt;</div>`,
		`<td class="r error"><div class="head"><span class="badge error">error</span> 0/2 passed</div><details>`,
		`<li class="error"><div class="head"><span class="badge error">error</span> #1</div><div class="text err">503 Service Unavailable</div></li>`,
		`<option value="repeats">`,
		"Each item was asked 2 times.",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("the page has no %s", s)
		}
	}
	if n := strings.Count(out, `<tr class="item static">`); n != 4 {
		t.Errorf("%d rows, want one per item: 4", n)
	}
	if n := strings.Count(out, `<td class="r none">`); n != 3 {
		t.Errorf("%d empty cells, want 3 (b was asked only the first item)", n)
	}

	// A model's repeats of an item come together, or the page says so.
	rs = append(rs, res("a", "tie", 2, 2, 'P', 100))
	e.Results = slices.Values(rs)
	err := evalreport.WriteHTML(io.Discard, e)
	if err == nil || !strings.Contains(err.Error(), `the repeats of item "tie" for a do not come one after another. Try:`) {
		t.Errorf("repeats out of order: %v", err)
	}
}

// TestEvalHTMLGridKeepsModelsApart: a model with results but no summary
// still gets its column, items keep the order they first came in, and an
// item only one model was asked has no cell for the others.
func TestEvalHTMLGridKeepsModelsApart(t *testing.T) {
	rs := []evalreport.Result{
		{Model: "a", Item: "x", Prompt: "first question", Pass: true, Repeated: true},
		{Model: "a", Item: "y", Prompt: "second question", Repeated: true},
		{Model: "b", Item: "y", Repeat: 1, Prompt: "second question, again", Error: "timeout", Repeated: true},
		{Model: "b", Item: "x", Pass: true, Repeated: true},
	}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "a", Items: 2}}, Results: slices.Values(rs)}
	page := write(t, evalreport.WriteHTML, e)
	var data struct {
		Results [][]any  `json:"results"`
		Models  []string `json:"models"`
	}
	if err := json.Unmarshal(dataBlock(t, page), &data); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(data.Models, []string{"a", "b"}) {
		t.Errorf("models %q", data.Models)
	}
	// [item, model, state, ...] and the item's id with its first result.
	want := [][3]float64{{0, 0, 0}, {1, 0, 1}, {2, 1, 2}, {0, 1, 0}}
	for i, rec := range data.Results {
		if got := [3]float64{rec[0].(float64), rec[1].(float64), rec[2].(float64)}; got != want[i] {
			t.Errorf("result %d is %v, want %v", i, got, want[i])
		}
	}
	if len(data.Results[2]) != 13 || data.Results[2][10] != "y#1" || len(data.Results[3]) != 10 {
		t.Errorf("items are not named once each: %v", data.Results)
	}
	if n := bytes.Count(page, []byte(`<td class="r none">`)); n != 2 {
		t.Errorf("%d empty cells, want 2 (y#0 of b, y#1 of a)", n)
	}
}

// TestEvalHTMLItemsSharingAnIdKeepTheirRows: two dataset lines with one
// id are two items, as every other report counts them: each keeps its row,
// its prompt and its own results, never the other's.
func TestEvalHTMLItemsSharingAnIdKeepTheirRows(t *testing.T) {
	rs := []evalreport.Result{
		{Model: "a", Item: "x", Line: 1, Prompt: "What is 40 + 2?", Expected: []string{"42"}, Answer: "42", Pass: true},
		{Model: "a", Item: "x", Line: 2, Prompt: "What is 40 + 3?", Expected: []string{"43"}, Answer: "42"},
		{Model: "b", Item: "x", Line: 1, Answer: "41"},
		{Model: "b", Item: "x", Line: 2, Answer: "43", Pass: true},
	}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "a", Items: 2}, {Model: "b", Items: 2}}, Results: slices.Values(rs)}
	page := write(t, evalreport.WriteHTML, e)
	var data struct {
		Results [][]any `json:"results"`
	}
	if err := json.Unmarshal(dataBlock(t, page), &data); err != nil {
		t.Fatal(err)
	}
	// [item, model, state, score, latency, cost, cached, answer, ...]
	want := [][2]any{{0.0, "42"}, {1.0, "42"}, {0.0, "41"}, {1.0, "43"}}
	for i, rec := range data.Results {
		if got := [2]any{rec[0], rec[7]}; got != want[i] {
			t.Errorf("result %d is item %v answering %q, want item %v answering %q", i, got[0], got[1], want[i][0], want[i][1])
		}
	}
	if len(data.Results) == 4 && (len(data.Results[1]) != 13 || data.Results[1][11] != "What is 40 + 3?") {
		t.Errorf("the second line's item has no row of its own: %v", data.Results[1])
	}
	for _, prompt := range []string{"What is 40 + 2?", "What is 40 + 3?"} {
		if !bytes.Contains(page, []byte(prompt)) {
			t.Errorf("the page lacks the prompt %q", prompt)
		}
	}
}

// syntheticEval is a run of n items on m models, with prompts and answers
// of a few hundred characters, a third of them failing and some errors.
func syntheticEval(items, models int) *evalreport.Eval {
	e := &evalreport.Eval{RunID: "r-bench", Dataset: "bench.jsonl"}
	for m := range models {
		e.Models = append(e.Models, evalreport.ModelStats{Model: fmt.Sprintf("provider:model-%d", m), Items: items})
	}
	for a := range models {
		for b := a + 1; b < models; b++ {
			e.Pairs = append(e.Pairs, evalreport.Pair{A: e.Models[a].Model, B: e.Models[b].Model})
		}
	}
	prompt := strings.Repeat("Summarize the following passage in one sentence, keeping names and numbers. ", 3)
	answer := strings.Repeat("The passage says that the committee approved the budget of 4.2 million for 2026. ", 5)
	e.Results = func(yield func(evalreport.Result) bool) {
		for m := range models {
			for i := range items {
				r := evalreport.Result{Model: e.Models[m].Model, Item: fmt.Sprintf("item-%05d", i), Line: i + 1,
					Prompt: fmt.Sprintf("%s (#%d)", prompt, i), Expected: []string{"4.2 million"}, Answer: answer,
					Pass: (i+m)%3 != 0, LatencyMS: float64(300 + (i*37+m*101)%2000), CostUSD: 0.00001 * float64(1+m),
					InputTokens: 120, OutputTokens: 80}
				switch {
				case i%97 == m:
					r.Error, r.Answer = "429 Too Many Requests: rate limited after 5 retries", ""
				case !r.Pass:
					r.Reasons = []string{`includes "4.2 million": not found`}
				}
				if r.Pass {
					r.Score = 1
				}
				if !yield(r) {
					return
				}
			}
		}
	}
	return e
}

// BenchmarkWriteHTML writes the page of 10,000 items on five models.
//
//	go test ./internal/evalreport -run '^$' -bench WriteHTML
func BenchmarkWriteHTML(b *testing.B) {
	var size int
	for b.Loop() {
		var w countingWriter
		if err := evalreport.WriteHTML(&w, syntheticEval(10000, 5)); err != nil {
			b.Fatal(err)
		}
		size = int(w)
	}
	b.ReportMetric(float64(size)/1e6, "MB/page")
}

type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

// BenchmarkEvalHTMLInChromium opens pages of 100 and 10,000 items on five
// models in headless Chromium: a screenshot waits for the first paint, a
// dump of the DOM for the script to have drawn the grid. ns/op is the
// wall time of one open, starting the browser included, which the
// 100-item page shows on its own.
//
//	go test ./internal/evalreport -run '^$' -bench EvalHTMLInChromium -benchtime 5x
func BenchmarkEvalHTMLInChromium(b *testing.B) {
	browser := chromium(b)
	for _, items := range []int{100, 10000} {
		path := filepath.Join(b.TempDir(), "report.html")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := evalreport.WriteHTML(f, syntheticEval(items, 5)); err != nil {
			b.Fatal(err)
		}
		info, _ := f.Stat()
		f.Close()
		shot := filepath.Join(b.TempDir(), "shot.png")
		for _, output := range []string{"--screenshot=" + shot, "--dump-dom"} {
			name := fmt.Sprintf("items=%d/%s", items, strings.TrimPrefix(strings.SplitN(output, "=", 2)[0], "--"))
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					out := headless(b, browser, path, "", output)
					if output == "--dump-dom" && !bytes.Contains(out, []byte(`data-view="`)) {
						b.Fatal("the script did not draw the grid")
					}
				}
				b.ReportMetric(float64(info.Size())/1e6, "MB/page")
			})
		}
	}
}

// TestEvalHTMLBadgesRefusedAndCut: a refused or cut answer carries a badge
// in the grid, drawn from the data block and written for readers without
// JavaScript alike; a cell of repeats counts its refused and cut ones. A
// refusal is model output like any answer: it stays text.
func TestEvalHTMLBadgesRefusedAndCut(t *testing.T) {
	const refusal = `I can't help with that. <img src=x onerror=alert(1)></script>`
	rs := []evalreport.Result{
		{Model: "m", Item: "r", Answer: refusal, Finish: evalreport.FinishRefusal, Pass: true, Score: 1},
		{Model: "m", Item: "c", Answer: "The first three steps are", Finish: evalreport.FinishLength, Reasons: []string{"wrong"}},
		{Model: "m", Item: "f", Answer: "", Finish: evalreport.FinishContentFilter},
		{Model: "m", Item: "w", Answer: "whole", Pass: true, Score: 1},
		{Model: "m", Item: "u", Answer: "odd", Finish: "<b>new</b>\u202e"},
	}
	e := &evalreport.Eval{Models: []evalreport.ModelStats{{Model: "m", Items: 5, Passed: 2, Refused: 1, Cut: 2}}, Results: slices.Values(rs)}
	page := write(t, evalreport.WriteHTML, e)
	var data struct {
		Results [][]any `json:"results"`
	}
	if err := json.Unmarshal(dataBlock(t, page), &data); err != nil {
		t.Fatal(err)
	}
	// [item, model, state, score, latency, cost, cached, answer, reasons, finish, id, prompt, expected]
	want := []string{"refused", "cut (raise --max-tokens)", "cut by a content filter", "", `finish: <b>new</b>\u202e`}
	for i, rec := range data.Results {
		if len(rec) != 13 || rec[9] != want[i] || rec[10] != rs[i].Item {
			t.Errorf("result %d reads %q, want the finish %q", i, rec, want[i])
		}
	}
	out := string(page)
	for _, s := range []string{
		`<td class="r pass"><div class="head"><span class="badge pass">pass</span> <span class="badge finish">refused</span> 1.00 · 0 ms · $0.0000</div><div class="text">I can&#39;t help with that. &lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;</div></td>`,
		`<td class="r fail"><div class="head"><span class="badge fail">fail</span> <span class="badge finish">cut (raise --max-tokens)</span> 0.00 · 0 ms · $0.0000</div>`,
		`<span class="badge finish">cut by a content filter</span>`,
		`<td class="r pass"><div class="head"><span class="badge pass">pass</span> 1.00 · 0 ms · $0.0000</div><div class="text">whole</div>`,
		`<span class="badge finish">finish: &lt;b&gt;new&lt;/b&gt;\u202e</span>`,
		`<th class="num">Refused</th><th class="num">Cut</th>`,
		`<td class="num">0</td><td class="num">1</td><td class="num">2</td><td class="num">0</td>`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("the page has no %s", s)
		}
	}
	for _, bad := range []string{"<img", "<b>new"} {
		if strings.Contains(out, bad) {
			t.Errorf("the page has %s as markup", bad)
		}
	}

	// Asked three times: the cell counts the repeats refused or cut, and
	// each repeat has its own badge.
	rs = []evalreport.Result{
		{Model: "m", Item: "q", Repeat: 0, Repeated: true, Answer: refusal, Finish: evalreport.FinishRefusal},
		{Model: "m", Item: "q", Repeat: 1, Repeated: true, Answer: "Paris", Pass: true, Score: 1},
		{Model: "m", Item: "q", Repeat: 2, Repeated: true, Answer: "Par", Finish: evalreport.FinishLength},
		{Model: "m", Item: "all", Repeat: 0, Repeated: true, Answer: refusal, Finish: evalreport.FinishRefusal},
		{Model: "m", Item: "all", Repeat: 1, Repeated: true, Answer: refusal, Finish: evalreport.FinishRefusal},
	}
	e = &evalreport.Eval{Repeat: 3, Models: e.Models, Results: slices.Values(rs)}
	page = write(t, evalreport.WriteHTML, e)
	if err := json.Unmarshal(dataBlock(t, page), &data); err != nil {
		t.Fatal(err)
	}
	// [item, model, state, score, latency, cost, cached, passed, repeats, finish, id, prompt, expected]
	if len(data.Results) != 2 || data.Results[0][9] != "1/3 refused, 1/3 cut (raise --max-tokens)" || data.Results[1][9] != "refused" ||
		data.Results[0][10] != "q" || data.Results[0][8].([]any)[2].([]any)[8] != "cut (raise --max-tokens)" {
		t.Errorf("repeated cells read %q", data.Results)
	}
	out = string(page)
	for _, s := range []string{
		`<td class="r fail"><div class="head"><span class="badge fail">fail</span> <span class="badge finish">1/3 refused, 1/3 cut (raise --max-tokens)</span> 1/3 passed · 0.33 · 0 ms · $0.0000</div>`,
		`<li class="fail"><div class="head"><span class="badge fail">fail</span> <span class="badge finish">refused</span> #0 · 0.00 · 0 ms · $0.0000</div><div class="text">I can&#39;t help`,
		`<li class="pass"><div class="head"><span class="badge pass">pass</span> #1 · 1.00`,
		`<span class="badge fail">fail</span> <span class="badge finish">refused</span> 0/2 passed`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("the repeated run's page has no %s", s)
		}
	}
	if strings.Contains(out, "<img") {
		t.Error("the repeated run's page has a refusal as markup")
	}
}
