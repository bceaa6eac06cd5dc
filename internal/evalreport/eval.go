// Package evalreport writes the reports of an eval run: models side by
// side, how each pair compares and every result, as a terminal table,
// Markdown, CSV, JSON, JSONL, JUnit XML or one self-contained HTML page,
// and the list of runs `digest runs list` shows. A summarize run's release
// notes are internal/changelog's.
package evalreport

import (
	"fmt"
	"iter"
	"slices"
	"time"
)

// Eval is the report of an evaluation run: models side by side, how each
// pair compares on the same items, and every result.
type Eval struct {
	RunID     string    `json:"run_id"`
	Dataset   string    `json:"dataset"`
	StartedAt time.Time `json:"started_at"`
	// Repeat is how many times each item was asked (--repeat); with more
	// than one, items are the unit of the accuracy and of the pairs.
	Repeat int `json:"repeat"`
	// SharedIDs is set when the dataset gave one id to several lines:
	// results are told apart by line then, where a report names them.
	SharedIDs bool         `json:"-"`
	Models    []ModelStats `json:"models"`
	Pairs     []Pair       `json:"pairs"`
	// MetricPairs compare each pair of models on each named metric; nil
	// when the run has the one metric accuracy, which Pairs compare.
	MetricPairs []MetricPair `json:"metric_pairs,omitempty"`
	// Judge is what the grading model's verdicts cost: no model's row
	// holds them. Nil without a judge, and in reports of runs recorded
	// before digest kept it.
	Judge *JudgeCost `json:"judge,omitempty"`
	// Results streams every result, model by model, item by item; reports
	// that list results read it once, so a run of any size is never held
	// in memory. Nil when there are none.
	Results iter.Seq[Result] `json:"-"`
	// ResultsErr reports a failure to read Results, which a sequence
	// cannot return itself; nil when Results cannot fail.
	ResultsErr func() error `json:"-"`
	// ModelResults streams one model's results, as Results does; nil
	// when Results is to be filtered instead.
	ModelResults func(model string) iter.Seq[Result] `json:"-"`

	resultsErr error
}

// SetResultsErr records the first failure to read results, which
// ResultsErr then reports.
func (e *Eval) SetResultsErr(err error) {
	if e.resultsErr == nil {
		e.resultsErr = err
	}
	e.ResultsErr = func() error { return e.resultsErr }
}

// JudgeCost is what a grading model was paid for its verdicts.
type JudgeCost struct {
	Model    string `json:"model"`
	Verdicts int    `json:"verdicts"` // paid for in this invocation; stored ones cost nothing
	// CostUSD is nil when the judge's price is unknown.
	CostUSD *float64 `json:"cost_usd"`
}

// String is the judge's line in the table and Markdown reports.
func (j JudgeCost) String() string {
	cost := "cost unknown (no price for it)"
	if j.CostUSD != nil {
		cost = dollars(*j.CostUSD)
	}
	return fmt.Sprintf("Judge %s: %d verdicts paid for, %s", j.Model, j.Verdicts, cost)
}

// ModelStats sums up one model's results.
type ModelStats struct {
	Model  string `json:"model"`
	Items  int    `json:"items"` // results, repeats included
	Passed int    `json:"passed"`
	// Accuracy is the share of checked items passed: of results without
	// repeats (errors count as failures), of items with them (PerItem).
	Accuracy float64 `json:"accuracy"`
	// ResultAccuracy is passed / checked results, repeats included.
	ResultAccuracy float64 `json:"result_accuracy"`
	CILow          float64 `json:"ci_low"` // Wilson 95% interval of the accuracy
	CIHigh         float64 `json:"ci_high"`
	Errors         int     `json:"errors"` // results the model gave no answer for, or that could not be scored
	// Refused counts the answers in which the model declined (its refusal
	// is the answer, scored as any); Cut those stopped before their end by
	// the output cap or a content filter. Both are counted apart from
	// wrong answers, and are among Items.
	Refused int `json:"refused"`
	Cut     int `json:"cut"`
	// Unchecked counts the results of items with nothing to check (no
	// expected answer, no assertion): never sent, left out of the accuracy.
	Unchecked int `json:"unchecked"`
	// PerItem sums the items when each was asked several times.
	PerItem     *ItemStats `json:"per_item,omitempty"`
	Cached      int        `json:"cached"`
	Latency     Latency    `json:"latency_ms"`
	InputTokens int        `json:"input_tokens"`
	// CachedInputTokens is the part of InputTokens read from the
	// provider's prompt cache, priced at its cached rate.
	CachedInputTokens int     `json:"cached_input_tokens"`
	OutputTokens      int     `json:"output_tokens"`
	CostUSD           float64 `json:"cost_usd"`
	// MinAccuracy is the gate set for this model, if any; BelowGate is true
	// when the accuracy fell under it.
	MinAccuracy *float64 `json:"min_accuracy,omitempty"`
	BelowGate   bool     `json:"below_gate,omitempty"`
	// Metrics has the model's figures per named metric, in the order the
	// run first met them; nil when the run has one metric, accuracy,
	// which the fields above then hold.
	Metrics []MetricStats `json:"metrics,omitempty"`
}

// MetricStats are a model's figures on one named metric: its results'
// grades on that metric's assertions alone. A result that could not be
// graded fails every metric of its item. With --repeat every repeat
// counts: the unit is the result, not the item's majority verdict.
type MetricStats struct {
	Name   string `json:"name"`
	Items  int    `json:"items"` // results graded on the metric
	Passed int    `json:"passed"`
	// PassRate is Passed / Items, with its Wilson 95% interval.
	PassRate float64 `json:"pass_rate"`
	CILow    float64 `json:"ci_low"`
	CIHigh   float64 `json:"ci_high"`
	// MeanScore is the mean of the results' scores on the metric: the
	// weighted share of its assertions that passed, 0 to 1.
	MeanScore float64 `json:"mean_score"`
	// Min is the --min gate on the metric's pass rate for this model, if
	// any; Below is true when the pass rate fell under it.
	Min   *float64 `json:"min,omitempty"`
	Below bool     `json:"below,omitempty"`
}

