package evalreport

import (
	"bufio"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/textsafe"
)

// htmlMaxItems is how many items the page's grid holds: 10,000 items of
// five models open in a second or two, a million would not open at all.
// Results of the items after these are left out and counted.
const htmlMaxItems = 20000

// htmlStaticItems is how many items are also written as table rows, for
// readers whose viewer runs no JavaScript; the script replaces them.
const htmlStaticItems = 50

// Result states in the page's data: the order a grid sorts them in.
const (
	htmlPass = iota
	htmlFail
	htmlError
)

// WriteHTML writes the run as one self-contained page, to open from disk or
// to keep as a CI artifact: the models in a table, bar charts (inline SVG)
// of accuracy with its interval, latency and cost, the pairs, and a grid
// with a row per item (its prompt and expected answer) and a column per
// model (answer, pass or fail, score, reasons, latency, cost, and a badge
// on an answer refused or cut). The grid can be filtered (failures in any
// model, models that disagree, errors, refused or cut answers, text)
// and sorted by any column, and the URL fragment holds the view
// (report.html#filter=disagree&pair=0), so that a view can be shared.
//
// The results go in the page once, as JSON in a data block that never
// runs, and the script builds the grid's rows from it page by page as the
// reader scrolls; a run of 10,000 items and five models stays usable. The
// page loads nothing from the network, and its Content-Security-Policy
// lets nothing but its own style and script run. Everything from the run,
// model answers above all, reaches the page as text: html/template escapes
// the HTML, encoding/json escapes <, >, & and U+2028/U+2029 in the data
// block so that nothing in it can close the block, and the script only
// ever sets textContent. Control and invisible format characters show as
// text (textsafe), so that no right-to-left override reorders a row.
// Without JavaScript, the summary, charts, pairs and the first
// htmlStaticItems items still read.
//
// With --repeat, the grid still has a row per item, and a model's cell
// holds the item as the accuracy and the pairs count it (see
// htmlGrid.repeatedRecord), its repeats listed inside; the filters work on
// those per-item verdicts, so that a pair's link shows exactly the items
// its McNemar test counts.
//
// Results are read once from e.Results; the grid holds the first
// htmlMaxItems items and only the results of those are kept. With
// repeats, a model's repeats of an item must come one after another, as
// eval.Report streams them (by model, line and repeat).
func WriteHTML(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	page := htmlPage{
		Title:   "digest eval: " + textsafe.Line(e.Dataset),
		Dataset: textsafe.Line(e.Dataset),
		RunID:   textsafe.Line(e.RunID),
		Gated:   e.anyGate(),
		CSS:     template.CSS(htmlCSS),
	}
	if !e.StartedAt.IsZero() {
		page.Started = e.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if e.Judge != nil {
		page.Judge = textsafe.Line(e.Judge.String())
	}
	if e.Repeat > 1 {
		page.Repeat = e.Repeat
	}
	g := newHTMLGrid(e.Models, e.Repeat > 1)
	for _, m := range e.Models {
		p50, p95, p99 := latencies(m)
		hm := htmlModel{
			Name: textsafe.Line(m.Model), Items: m.Items, Passed: m.Passed, Accuracy: accuracyCI(m),
			Errors: m.Errors, Refused: m.Refused, Cut: m.Cut, Unchecked: m.Unchecked, Cached: m.Cached, P50: p50, P95: p95, P99: p99,
			In: tokensIn(m), Out: thousands(m.OutputTokens), Cost: dollars(m.CostUSD),
			Gate: gateText(m), HasGate: m.MinAccuracy != nil, Below: m.BelowGate,
		}
		if page.Repeat > 0 {
			// The columns the table and Markdown reports give a repeated run.
			hm.ResultAccuracy, hm.MeanScore, hm.Disagree = perItemCells(m)
		}
		page.Models = append(page.Models, hm)
	}
	for i, p := range e.Pairs {
		hp := htmlPair{Text: textsafe.Line(p.String()), Index: i, Differ: p.AOnly + p.BOnly}
		a, okA := g.modelIndex[p.A]
		b, okB := g.modelIndex[p.B]
		hp.Linked = okA && okB
		if hp.Linked {
			g.pairs = append(g.pairs, []int{a, b})
		} else {
			g.pairs = append(g.pairs, nil)
		}
		page.Pairs = append(page.Pairs, hp)
	}
	for _, r := range e.metricRows() {
		page.Metrics = append(page.Metrics, htmlMetric{Name: r.Name, Model: textsafe.Line(r.model), PassRate: passRateCI(r.MetricStats),
			MeanScore: score3(r.MeanScore), Gate: metricGateText(r.MetricStats), Items: r.Items, Passed: r.Passed, HasGate: r.Min != nil, Below: r.Below})
	}
	page.MetricGated = e.anyMetricGate()
	for _, p := range e.MetricPairs {
		page.MetricPairs = append(page.MetricPairs, textsafe.Line(p.String()))
	}
	if len(e.Models) > 0 {
		page.Charts = []htmlChart{accuracyChart(e.Models), latencyChart(e.Models), costChart(e.Models)}
	}
	if err := htmlTemplates.ExecuteTemplate(bw, "head", page); err != nil {
		return err
	}
	if err := g.writeData(bw, e.results()); err != nil {
		return err
	}
	if err := htmlTemplates.ExecuteTemplate(bw, "grid", g.static()); err != nil {
		return err
	}
	return bw.Flush()
}

type htmlPage struct {
	Title, Dataset, RunID, Started string
	CSS                            template.CSS
	Gated                          bool
	Repeat                         int    // times each item was asked, when more than once
	Judge                          string // the grading model's line: its verdicts are in no model's row
	Models                         []htmlModel
	Charts                         []htmlChart
	Pairs                          []htmlPair
	// Metrics and MetricPairs are the per-metric table and comparisons
	// of a run with named metrics; nil otherwise.
	Metrics     []htmlMetric
	MetricGated bool
	MetricPairs []string
}

// htmlMetric is a row of the per-metric table.
type htmlMetric struct {
	Name, Model, PassRate, MeanScore, Gate string
	Items, Passed                          int
	HasGate, Below                         bool
}

type htmlModel struct {
	Name                      string
	Items, Passed             int
	Accuracy                  string
	ResultAccuracy, MeanScore string // repeated runs: per result, and per item
	Disagree                  string
	Errors, Refused, Cut      int
	Unchecked, Cached         int
	P50, P95, P99             string
	In, Out, Cost, Gate       string
	HasGate, Below            bool
}

// htmlPair is a line of the pairs' list, with a link to the items where
// the two models differ when both are in the grid.
type htmlPair struct {
	Text          string
	Index, Differ int
	Linked        bool
}

// htmlGrid gathers the results into items as they stream by, model by
// model: it writes each result into the data block at once and keeps only
// the item keys, and the first htmlStaticItems items in full.
type htmlGrid struct {
	models     []string
	modelIndex map[string]int
	pairs      [][]int // model indexes of e.Pairs, nil for a pair not in the grid
	items      map[string]int
	rows       []htmlStaticRow
	left       int // results of items after the first htmlMaxItems
	buf        []byte
	// repeated makes a cell of each model's repeats of an item; written
	// holds the cells already in the data block, to tell repeats that did
	// not come together from a cell drawn twice.
	repeated bool
	written  map[[2]int]bool
	one      [1]Result // a result without repeats, as put takes them
}

func newHTMLGrid(models []ModelStats, repeated bool) *htmlGrid {
	g := &htmlGrid{modelIndex: map[string]int{}, items: map[string]int{}, repeated: repeated}
	if repeated {
		g.written = map[[2]int]bool{}
	}
	for _, m := range models {
		g.model(m.Model)
	}
	return g
}

// model is the column of a model, adding one for a model that has results
// but no summary.
func (g *htmlGrid) model(name string) int {
	if i, ok := g.modelIndex[name]; ok {
		return i
	}
	g.modelIndex[name] = len(g.models)
	g.models = append(g.models, name)
	return len(g.models) - 1
}

// writeData writes the data block:
//
//	{"results": [[item, model, state, score, latency_ms, cost_usd, cached, answer or error, reasons, finish(, id, prompt, expected)], ...],
//	 "models": [name, ...], "pairs": [[a, b] or null, ...], "left": n}
//
// With repeats, a result is a model's cell of one item, and the block
// says "repeated": true:
//
//	[item, model, state, score, latency_ms, cost_usd, cached, passed, [[repeat, state, score, latency_ms, cost_usd, cached, answer or error, reasons, finish], ...], finish(, id, prompt, expected)]
//
// A finish is the badge of an answer refused or cut ("refused", "cut
// (raise --max-tokens)", see finishLabel), "" for a whole one; a cell of
// repeats has the repeats' together ("1/3 refused", see finishCounts).
// The item's id, prompt and expected answer come with its first result
// only. Strings are shown as text already (textsafe); encoding/json
// escapes <, >, & and U+2028/U+2029, so the block cannot be closed from
// inside.
func (g *htmlGrid) writeData(w *bufio.Writer, results iter.Seq[Result]) error {
	w.WriteString(`<script type="application/json" id="grid-data">{"results":[`)
	first := true
	put := func(repeats []Result) error {
		r := repeats[0]
		// The line tells apart items that share an id, as the report's
		// counts and item verdicts do.
		id := r.ID()
		if g.repeated {
			id = r.Item
		}
		key := strconv.Itoa(r.Line) + "\x00" + id
		item, seen := g.items[key]
		if !seen {
			if len(g.items) == htmlMaxItems {
				g.left += len(repeats)
				return nil
			}
			item = len(g.items)
			g.items[key] = item
		}
		var rec []any
		if g.repeated {
			cell := [2]int{item, g.model(r.Model)}
			if g.written[cell] {
				return fmt.Errorf("evalreport: the repeats of item %q for %s do not come one after another. Try: order the results by model, then line and repeat, as eval.Report does", r.Item, r.Model)
			}
			g.written[cell] = true
			rec = g.repeatedRecord(item, repeats)
		} else {
			rec = g.record(item, r)
		}
		if !seen {
			rec = append(rec, textsafe.Line(id), textsafe.Text(r.Prompt), textsafe.Text(strings.Join(r.Expected, " | ")))
		}
		var err error
		if g.buf, err = appendJSON(g.buf[:0], rec); err != nil {
			return err
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		w.Write(g.buf)
		g.keepStatic(item, seen, repeats, rec)
		return nil
	}
	var group []Result
	for r := range results {
		if !g.repeated {
			g.one[0] = r
			if err := put(g.one[:]); err != nil {
				return err
			}
			continue
		}
		if len(group) > 0 && (r.Model != group[0].Model || r.Line != group[0].Line || r.Item != group[0].Item) {
			if err := put(group); err != nil {
				return err
			}
			group = group[:0]
		}
		group = append(group, r)
	}
	if len(group) > 0 {
		if err := put(group); err != nil {
			return err
		}
	}
	tail := struct {
		Models   []string `json:"models"`
		Pairs    [][]int  `json:"pairs"`
		Left     int      `json:"left"`
		Repeated bool     `json:"repeated,omitempty"`
	}{g.models, g.pairs, g.left, g.repeated}
	for i, m := range tail.Models {
		tail.Models[i] = textsafe.Line(m)
	}
	if tail.Pairs == nil {
		tail.Pairs = [][]int{}
	}
	b, err := json.Marshal(tail)
	if err != nil {
		return err
	}
	w.WriteString("],")
	w.Write(b[1:])
	_, err = w.WriteString("</script>\n")
	return err
}

// record is a result in the data block, without its item's text.
func (g *htmlGrid) record(item int, r Result) []any {
	// Room for the item's text too, which its first result carries.
	return appendResultFields(append(make([]any, 0, 13), item, g.model(r.Model)), r)
}

// appendResultFields appends a result's state, score, latency, cost,
// cached, answer (or error), reasons and finish, as the data block has
// them.
func appendResultFields(dst []any, r Result) []any {
	state, text := stateOf(r), r.Answer
	if state == htmlError {
		text = r.Error
	}
	cached := 0
	if r.Cached {
		cached = 1
	}
	var score, latency, cost any
	if state != htmlError {
		score, latency, cost = finite(r.Score), finite(r.LatencyMS), finite(r.CostUSD)
	}
	reasons := r.Reasons
	if line := metricsLine(r); line != "" {
		// The grid's cell shows each metric's grade above the reasons.
		reasons = append([]string{line}, reasons...)
	}
	return append(dst, state, score, latency, cost, cached, textsafe.Text(text), textsafe.Text(strings.Join(reasons, "\n")), finishLabel(r.Finish))
}

// metricsLine is a result's grades per metric, by name, for its cell:
// "accuracy ✓ 1.00 · bias ✗ 0.50"; "" when its item names no metric.
func metricsLine(r Result) string {
	parts := make([]string, 0, len(r.Metrics))
	for _, name := range slices.Sorted(maps.Keys(r.Metrics)) {
		m, mark := r.Metrics[name], "✗"
		if m.Pass {
			mark = "✓"
		}
		parts = append(parts, name+" "+mark+" "+strconv.FormatFloat(m.Score, 'f', 2, 64))
	}
	return strings.Join(parts, " · ")
}

func stateOf(r Result) int {
	switch {
	case r.Error != "":
		return htmlError
	case !r.Pass:
		return htmlFail
	}
	return htmlPass
}

// repeatedRecord is a model's cell of one item asked several times, as
// the report counts it (eval.Report): the item passes when more than half
// of its repeats passed, and a tie fails; an errored repeat counts as
// failed, as it does there. The cell is an error only when every repeat
// errored, since then there is no answer to judge at all; one errored
// repeat among answers is a failed repeat, shown in the cell's list.
// The score is the mean over the repeats, errored ones included (as the
// report's mean score per item is), the latency the mean of the answered
// repeats (one call's wait, as the unrepeated grid shows), and the cost
// the sum, what asking the item n times cost; cached counts the repeats
// answered from the cache, and the finish the ones refused or cut.
func (g *htmlGrid) repeatedRecord(item int, repeats []Result) []any {
	var passed, errored, answered, cached int
	var score, latency, cost float64
	list := make([][]any, 0, len(repeats))
	for _, r := range repeats {
		switch stateOf(r) {
		case htmlPass:
			passed++
		case htmlError:
			errored++
		}
		if r.Error == "" {
			answered++
			latency += r.LatencyMS
		}
		if r.Cached {
			cached++
		}
		score += r.Score
		cost += r.CostUSD
		list = append(list, appendResultFields(append(make([]any, 0, 9), r.Repeat), r))
	}
	state := htmlFail
	switch {
	case 2*passed > len(repeats):
		state = htmlPass
	case errored == len(repeats):
		state = htmlError
	}
	var meanScore, meanLatency, sumCost any
	if state != htmlError {
		meanScore, meanLatency, sumCost = finite(score/float64(len(repeats))), finite(latency/float64(answered)), finite(cost)
	}
	return []any{item, g.model(repeats[0].Model), state, meanScore, meanLatency, sumCost, cached, passed, list, finishCounts(repeats)}
}

// finite is x, or null for the NaN or infinity JSON has no words for.
func finite(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// appendJSON appends v as JSON, escaped for an HTML data block.
func appendJSON(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

// htmlStaticRow is an item as a table row, for readers without JavaScript.
type htmlStaticRow struct {
	ID, Prompt, Expected string
	Cells                []*htmlCell // by model; nil where the model has no result
}

type htmlCell struct {
	State, Head, Text, Reasons string
	Finish                     string // the badge of an answer refused or cut
	Cached                     bool
	// With repeats: the cell's counts, and each repeat as a cell of its own.
	CachedText string
	Repeats    []*htmlCell
}

var htmlStates = [...]string{"pass", "fail", "error"}

func (g *htmlGrid) keepStatic(item int, seen bool, repeats []Result, rec []any) {
	if item >= htmlStaticItems {
		return
	}
	if !seen {
		g.rows = append(g.rows, htmlStaticRow{ID: rec[10].(string), Prompt: rec[11].(string), Expected: rec[12].(string)})
	}
	row := &g.rows[item]
	m := rec[1].(int)
	for len(row.Cells) <= m {
		row.Cells = append(row.Cells, nil)
	}
	if !g.repeated {
		row.Cells[m] = staticCell(repeats[0], rec[2].(int), rec[7].(string), rec[8].(string), rec[9].(string))
		return
	}
	c := &htmlCell{State: htmlStates[rec[2].(int)], Head: fmt.Sprintf("%d/%d passed", rec[7].(int), len(repeats))}
	if c.State != "error" {
		score := "–"
		if x, ok := rec[3].(float64); ok {
			score = strconv.FormatFloat(x, 'f', 2, 64)
		}
		c.Head += " · " + score + " · " + orDash(rec[4], millis) + " · " + orDash(rec[5], dollars)
	}
	c.CachedText, c.Finish = cachedText(rec[6].(int), len(repeats)), rec[9].(string)
	for i, r := range repeats {
		fields := rec[8].([][]any)[i]
		rc := staticCell(r, fields[1].(int), fields[6].(string), fields[7].(string), fields[8].(string))
		head := "#" + strconv.Itoa(r.Repeat)
		if rc.Head != "" {
			head += " · " + rc.Head
		}
		rc.Head = head
		c.Repeats = append(c.Repeats, rc)
	}
	row.Cells[m] = c
}

// staticCell is one result, as a cell or a repeat within one.
func staticCell(r Result, state int, text, reasons, finish string) *htmlCell {
	c := &htmlCell{State: htmlStates[state], Cached: r.Cached, Text: text, Reasons: reasons, Finish: finish}
	if state != htmlError {
		c.Head = strconv.FormatFloat(r.Score, 'f', 2, 64) + " · " + millis(r.LatencyMS) + " · " + dollars(r.CostUSD)
	}
	return c
}

// orDash formats a number of the data block, or "–" for its null.
func orDash(v any, format func(float64) string) string {
	if x, ok := v.(float64); ok {
		return format(x)
	}
	return "–"
}

// cachedText is the badge of a cell whose repeats came from the cache:
// "cached" when all did.
func cachedText(cached, repeats int) string {
	switch {
	case cached == 0:
		return ""
	case cached == repeats:
		return "cached"
	}
	return fmt.Sprintf("%d/%d cached", cached, repeats)
}

// htmlStatic is the grid as the page's HTML writes it.
type htmlStatic struct {
	Models []string
	Rows   []htmlStaticRow
	Items  string // how many items the grid holds
	More   bool   // items beyond the static rows
	Left   string // results left out, when some were
	Script template.JS
}

func (g *htmlGrid) static() htmlStatic {
	s := htmlStatic{Rows: g.rows, Items: thousands(len(g.items)), More: len(g.items) > len(g.rows), Script: template.JS(htmlScript)}
	for _, m := range g.models {
		s.Models = append(s.Models, textsafe.Line(m))
	}
	for i := range s.Rows {
		for len(s.Rows[i].Cells) < len(g.models) {
			s.Rows[i].Cells = append(s.Rows[i].Cells, nil)
		}
	}
	if g.left > 0 {
		s.Left = thousands(g.left)
	}
	return s
}

// Chart geometry, in SVG user units (pixels at scale 1).
const (
	chartLabelW = 220 // model names, right-aligned against the bars
	chartBarW   = 360 // the scale's full width
	chartValueW = 210 // the value written after the scale
	chartRowH   = 28
	chartBarH   = 14
	chartTop    = 6
	chartAxisH  = 22
	chartLabel  = 30 // characters of a model name before it is cut
)

type htmlChart struct {
	ID, Title, Caption string
	Width, Height      int
	X0, LabelX, ValueX int
	Top, AxisY, TickY  int
	BarH               int
	Ticks              []htmlTick
	Bars               []htmlBar
}

type htmlTick struct{ X, Label string }

type htmlBar struct {
	Label, Tip, Value, Class string
	Y, TextY, CY             int
	W                        string // bar width
	Whisker                  bool   // the interval, from X1 to X2
	X1, X2                   string
	Mark                     bool // a second value on the same scale (p95)
	MX                       string
	Gate                     bool // the model's gate, at GX
	GX                       string
	Y1, Y2                   int // the row's extent, for marks
}

// newChart lays out n bars on a scale from 0 to max, ticks every quarter.
func newChart(id, title, caption string, n int, max float64, tick func(float64) string) htmlChart {
	c := htmlChart{
		ID: id, Title: title, Caption: caption,
		Width: chartLabelW + chartBarW + chartValueW, Height: chartTop + n*chartRowH + chartAxisH,
		X0: chartLabelW, LabelX: chartLabelW - 8, ValueX: chartLabelW + chartBarW + 8,
		Top: chartTop, AxisY: chartTop + n*chartRowH, TickY: chartTop + n*chartRowH + 15, BarH: chartBarH,
	}
	for i := 0; i <= 4; i++ {
		c.Ticks = append(c.Ticks, htmlTick{X: c.x(float64(i) / 4), Label: tick(max * float64(i) / 4)})
	}
	return c
}

// x is the position of a share of the scale, clamped to it.
func (c htmlChart) x(share float64) string {
	return px(float64(c.X0) + chartBarW*clamp01(share))
}

// bar is the i-th row's bar, share of the scale wide.
func (c htmlChart) bar(i int, name string, share float64) htmlBar {
	top := chartTop + i*chartRowH
	return htmlBar{
		Label: shorten(textsafe.Line(name), chartLabel), Tip: textsafe.Line(name), Class: "bar",
		Y: top + (chartRowH-chartBarH)/2, TextY: top + chartRowH/2 + 4, CY: top + chartRowH/2,
		W: px(chartBarW * clamp01(share)), Y1: top + 3, Y2: top + chartRowH - 3,
	}
}

func accuracyChart(models []ModelStats) htmlChart {
	c := newChart("chart-accuracy", "Accuracy", "Accuracy per model, whiskers at the Wilson 95% interval; a dashed line marks a gate.",
		len(models), 1, func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) })
	for i, m := range models {
		b := c.bar(i, m.Model, m.Accuracy)
		b.Value = accuracyCI(m)
		b.Whisker, b.X1, b.X2 = true, c.x(m.CILow), c.x(m.CIHigh)
		b.Tip += ": " + b.Value
		if m.MinAccuracy != nil {
			b.Gate, b.GX = true, c.x(*m.MinAccuracy)
			b.Tip += ", " + gateText(m)
		}
		if m.BelowGate {
			b.Class += " below"
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

func latencyChart(models []ModelStats) htmlChart {
	most := 0.0
	for _, m := range models {
		if m.Items > m.Errors {
			most = math.Max(most, math.Max(m.Latency.P50, m.Latency.P95))
		}
	}
	scale := niceMax(most)
	c := newChart("chart-latency", "Latency", "Median (p50) latency per model; the tick marks p95.", len(models), scale, bareZero(millis))
	for i, m := range models {
		if m.Items <= m.Errors {
			b := c.bar(i, m.Model, 0)
			b.Value = "no answers"
			b.Tip += ": " + b.Value
			c.Bars = append(c.Bars, b)
			continue
		}
		b := c.bar(i, m.Model, m.Latency.P50/scale)
		b.Mark, b.MX = true, c.x(m.Latency.P95/scale)
		b.Value = "p50 " + millis(m.Latency.P50) + " · p95 " + millis(m.Latency.P95)
		b.Tip += ": " + b.Value
		c.Bars = append(c.Bars, b)
	}
	return c
}

func costChart(models []ModelStats) htmlChart {
	most := 0.0
	for _, m := range models {
		most = math.Max(most, m.CostUSD)
	}
	scale := niceMax(most)
	c := newChart("chart-cost", "Cost", "Cost per model, in US dollars.", len(models), scale,
		bareZero(func(x float64) string { return costTick(x, scale/4) }))
	for i, m := range models {
		b := c.bar(i, m.Model, m.CostUSD/scale)
		b.Value = dollars(m.CostUSD)
		b.Tip += ": " + b.Value
		c.Bars = append(c.Bars, b)
	}
	return c
}

// niceMax is the round number, 1, 2, 4, 8 or 10 times a power of ten, at
// or above x, so that quarters of it read well; 1 when x is not positive.
func niceMax(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	unit := math.Pow(10, math.Floor(math.Log10(x)))
	for _, f := range []float64{1, 2, 4, 8, 10} {
		if f*unit >= x*(1-1e-9) {
			return f * unit
		}
	}
	return 10 * unit
}

// costTick writes a tick of the cost scale with as many decimals as its
// step needs, at least two.
func costTick(x, step float64) string {
	d := 2
	for d < 10 && math.Abs(math.Round(step*math.Pow10(d))-step*math.Pow10(d)) > 1e-6 {
		d++
	}
	return "$" + strconv.FormatFloat(x, 'f', d, 64)
}

// bareZero writes the origin of a scale as a bare "0".
func bareZero(tick func(float64) string) func(float64) string {
	return func(x float64) string {
		if x == 0 {
			return "0"
		}
		return tick(x)
	}
}

func clamp01(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return math.Min(x, 1)
}

func px(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// The page's style, script and template are files beside this one,
// html/report.css, html/report.js and html/report.tmpl, embedded as they
// are: the page carries them byte for byte.

// htmlCSS and htmlScript are the page's only style and script; the
// Content-Security-Policy allows them by hash and nothing else.
var (
	//go:embed html/report.css
	htmlCSS string
	//go:embed html/report.js
	htmlScript string
)

// htmlSource defines the page's templates: "head" (the page up to the
// grid's data block: summary, charts, pairs and the grid's controls),
// "grid" (the grid's rows for readers without JavaScript, then the script)
// and "result", a model's cell in those rows. Its STYLE_HASH and SCRIPT_HASH are
// replaced by the hashes of htmlCSS and htmlScript before it is parsed.
//
//go:embed html/report.tmpl
var htmlSource string

// cspHash is a Content-Security-Policy source for an inline block.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

var htmlTemplates = template.Must(template.New("eval").Parse(strings.NewReplacer(
	"STYLE_HASH", cspHash(htmlCSS), "SCRIPT_HASH", cspHash(htmlScript),
).Replace(htmlSource)))
