package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/report"
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
	var rs []report.Result
	for i, a := range answers {
		rs = append(rs, report.Result{Model: "m", Item: fmt.Sprint(i), Prompt: a, Answer: a, Expected: []string{a}})
	}
	e := &report.Eval{Models: []report.ModelStats{{Model: "m", Items: len(rs)}}, Results: slices.Values(rs)}
	block := dataBlock(t, write(t, report.WriteHTML, e))
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
		if rec[7] != want || rec[10] != want || rec[11] != want {
			t.Errorf("result %d reads back as %q, want %q", i, rec, want)
		}
	}
}

// TestEvalHTMLGridKeepsModelsApart: a model with results but no summary
// still gets its column, items keep the order they first came in, and an
// item only one model was asked has no cell for the others.
func TestEvalHTMLGridKeepsModelsApart(t *testing.T) {
	rs := []report.Result{
		{Model: "a", Item: "x", Prompt: "first question", Pass: true, Repeated: true},
		{Model: "a", Item: "y", Prompt: "second question", Repeated: true},
		{Model: "b", Item: "y", Repeat: 1, Prompt: "second question, again", Error: "timeout", Repeated: true},
		{Model: "b", Item: "x", Pass: true, Repeated: true},
	}
	e := &report.Eval{Models: []report.ModelStats{{Model: "a", Items: 2}}, Results: slices.Values(rs)}
	page := write(t, report.WriteHTML, e)
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
	if len(data.Results[2]) != 12 || data.Results[2][9] != "y#1" || len(data.Results[3]) != 9 {
		t.Errorf("items are not named once each: %v", data.Results)
	}
	if n := bytes.Count(page, []byte(`<td class="r none">`)); n != 2 {
		t.Errorf("%d empty cells, want 2 (y#0 of b, y#1 of a)", n)
	}
}

// syntheticEval is a run of n items on m models, with prompts and answers
// of a few hundred characters, a third of them failing and some errors.
func syntheticEval(items, models int) *report.Eval {
	e := &report.Eval{RunID: "r-bench", Dataset: "bench.jsonl"}
	for m := range models {
		e.Models = append(e.Models, report.ModelStats{Model: fmt.Sprintf("provider:model-%d", m), Items: items})
	}
	for a := range models {
		for b := a + 1; b < models; b++ {
			e.Pairs = append(e.Pairs, report.Pair{A: e.Models[a].Model, B: e.Models[b].Model})
		}
	}
	prompt := strings.Repeat("Summarize the following passage in one sentence, keeping names and numbers. ", 3)
	answer := strings.Repeat("The passage says that the committee approved the budget of 4.2 million for 2026. ", 5)
	e.Results = func(yield func(report.Result) bool) {
		for m := range models {
			for i := range items {
				r := report.Result{Model: e.Models[m].Model, Item: fmt.Sprintf("item-%05d", i), Line: i + 1,
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
//	go test ./internal/report -run XXX -bench WriteHTML
func BenchmarkWriteHTML(b *testing.B) {
	var size int
	for b.Loop() {
		var w countingWriter
		if err := report.WriteHTML(&w, syntheticEval(10000, 5)); err != nil {
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
//	go test ./internal/report -run XXX -bench EvalHTMLInChromium -benchtime 5x
func BenchmarkEvalHTMLInChromium(b *testing.B) {
	browser := chromium(b)
	for _, items := range []int{100, 10000} {
		path := filepath.Join(b.TempDir(), "report.html")
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := report.WriteHTML(f, syntheticEval(items, 5)); err != nil {
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