// MetricPair compares two models on one metric over the items both were
// graded on: McNemar on the passes, a paired t-test on the scores.
type MetricPair struct {
	Metric string  `json:"metric"`
	A      string  `json:"a"`
	B      string  `json:"b"`
	AOnly  int     `json:"a_only"` // items A passed and B failed
	BOnly  int     `json:"b_only"`
	Both   int     `json:"both"`
	None   int     `json:"neither"`
	P      float64 `json:"p_value"` // two-sided exact McNemar on the passes
	// MeanDiff is the mean of A's score minus B's, item by item; TP the
	// two-sided p-value of the paired t-test of it against 0.
	MeanDiff float64 `json:"mean_score_diff"`
	T        float64 `json:"t"`
	TP       float64 `json:"t_p_value"`
}

// String is the pair in words, as Pair's, with the score difference.
func (p MetricPair) String() string {
	return fmt.Sprintf("%s: %s > %s on %d items, %s > %s on %d, %s; mean score %s − %s = %+.3f, paired t %s",
		p.Metric, p.A, p.B, p.AOnly, p.B, p.A, p.BOnly, formatP(p.P), p.A, p.B, p.MeanDiff, formatP(p.TP))
}

// MetricNames are the names of the run's metrics, in the order of the
// first model's; nil when the run has the one metric accuracy.
func (e *Eval) MetricNames() []string {
	var names []string
	for _, m := range e.Models {
		for _, ms := range m.Metrics {
			if !slices.Contains(names, ms.Name) {
				names = append(names, ms.Name)
			}
		}
	}
	return names
}

// ItemStats are a model's figures per item, its repeats taken together.
type ItemStats struct {
	Items  int `json:"items"`  // checked items
	Passed int `json:"passed"` // items more than half of whose repeats passed
	// MeanScore is the mean over items of each item's mean score.
	MeanScore float64 `json:"mean_score"`
	// Disagree counts the items whose repeats neither all passed nor all
	// failed; DisagreeShare is their share of Items.
	Disagree      int     `json:"disagree"`
	DisagreeShare float64 `json:"disagree_share"`
}

// Latency percentiles in milliseconds, of answered items.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

// Pair compares two models on the items both were asked: the paired
// McNemar test on the items where exactly one of them passed.
type Pair struct {
	A     string  `json:"a"`
	B     string  `json:"b"`
	AOnly int     `json:"a_only"` // items A passed and B failed
	BOnly int     `json:"b_only"`
	Both  int     `json:"both"`
	None  int     `json:"neither"`
	P     float64 `json:"p_value"` // two-sided exact McNemar
}

// String is the pair in words: "A > B on 37 items, B > A on 12, p = 0.0004",
// or "p < 0.0001" for the smallest.
func (p Pair) String() string {
	return fmt.Sprintf("%s > %s on %d items, %s > %s on %d, %s", p.A, p.B, p.AOnly, p.B, p.A, p.BOnly, formatP(p.P))
}

// formatP is a p-value with its relation: "p = 0.0004", "p < 0.0001".
func formatP(p float64) string {
	switch {
	case p < 0.0001:
		return "p < 0.0001"
	case p < 0.01:
		return fmt.Sprintf("p = %.4f", p)
	}
	return fmt.Sprintf("p = %.2f", p)
}

// Why an answer ended, as Result.Finish has it (the provider package's
// words, which evalreport does not import).
const (
	FinishRefusal       = "refusal"
	FinishLength        = "length"
	FinishContentFilter = "content_filter"
)

// CutHint is what a report says beside an answer cut at the output cap.
const CutHint = "cut at the output-token cap: raise --max-tokens"

// NothingToCheck is the error of a result whose item has no expected
// answer and no assertion: it is never sent, and counted as unchecked.
const NothingToCheck = "nothing to check: give expected or --assert"

// Result is one model's answer to one item, scored.
type Result struct {
	Model  string `json:"model"`
	Item   string `json:"item"` // the item's id
	Line   int    `json:"line"`
	Repeat int    `json:"repeat"`
	// Repeated is set when the run asked each item more than once: only
	// then does a result's id name its repeat.
	Repeated bool     `json:"-"`
	Prompt   string   `json:"prompt"` // the last user message
	Expected []string `json:"expected,omitempty"`
	Answer   string   `json:"answer"`
	Pass     bool     `json:"pass"`
	Score    float64  `json:"score"`
	Reasons  []string `json:"reasons,omitempty"` // why assertions failed
	Error    string   `json:"error,omitempty"`   // the call's failure, when there is no answer
	// Finish is why the answer ended when not by itself: FinishRefusal
	// (Answer holds the refusal), FinishLength or FinishContentFilter (the
	// answer is cut, and scored as it is); "" for a whole answer.
	Finish       string  `json:"finish,omitempty"`
	Cached       bool    `json:"cached"`
	LatencyMS    float64 `json:"latency_ms"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// Metrics are the result's grades per named metric; nil when its
	// item names none (Pass and Score are then its one metric).
	Metrics map[string]MetricScore `json:"metrics,omitempty"`
}

// MetricScore is a result's grade on one named metric.
type MetricScore struct {
	Pass  bool    `json:"pass"`
	Score float64 `json:"score"`
}
