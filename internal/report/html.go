package report

import (
	"bufio"
	"crypto/sha256"
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
				return fmt.Errorf("report: the repeats of item %q for %s do not come one after another. Try: order the results by model, then line and repeat, as eval.Report does", r.Item, r.Model)
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

// htmlCSS and htmlScript are the page's only style and script; the
// Content-Security-Policy allows them by hash and nothing else.
const htmlCSS = `
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--bar:#3b82f6;--bad:#cf222e;--good:#1a7f37;--warn:#9a6700;--head:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--bar:#4493f8;--bad:#f85149;--good:#3fb950;--warn:#d29922;--head:#161b22}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1600px;padding:24px}
h1{font-size:1.6em;margin:0 0 4px;word-break:break-word}
h2{font-size:1.2em;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.meta,.note{color:var(--muted);margin:0}
[hidden]{display:none!important}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{font-weight:600;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.text{white-space:pre-wrap;word-break:break-word;max-height:12em;overflow:auto;margin:0;font:inherit}
.why{color:var(--muted);font-size:.9em;white-space:pre-wrap;margin-top:2px}
.head{font-variant-numeric:tabular-nums;color:var(--muted);white-space:nowrap}
.badge{font-size:.85em;font-weight:600}
.badge.pass{color:var(--good)}
.badge.fail,.badge.error,.below,.err{color:var(--bad)}
.badge.cached{color:var(--muted);font-weight:400}
.badge.finish{color:var(--warn)}
.charts{display:flex;flex-wrap:wrap;gap:24px;margin-top:24px}
figure{margin:0}
figcaption{color:var(--muted);margin-bottom:4px}
figcaption b{color:var(--fg)}
svg.chart{max-width:100%;height:auto;font-size:12px}
svg .label,svg .value{fill:var(--fg)}
svg .tick{fill:var(--muted);font-size:11px}
svg .grid{stroke:var(--line);stroke-width:1}
svg .bar{fill:var(--bar)}
svg .bar.below{fill:var(--bad)}
svg .whisker,svg .mark{stroke:var(--fg);stroke-width:1.5}
svg .gate{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:3 2}
#controls{margin:8px 0;display:flex;gap:16px;align-items:center;flex-wrap:wrap}
#q{padding:4px 8px;min-width:260px;font:inherit}
#gridwrap{max-height:85vh;overflow:auto;border:1px solid var(--line)}
#grid thead th{position:sticky;top:0;z-index:2;background:var(--head);border-bottom:2px solid var(--line)}
#grid td.id,#grid th.id{position:sticky;left:0;z-index:1;background:var(--bg);min-width:6em;max-width:14em}
#grid thead th.id{z-index:3;background:var(--head)}
#grid td.prompt{min-width:260px;max-width:480px}
#grid td.r,#grid th.model{min-width:220px;max-width:420px}
#grid td.r.fail,#grid td.r.error{background:color-mix(in srgb,var(--bad) 7%,transparent)}
#grid td.none{color:var(--muted)}
#grid [data-sort]{cursor:pointer;user-select:none}
#grid th button{font:inherit;font-size:.8em;font-weight:400;background:none;border:0;padding:0 4px 0 0;color:var(--muted);cursor:pointer;text-decoration:underline dotted}
#grid th button[aria-pressed=true]{color:var(--fg);font-weight:600}
#sentinel{margin:8px}
#grid details summary{cursor:pointer;color:var(--muted);font-size:.9em}
#grid ol.repeats{margin:2px 0 0;padding-left:1.2em}
#grid ol.repeats li{margin-top:4px}
`

const htmlScript = `
(function () {
  "use strict";
  var blob = document.getElementById("grid-data"), table = document.getElementById("grid");
  if (!blob || !table) return;
  var data = JSON.parse(blob.textContent), models = data.models, pairs = data.pairs, items = [];
  // With repeats, a result is a model's cell of an item: its verdict,
  // mean score, mean latency, summed cost, cached and passed repeats, and
  // the repeats themselves at [8], each [repeat, state, score, latency, cost, cached, text, reasons, finish],
  // and their finish at [9]. Without, a result's finish is at [9] too.
  var repeated = data.repeated === true;
  data.results.forEach(function (r) {
    var it = items[r[0]];
    if (!it) it = items[r[0]] = {n: r[0], id: r[10], prompt: r[11], expected: r[12], res: [], text: null};
    it.res[r[1]] = r;
  });
  var body = table.tBodies[0], wrap = document.getElementById("gridwrap"), sentinel = document.getElementById("sentinel");
  var moreButton = document.getElementById("more"), q = document.getElementById("q"), filter = document.getElementById("filter");
  var count = document.getElementById("count"), chip = document.getElementById("pairchip"), chipText = document.getElementById("pairtext");
  var FILTERS = {all: 1, failed: 1, disagree: 1, errors: 1, finish: 1}, STATES = ["pass", "fail", "error"], PAGE = 100;
  var FIELDS = {result: 2, score: 3, latency: 4, cost: 5}, TEXTS = {item: "id", prompt: "prompt", expected: "expected"};
  if (repeated) FILTERS.repeats = 1;
  var everyModel = models.map(function (_, i) { return i; });
  var state = {}, view = [], shown = 0, collator = new Intl.Collator(undefined, {numeric: true});

  // The fragment holds the view, so that a link can open one:
  // #filter=disagree&pair=0&q=paris&sort=m1.latency&desc=1
  function readHash() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    var k = parseInt(p.get("pair"), 10);
    state = {filter: FILTERS.hasOwnProperty(p.get("filter")) ? p.get("filter") : "all", q: p.get("q") || "",
      pair: k >= 0 && pairs[k] ? k : -1, sort: p.get("sort") || "", desc: p.get("desc") === "1"};
    if (state.filter !== "disagree") state.pair = -1;
  }
  function writeHash() {
    var p = new URLSearchParams();
    if (state.filter !== "all") p.set("filter", state.filter);
    if (state.pair >= 0) p.set("pair", state.pair);
    if (state.q) p.set("q", state.q);
    if (state.sort) p.set("sort", state.sort);
    if (state.desc) p.set("desc", "1");
    var s = p.toString();
    try { history.replaceState(null, "", s ? "#" + s : location.pathname + location.search); } catch (e) { /* a viewer that forbids it keeps the old URL */ }
  }

  function stateOf(it, m) { var r = it.res[m]; return r ? r[2] : -1; }
  function any(it, test) {
    for (var m = 0; m < models.length; m++) { var s = stateOf(it, m); if (s >= 0 && test(s)) return true; }
    return false;
  }
  // Models disagree when one passed and another did not; a model without
  // a result for the item has no say, and errors count as failures. With
  // repeats these are the item verdicts, the ones the pairs count.
  function disagree(it, ms) {
    var passed = false, not = false;
    ms.forEach(function (m) { var s = stateOf(it, m); if (s === 0) passed = true; else if (s > 0) not = true; });
    return passed && not;
  }
  // Repeats disagree when one passed and another did not, as in the
  // report's count of them: an errored repeat did not pass.
  function repeatsDisagree(it) {
    return it.res.some(function (r) { return r && r[7] > 0 && r[7] < r[8].length; });
  }
  // With repeats, one errored repeat is enough to list the item: a
  // model's cell is an error only when all of them were, and the errors
  // are what this filter is for finding.
  function erred(it) {
    if (!repeated) return any(it, function (s) { return s === 2; });
    return it.res.some(function (r) { return r && r[8].some(function (x) { return x[1] === 2; }); });
  }
  function text(it) {
    if (it.text === null) {
      var parts = [it.id, it.prompt, it.expected];
      it.res.forEach(function (r) {
        if (r && repeated) r[8].forEach(function (x) { parts.push(x[6], x[7], x[8]); });
        else if (r) parts.push(r[7], r[8], r[9]);
      });
      it.text = parts.join("\n").toLowerCase();
    }
    return it.text;
  }
  function keep(it) {
    if (state.filter === "failed" && !any(it, function (s) { return s > 0; })) return false;
    if (state.filter === "errors" && !erred(it)) return false;
    if (state.filter === "finish" && !it.res.some(function (r) { return r && r[9]; })) return false;
    if (state.filter === "repeats" && !repeatsDisagree(it)) return false;
    if (state.filter === "disagree" && !disagree(it, state.pair >= 0 ? pairs[state.pair] : everyModel)) return false;
    return !state.q || text(it).indexOf(state.q.toLowerCase()) >= 0;
  }
  // compare orders items by a column; a model's missing result or number
  // goes last either way.
  function compare(spec, dir) {
    var m = /^m(\d+)\.(\w+)$/.exec(spec);
    if (m && +m[1] < models.length && FIELDS.hasOwnProperty(m[2])) {
      var col = +m[1], f = FIELDS[m[2]];
      return function (a, b) {
        var x = a.res[col] ? a.res[col][f] : null, y = b.res[col] ? b.res[col][f] : null;
        if (x === null || y === null) return (x === null) - (y === null) || a.n - b.n;
        return (x - y) * dir || a.n - b.n;
      };
    }
    var t = TEXTS.hasOwnProperty(spec) && TEXTS[spec];
    return t ? function (a, b) { return collator.compare(a[t], b[t]) * dir || a.n - b.n; } : null;
  }

  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content !== undefined) e.textContent = content;
    return e;
  }
  function textCell(cls, content) { var td = el("td", cls); td.appendChild(el("div", "text", content)); return td; }
  function millis(ms) { return ms === null ? "–" : ms < 999.5 ? ms.toFixed(0) + " ms" : (ms / 1000).toFixed(1) + " s"; }
  function dollars(usd) {
    if (usd === null) return "–";
    var d = 4;
    while (usd !== 0 && Math.abs(usd) * Math.pow(10, d) < 9.95 && d < 8) d++;
    return "$" + usd.toFixed(d);
  }
  function numbers(f, o) { return (f[o] === null ? "–" : f[o].toFixed(2)) + " · " + millis(f[o + 1]) + " · " + dollars(f[o + 2]); }
  function badge(head, cls, content) { head.appendChild(document.createTextNode(" ")); head.appendChild(el("span", "badge " + cls, content)); }
  function cachedBadge(head, content) { badge(head, "cached", content); }
  // fill writes a result into box: f holds its state at o, then score,
  // latency, cost, cached, text, reasons and finish; label (a repeat's)
  // goes first.
  function fill(box, f, o, label) {
    var s = STATES[f[o]], head = el("div", "head"), line = f[o] !== 2 ? numbers(f, o + 1) : "";
    if (label) line = label + (line ? " · " + line : "");
    head.appendChild(el("span", "badge " + s, s));
    if (f[o + 7]) badge(head, "finish", f[o + 7]);
    if (line) head.appendChild(document.createTextNode(" " + line));
    if (f[o + 4]) cachedBadge(head, "cached");
    box.appendChild(head);
    box.appendChild(el("div", f[o] === 2 ? "text err" : "text", f[o + 5]));
    if (f[o + 6]) box.appendChild(el("div", "why", f[o + 6]));
  }
  function repeatedCell(r) {
    var s = STATES[r[2]], td = el("td", "r " + s), head = el("div", "head"), n = r[8].length;
    head.appendChild(el("span", "badge " + s, s));
    if (r[9]) badge(head, "finish", r[9]);
    head.appendChild(document.createTextNode(" " + r[7] + "/" + n + " passed" + (r[2] !== 2 ? " · " + numbers(r, 3) : "")));
    if (r[6]) cachedBadge(head, r[6] === n ? "cached" : r[6] + "/" + n + " cached");
    td.appendChild(head);
    var details = el("details"), list = el("ol", "repeats");
    details.appendChild(el("summary", "", n + " repeats"));
    r[8].forEach(function (x) {
      var li = el("li", STATES[x[1]]);
      fill(li, x, 1, "#" + x[0]);
      list.appendChild(li);
    });
    details.appendChild(list);
    td.appendChild(details);
    return td;
  }
  function row(it) {
    var tr = el("tr", "item");
    tr.setAttribute("data-n", it.n);
    tr.appendChild(textCell("id", it.id));
    tr.appendChild(textCell("prompt", it.prompt));
    tr.appendChild(textCell("expected", it.expected));
    for (var m = 0; m < models.length; m++) {
      var r = it.res[m];
      if (!r) { tr.appendChild(el("td", "r none", "–")); continue; }
      if (repeated) { tr.appendChild(repeatedCell(r)); continue; }
      var td = el("td", "r " + STATES[r[2]]);
      fill(td, r, 2);
      tr.appendChild(td);
    }
    return tr;
  }

  // Rows are built a page at a time, as the end of the grid comes near.
  function more() {
    var end = Math.min(shown + PAGE, view.length), frag = document.createDocumentFragment();
    for (; shown < end; shown++) frag.appendChild(row(view[shown]));
    body.appendChild(frag);
    moreButton.hidden = shown >= view.length;
  }
  var observer = new IntersectionObserver(function (entries) {
    if (entries[entries.length - 1].isIntersecting && shown < view.length) {
      more();
      // Observing again reports the sentinel afresh: still in reach, another page.
      observer.unobserve(sentinel);
      observer.observe(sentinel);
    }
  }, {root: wrap, rootMargin: "600px"});

  function apply() {
    view = items.filter(keep);
    var cmp = compare(state.sort, state.desc ? -1 : 1);
    if (cmp) view.sort(cmp);
    body.textContent = "";
    shown = 0;
    wrap.scrollTop = 0;
    more();
    observer.unobserve(sentinel);
    observer.observe(sentinel);
    count.textContent = view.length + " of " + items.length + " items";
    table.setAttribute("data-view", view.length);
    filter.value = state.filter;
    if (q.value !== state.q) q.value = state.q;
    chip.hidden = state.pair < 0;
    if (state.pair >= 0) chipText.textContent = models[pairs[state.pair][0]] + " and " + models[pairs[state.pair][1]];
    // The sort comes from the URL: compared, never put into a selector.
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      var on = false;
      var controls = th.hasAttribute("data-sort") ? [th] : Array.prototype.slice.call(th.querySelectorAll("button[data-sort]"));
      controls.forEach(function (c) {
        var mine = c.getAttribute("data-sort") === state.sort;
        on = on || mine;
        if (c.tagName === "BUTTON") c.setAttribute("aria-pressed", mine);
      });
      if (on) th.setAttribute("aria-sort", state.desc ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    });
  }
  function change() { writeHash(); apply(); }

  // A sort button for each of a model's numbers, under its name.
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th.model"), function (th, m) {
    var line = el("div");
    ["result", "score", "latency", "cost"].forEach(function (f) {
      var b = el("button", "", f);
      b.type = "button";
      b.setAttribute("data-sort", "m" + m + "." + f);
      line.appendChild(b);
    });
    th.appendChild(line);
  });
  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) { th.tabIndex = 0; });
  function sortBy(target) {
    var c = target.closest("[data-sort]");
    if (!c) return;
    var spec = c.getAttribute("data-sort");
    state.desc = state.sort === spec ? !state.desc : false;
    state.sort = spec;
    change();
  }
  table.tHead.addEventListener("click", function (ev) { sortBy(ev.target); });
  table.tHead.addEventListener("keydown", function (ev) { if (ev.key === "Enter" && ev.target.tagName === "TH") sortBy(ev.target); });
  filter.addEventListener("change", function () { state.filter = filter.value; state.pair = -1; change(); });
  document.getElementById("pairclear").addEventListener("click", function () { state.pair = -1; change(); });
  var typing = 0;
  q.addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(function () { state.q = q.value.trim(); change(); }, 150);
  });
  moreButton.addEventListener("click", more);
  window.addEventListener("hashchange", function () {
    readHash();
    apply();
    document.getElementById("items").scrollIntoView();
  });

  Array.prototype.forEach.call(document.querySelectorAll(".nojs"), function (n) { n.hidden = true; });
  document.getElementById("controls").hidden = false;
  readHash();
  apply();
})();
`

// cspHash is a Content-Security-Policy source for an inline block.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

var htmlTemplates = template.Must(template.New("eval").Parse(strings.NewReplacer(
	"STYLE_HASH", cspHash(htmlCSS), "SCRIPT_HASH", cspHash(htmlScript),
).Replace(htmlSource)))

const htmlSource = `{{define "head" -}}
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src STYLE_HASH; script-src SCRIPT_HASH; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="generator" content="digest eval">
<title>{{.Title}}</title>
<style>{{.CSS}}</style>
</head>
<body>
<header>
<h1>Eval of {{.Dataset}}</h1>
<p class="meta">Run {{.RunID}}{{with .Started}} · started {{.}}{{end}} · {{len .Models}} model{{if ne (len .Models) 1}}s{{end}}</p>
</header>
<main>
<h2>Models</h2>
{{- if .Models}}
<table id="models">
<thead><tr><th>Model</th>{{if .Repeat}}<th class="num">Results</th><th class="num">Passed</th><th class="num">Item accuracy (95% CI)</th><th class="num">Result accuracy</th><th class="num">Mean score/item</th><th class="num">Repeats disagree</th>{{else}}<th class="num">Items</th><th class="num">Passed</th><th class="num">Accuracy (95% CI)</th>{{end}}<th class="num">Errors</th><th class="num">Refused</th><th class="num">Cut</th><th class="num">Unchecked</th><th class="num">Cached</th><th class="num">p50</th><th class="num">p95</th><th class="num">p99</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th>{{if .Gated}}<th>Gate</th>{{end}}</tr></thead>
<tbody>
{{- range .Models}}
<tr><td>{{.Name}}</td><td class="num">{{.Items}}</td><td class="num">{{.Passed}}</td><td class="num">{{.Accuracy}}</td>{{if $.Repeat}}<td class="num">{{.ResultAccuracy}}</td><td class="num">{{.MeanScore}}</td><td class="num">{{.Disagree}}</td>{{end}}<td class="num">{{.Errors}}</td><td class="num">{{.Refused}}</td><td class="num">{{.Cut}}</td><td class="num">{{.Unchecked}}</td><td class="num">{{.Cached}}</td><td class="num">{{.P50}}</td><td class="num">{{.P95}}</td><td class="num">{{.P99}}</td><td class="num">{{.In}}</td><td class="num">{{.Out}}</td><td class="num">{{.Cost}}</td>{{if $.Gated}}<td{{if .Below}} class="below"{{end}}>{{if .Below}}✗ {{else if .HasGate}}✓ {{end}}{{.Gate}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- with .Judge}}
<p class="meta judge">{{.}}</p>
{{- end}}
<div class="charts">
{{- range $c := .Charts}}
<figure>
<figcaption><b>{{$c.Title}}</b> · {{$c.Caption}}</figcaption>
<svg class="chart" id="{{$c.ID}}" viewBox="0 0 {{$c.Width}} {{$c.Height}}" width="{{$c.Width}}" height="{{$c.Height}}" role="img" aria-label="{{$c.Title}} per model">
{{- range $c.Ticks}}
<line class="grid" x1="{{.X}}" x2="{{.X}}" y1="{{$c.Top}}" y2="{{$c.AxisY}}"/><text class="tick" x="{{.X}}" y="{{$c.TickY}}" text-anchor="middle">{{.Label}}</text>
{{- end}}
{{- range $c.Bars}}
<g><title>{{.Tip}}</title><text class="label" x="{{$c.LabelX}}" y="{{.TextY}}" text-anchor="end">{{.Label}}</text><rect class="{{.Class}}" x="{{$c.X0}}" y="{{.Y}}" width="{{.W}}" height="{{$c.BarH}}"/>
{{- if .Whisker}}<line class="whisker" x1="{{.X1}}" x2="{{.X2}}" y1="{{.CY}}" y2="{{.CY}}"/><line class="whisker" x1="{{.X1}}" x2="{{.X1}}" y1="{{.Y1}}" y2="{{.Y2}}"/><line class="whisker" x1="{{.X2}}" x2="{{.X2}}" y1="{{.Y1}}" y2="{{.Y2}}"/>{{end}}
{{- if .Mark}}<line class="mark" x1="{{.MX}}" x2="{{.MX}}" y1="{{.Y1}}" y2="{{.Y2}}"/>{{end}}
{{- if .Gate}}<line class="gate" x1="{{.GX}}" x2="{{.GX}}" y1="{{.Y1}}" y2="{{.Y2}}"/>{{end -}}
<text class="value" x="{{$c.ValueX}}" y="{{.TextY}}">{{.Value}}</text></g>
{{- end}}
</svg>
</figure>
{{- end}}
</div>
{{- else}}
<p class="note">No models evaluated.</p>
{{- end}}
{{- if .Pairs}}
<h2>Pairs</h2>
<p class="note">Paired on the items both models were asked; p is the two-sided exact McNemar test.</p>
<ul id="pairs">
{{- range .Pairs}}
<li>{{.Text}}{{if and .Linked .Differ}} · <a href="#filter=disagree&amp;pair={{.Index}}">the {{.Differ}} item{{if ne .Differ 1}}s{{end}} where they differ</a>{{end}}</li>
{{- end}}
</ul>
{{- end}}
{{- if .Metrics}}
<h2>Metrics</h2>
<p class="note">Each metric scores its own assertions: the pass rate with its Wilson 95% interval, and the mean score.</p>
<table id="metrics">
<thead><tr><th>Metric</th><th>Model</th><th class="num">Items</th><th class="num">Passed</th><th class="num">Pass rate (95% CI)</th><th class="num">Mean score</th>{{if .MetricGated}}<th>Gate</th>{{end}}</tr></thead>
<tbody>
{{- range .Metrics}}
<tr><td>{{.Name}}</td><td>{{.Model}}</td><td class="num">{{.Items}}</td><td class="num">{{.Passed}}</td><td class="num">{{.PassRate}}</td><td class="num">{{.MeanScore}}</td>{{if $.MetricGated}}<td{{if .Below}} class="below"{{end}}>{{if .Below}}✗ {{else if .HasGate}}✓ {{end}}{{.Gate}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- if .MetricPairs}}
<p class="note">Per metric, paired on the items both models were graded on: McNemar on the passes, a paired t-test on the scores.</p>
<ul id="metricpairs">
{{- range .MetricPairs}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
{{- end}}
<h2 id="items">Items</h2>
{{- with .Repeat}}
<p class="note">Each item was asked {{.}} times. A model's cell is the item as the accuracy and the pairs count it: passed when more than half of its repeats passed (a tie fails), an error only when every repeat was; its score is the mean of the repeats, its latency the mean of the answered ones, its cost their sum.</p>
{{- end}}
<div id="controls" hidden><label>Show <select id="filter"><option value="all">all items</option><option value="failed">failures in any model</option><option value="disagree">items where models disagree</option><option value="errors">errors</option><option value="finish">refused or cut answers</option>{{if .Repeat}}<option value="repeats">items whose repeats disagree</option>{{end}}</select></label><span id="pairchip" hidden>between <b id="pairtext"></b> <button type="button" id="pairclear" title="every model">×</button></span><label>Search <input id="q" type="search" placeholder="item, prompt, answer…" autocomplete="off"></label><span id="count" class="note" aria-live="polite"></span></div>
{{end}}

{{- define "grid" -}}
<div id="gridwrap">
<table id="grid">
<thead><tr><th class="id" data-sort="item">Item</th><th data-sort="prompt">Prompt</th><th data-sort="expected">Expected</th>{{range .Models}}<th class="model">{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr class="item static"><td class="id"><div class="text">{{.ID}}</div></td><td class="prompt"><div class="text">{{.Prompt}}</div></td><td class="expected"><div class="text">{{.Expected}}</div></td>
{{- range .Cells}}{{if not .}}<td class="r none">–</td>{{else if .Repeats}}<td class="r {{.State}}"><div class="head"><span class="badge {{.State}}">{{.State}}</span>{{with .Finish}} <span class="badge finish">{{.}}</span>{{end}} {{.Head}}{{with .CachedText}} <span class="badge cached">{{.}}</span>{{end}}</div><details><summary>{{len .Repeats}} repeats</summary><ol class="repeats">{{range .Repeats}}<li class="{{.State}}">{{template "result" .}}</li>{{end}}</ol></details></td>{{else}}<td class="r {{.State}}">{{template "result" .}}</td>{{end}}{{end}}</tr>
{{- end}}
</tbody>
</table>
<p id="sentinel"><button type="button" id="more" hidden>more items</button></p>
</div>
{{- if .Left}}
<p class="note">The grid holds the first {{.Items}} items; {{.Left}} results of later items are left out: <code>--format jsonl</code> or <code>csv</code> has them all.</p>
{{- end}}
{{- if not .Rows}}
<p class="note">No results.</p>
{{- else if .More}}
<p class="note nojs">Without JavaScript, the grid shows the first {{len .Rows}} of {{.Items}} items.</p>
{{- end}}
</main>
<script>{{.Script}}</script>
</body>
</html>
{{end}}

{{- define "result" -}}
<div class="head"><span class="badge {{.State}}">{{.State}}</span>{{with .Finish}} <span class="badge finish">{{.}}</span>{{end}}{{with .Head}} {{.}}{{end}}{{if .Cached}} <span class="badge cached">cached</span>{{end}}</div><div class="text{{if eq .State "error"}} err{{end}}">{{.Text}}</div>{{with .Reasons}}<div class="why">{{.}}</div>{{end}}
{{- end}}`
