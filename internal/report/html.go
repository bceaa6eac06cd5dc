package report

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/textsafe"
)

// htmlMaxRows is how many results the page's table lists; a page of a
// million rows would not open. The note under the table counts the rest
// from the models' items.
const htmlMaxRows = 20000

// WriteHTML writes the run as one self-contained page, to open from disk or
// to keep as a CI artifact: the models in a table, bar charts (inline SVG)
// of accuracy with its interval, latency and cost, the pairs, and a table
// of the results with a filter. It loads nothing from the network, and
// its Content-Security-Policy lets nothing but its own style and script
// run. Everything from the run, model answers above all, is escaped by
// html/template, and its control and invisible format characters show as
// text (textsafe), so that no right-to-left override reorders a row; the
// page reads without JavaScript, which only adds the filter and sorting.
//
// Results are read once from e.Results; the table lists the first
// htmlMaxRows of them and stops reading there.
func WriteHTML(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	page := htmlPage{
		Title:   "digest eval: " + textsafe.Line(e.Dataset),
		Dataset: textsafe.Line(e.Dataset),
		RunID:   textsafe.Line(e.RunID),
		Gated:   e.anyGate(),
		CSS:     template.CSS(htmlCSS),
		Pairs:   make([]string, len(e.Pairs)),
	}
	if !e.StartedAt.IsZero() {
		page.Started = e.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	for _, m := range e.Models {
		p50, p95, p99 := latencies(m)
		page.Models = append(page.Models, htmlModel{
			Name: textsafe.Line(m.Model), Items: m.Items, Passed: m.Passed, Accuracy: accuracyCI(m),
			Errors: m.Errors, Cached: m.Cached, P50: p50, P95: p95, P99: p99,
			In: thousands(m.InputTokens), Out: thousands(m.OutputTokens), Cost: dollars(m.CostUSD),
			Gate: gateText(m), HasGate: m.MinAccuracy != nil, Below: m.BelowGate,
		})
	}
	for i, p := range e.Pairs {
		page.Pairs[i] = textsafe.Line(p.String())
	}
	if len(e.Models) > 0 {
		page.Charts = []htmlChart{accuracyChart(e.Models), latencyChart(e.Models), costChart(e.Models)}
	}
	if err := htmlTemplates.ExecuteTemplate(bw, "head", page); err != nil {
		return err
	}
	foot := htmlFoot{Script: template.JS(htmlScript)}
	var err error
	for r := range e.results() {
		if foot.Shown == htmlMaxRows {
			foot.Cut = true
			break
		}
		if err = htmlTemplates.ExecuteTemplate(bw, "row", htmlRow(r)); err != nil {
			break
		}
		foot.Shown++
	}
	if err != nil {
		return err
	}
	if foot.Cut {
		items := 0
		for _, m := range e.Models {
			items += m.Items
		}
		foot.Listed, foot.Total = thousands(foot.Shown), thousands(max(items, foot.Shown+1))
	}
	if err := htmlTemplates.ExecuteTemplate(bw, "foot", foot); err != nil {
		return err
	}
	return bw.Flush()
}

type htmlPage struct {
	Title, Dataset, RunID, Started string
	CSS                            template.CSS
	Gated                          bool
	Models                         []htmlModel
	Charts                         []htmlChart
	Pairs                          []string
}

type htmlModel struct {
	Name                string
	Items, Passed       int
	Accuracy            string
	Errors, Cached      int
	P50, P95, P99       string
	In, Out, Cost, Gate string
	HasGate, Below      bool
}

type htmlFoot struct {
	Shown  int
	Cut    bool   // results were left out
	Listed string // Shown, when some were left out
	Total  string // how many results there are, when some were left out
	Script template.JS
}

// htmlResult is one row of the results table. Sort keys go in data-v.
type htmlResult struct {
	Model, ID, Status, Class  string
	Cached                    bool
	Score, ScoreKey           string
	Latency, LatencyKey       string
	Answer, Reasons, Expected string
	Error                     string
}

func htmlRow(r Result) htmlResult {
	row := htmlResult{
		Model: textsafe.Line(r.Model), ID: textsafe.Line(r.ID()), Status: "pass", Cached: r.Cached,
		Score: strconv.FormatFloat(r.Score, 'f', 2, 64), ScoreKey: decimal(r.Score), Latency: millis(r.LatencyMS), LatencyKey: decimal(r.LatencyMS),
		Answer: textsafe.Text(r.Answer), Reasons: textsafe.Text(strings.Join(r.Reasons, "\n")), Expected: textsafe.Text(strings.Join(r.Expected, " | ")),
	}
	switch {
	case r.Error != "":
		row.Status, row.Error = "error", textsafe.Text(r.Error)
		row.Score, row.Latency, row.LatencyKey = "–", "–", "-1"
		row.ScoreKey = "-1"
	case !r.Pass:
		row.Status = "fail"
	}
	row.Class = row.Status
	return row
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
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#59636e;--line:#d1d9e0;--bar:#3b82f6;--bad:#cf222e;--good:#1a7f37}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--line:#3d444d;--bar:#4493f8;--bad:#f85149;--good:#3fb950}}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1280px;padding:24px}
h1{font-size:1.6em;margin:0 0 4px;word-break:break-word}
h2{font-size:1.2em;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.meta,.note{color:var(--muted);margin:0}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{font-weight:600;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.text{white-space:pre-wrap;word-break:break-word;max-height:12em;overflow:auto;margin:0;font:inherit}
.why{color:var(--muted);font-size:.9em;white-space:pre-wrap;margin-top:2px}
.badge{font-size:.85em;font-weight:600}
.badge.pass{color:var(--good)}
.badge.fail,.badge.error,.below,.err{color:var(--bad)}
.badge.cached{color:var(--muted);font-weight:400}
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
#controls[hidden],tr[hidden]{display:none}
#q{padding:4px 8px;min-width:260px;font:inherit}
th.sortable{cursor:pointer;user-select:none}
`

const htmlScript = `
(function () {
  var table = document.getElementById("results");
  if (!table) return;
  var body = table.tBodies[0], q = document.getElementById("q"), failed = document.getElementById("failed");
  var count = document.getElementById("count");
  var rows = Array.prototype.slice.call(body.rows).map(function (tr) {
    return {tr: tr, text: tr.textContent.toLowerCase(), pass: tr.className === "pass"};
  });
  function filter() {
    var s = q.value.trim().toLowerCase(), only = failed.checked, n = 0;
    rows.forEach(function (r) {
      var show = !(only && r.pass) && (s === "" || r.text.indexOf(s) >= 0);
      r.tr.hidden = !show;
      if (show) n++;
    });
    count.textContent = n + " of " + rows.length + " shown";
  }
  q.addEventListener("input", filter);
  failed.addEventListener("change", filter);
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    var dir = 1;
    function sort() {
      rows.sort(function (a, b) {
        var x = a.tr.cells[i], y = b.tr.cells[i];
        var xv = x.getAttribute("data-v"), yv = y.getAttribute("data-v");
        var c = xv !== null && yv !== null ? parseFloat(xv) - parseFloat(yv) : x.textContent.localeCompare(y.textContent);
        return c * dir;
      });
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
      dir = -dir;
      rows.forEach(function (r) { body.appendChild(r.tr); });
    }
    th.className += " sortable";
    th.tabIndex = 0;
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (ev) { if (ev.key === "Enter") sort(); });
  });
  document.getElementById("controls").hidden = false;
  filter();
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
<thead><tr><th>Model</th><th class="num">Items</th><th class="num">Passed</th><th class="num">Accuracy (95% CI)</th><th class="num">Errors</th><th class="num">Cached</th><th class="num">p50</th><th class="num">p95</th><th class="num">p99</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th>{{if .Gated}}<th>Gate</th>{{end}}</tr></thead>
<tbody>
{{- range .Models}}
<tr><td>{{.Name}}</td><td class="num">{{.Items}}</td><td class="num">{{.Passed}}</td><td class="num">{{.Accuracy}}</td><td class="num">{{.Errors}}</td><td class="num">{{.Cached}}</td><td class="num">{{.P50}}</td><td class="num">{{.P95}}</td><td class="num">{{.P99}}</td><td class="num">{{.In}}</td><td class="num">{{.Out}}</td><td class="num">{{.Cost}}</td>{{if $.Gated}}<td{{if .Below}} class="below"{{end}}>{{if .Below}}✗ {{else if .HasGate}}✓ {{end}}{{.Gate}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
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
<ul>
{{- range .Pairs}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
<h2>Results</h2>
<div id="controls" hidden><label>Filter <input id="q" type="search" placeholder="model, item, answer…" autocomplete="off"></label><label><input id="failed" type="checkbox"> failures only</label><span id="count" class="note"></span></div>
<table id="results">
<thead><tr><th>Model</th><th>Item</th><th>Result</th><th class="num">Score</th><th class="num">Latency</th><th>Answer</th><th>Expected</th></tr></thead>
<tbody>
{{end}}

{{- define "row" -}}
<tr class="{{.Class}}"><td>{{.Model}}</td><td>{{.ID}}</td><td><span class="badge {{.Class}}">{{.Status}}</span>{{if .Cached}} <span class="badge cached">cached</span>{{end}}</td><td class="num" data-v="{{.ScoreKey}}">{{.Score}}</td><td class="num" data-v="{{.LatencyKey}}">{{.Latency}}</td><td>{{if .Error}}<div class="text err">{{.Error}}</div>{{else}}<div class="text">{{.Answer}}</div>{{end}}{{with .Reasons}}<div class="why">{{.}}</div>{{end}}</td><td><div class="text">{{.Expected}}</div></td></tr>
{{end}}

{{- define "foot" -}}
</tbody>
</table>
{{- if .Cut}}
<p class="note">The table lists the first {{.Listed}} of {{.Total}} results; <code>--format jsonl</code> or <code>csv</code> has them all.</p>
{{- else if not .Shown}}
<p class="note">No results.</p>
{{- end}}
</main>
<script>{{.Script}}</script>
</body>
</html>
{{end}}`
