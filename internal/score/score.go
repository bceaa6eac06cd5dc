// Package score grades a model's answer to a dataset item against the
// item's assertions: exact, includes, icontains, starts-with, regex,
// numeric, choice, json, json-schema, judge and refusal, each with a not-
// form, plus the promptfoo names for them.
//
// Which assertions apply to an item:
//
//  1. the item's own Asserts, if it has any;
//  2. else Scorer.Default (--assert TYPE) applied to the item's Expected;
//  3. else by the item's format: native with Expected → exact, openai-evals
//     → starts-with (openai/evals Match), inspect → includes, or choice for
//     an item with Choices, promptfoo → an error ("no assertion");
//
// and an item left with nothing to compare against (no Expected for a type
// that needs one) fails with the reason "nothing to check: ...".
//
// A judge with a scale (dataset.Assertion.Scale) is graded: it adds its
// score normalised to 0-1 rather than 1 or 0, and passes at its own
// threshold or, without one, at the scale's midpoint.
package score

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/digest-cli/digest/internal/dataset"
)

// DefaultTolerance is the numeric tolerance when Scorer.Tolerance is 0.
const DefaultTolerance = 1e-6

// GivenTolerance is Scorer.Tolerance for a --tolerance flag: a tolerance
// given as 0 means exact equality (the scorer's -1), not its default.
func GivenTolerance(v float64, given bool) float64 {
	if given && v == 0 {
		return -1
	}
	return v
}

// Scorer scores answers. The zero value is ready to use: format defaults,
// tolerance 1e-6, and no judge. A Scorer is safe for concurrent use.
type Scorer struct {
	// Default is the assertion type applied to every item's Expected
	// answers when the item has no assert list of its own (--assert TYPE);
	// "" uses the defaults of each dataset format.
	Default string
	// DefaultMetric is the metric Default's assertion counts under
	// (--assert TYPE@METRIC); "" means dataset.DefaultMetric.
	DefaultMetric string
	// Tolerance is how far a numeric answer may be from the expected
	// number: they match when |got-want| <= Tolerance, or when
	// |got-want| <= Tolerance*max(|got|, |want|), so that it is an absolute
	// tolerance near zero and a relative one for big numbers. 0 means
	// DefaultTolerance (1e-6); a negative Tolerance demands exact equality.
	Tolerance float64
	// Judge grades judge assertions; nil makes them an error.
	Judge Judge
}

// Result is an answer's grade.
type Result struct {
	Pass bool
	// Score is the weighted share of the assertions that passed, 0 to 1,
	// a graded judge counting for its normalised score.
	Score float64
	// Reasons has one line per failed assertion, such as
	// `exact: got "71", want "72"`, with long text cut to about 80
	// characters.
	Reasons []string
	// Metrics has one entry per metric the item's assertions name, in the
	// order each first appears; an item whose assertions name none has
	// the one metric dataset.DefaultMetric, equal to Pass and Score. It is
	// nil for an item with nothing to check.
	Metrics []MetricResult
}

// MetricResult is an item's grade on one metric: its assertions alone,
// scored as Result is over all of them.
type MetricResult struct {
	Name string
	// Pass is true when every assertion of the metric passed, or, when any
	// of them has a threshold, when Score meets the lowest one (a graded
	// judge's threshold is its own pass mark, not the metric's).
	Pass bool
	// Score is the weighted share of the metric's assertions that passed,
	// a graded judge counting for its normalised score.
	Score float64
}

// Metric returns the result of the named metric, if the item has it.
func (r Result) Metric(name string) (MetricResult, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return MetricResult{}, false
}

// metricTally sums one metric's assertions while an answer is scored.
type metricTally struct {
	name          string
	total, passed float64
	all           bool
	threshold     float64 // NaN when none is given
}

func (t *metricTally) result() MetricResult {
	m := MetricResult{Name: t.name, Score: t.passed / t.total}
	if t.passed == t.total {
		m.Score = 1
	}
	if math.IsNaN(t.threshold) {
		m.Pass = t.all
	} else {
		m.Pass = m.Score >= t.threshold-1e-9
	}
	return m
}

// NothingToCheck is the reason of an item that has no expected answer and
// no assertion: it fails, since nothing shows the answer is right.
const NothingToCheck = "nothing to check: the item has no expected answer or assertion"

// ErrInvalid is matched (errors.Is) by the errors of an item whose
// assertions cannot be checked: an unknown type, a bad regular expression
// or schema, a missing value. They are dataset mistakes that no retry will
// fix; a judge's own failure is not one.
var ErrInvalid = errors.New("invalid assertion")

// ErrNoJudge is the error of a judge assertion scored without a judge:
// no rerun can pass it, only a run given --judge.
var ErrNoJudge = errors.New("judge assertion needs --judge MODEL")

// Error is a failure to score an item: an invalid assertion, or a judge
// that could not grade. It names the item, its line and the assertion.
type Error struct {
	Item string // the item's id
	Line int    // its line in the dataset; 0 when unknown
	// Assert is the assertion's 1-based position in the item's assert
	// list; 0 for a default assertion (--assert or the format's).
	Assert int
	Type   string // the assertion's type as written; "" when none applies
	// Invalid is true for a dataset mistake (errors.Is(err, ErrInvalid)),
	// false for a judge failure.
	Invalid bool
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "item %q", e.Item)
	if e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	b.WriteString(": ")
	if e.Assert > 0 {
		fmt.Fprintf(&b, "assert #%d ", e.Assert)
	}
	if e.Type != "" {
		b.WriteString(e.Type)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return lineBreaks.Replace(b.String())
}

// lineBreaks keeps a message on one line.
var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

func (e *Error) Unwrap() error { return e.Err }

// Is makes an invalid assertion's error match ErrInvalid.
func (e *Error) Is(target error) bool { return e.Invalid && target == ErrInvalid }

// CheckType reports whether name is an assertion type Score knows, with or
// without a not- prefix, to check --assert before a run starts.
func CheckType(name string) error {
	_, err := parseType(name)
	return err
}

// Score grades answer, the model's whole reply to it: ScoreAnswer with
// an answer that ended of itself.
func (s *Scorer) Score(ctx context.Context, it dataset.Item, answer string) (Result, error) {
	return s.ScoreAnswer(ctx, it, Answer{Text: answer})
}

// ScoreAnswer grades ans, the model's reply to it, with why it ended. The
// refusal assertion passes on a refusal the provider reported as well as
// on one in the text; every other assertion scores the text as it is, a
// refusal's words and a cut answer's part alike. The error is an *Error,
// for an invalid assertion or a judge failure only: an answer that fails
// its assertions is a Result with Pass false and the reasons.
func (s *Scorer) ScoreAnswer(ctx context.Context, it dataset.Item, ans Answer) (Result, error) {
	asserts, fromItem, err := s.assertions(it)
	if err != nil {
		return Result{}, err
	}
	if asserts == nil {
		return Result{Pass: false, Score: 0, Reasons: []string{NothingToCheck}}, nil
	}
	checks := make([]*check, 0, len(asserts))
	threshold := math.NaN()
	var tallies []*metricTally
	for i, a := range asserts {
		pos := 0
		if fromItem {
			pos = i + 1
		}
		c, err := s.prepare(it, a)
		if err != nil {
			return Result{}, &Error{Item: it.ID, Line: it.Line, Assert: pos, Type: typeLabel(a.Type), Invalid: true, Err: err}
		}
		c.pos = pos
		checks = append(checks, c)
		// A graded judge's threshold is its own pass mark, not the item's.
		if c.scale != nil {
			a.Threshold = nil
		}
		if a.Threshold != nil && !(*a.Threshold <= threshold) {
			threshold = *a.Threshold
		}
		name := dataset.MetricOf(a)
		i := slices.IndexFunc(tallies, func(t *metricTally) bool { return t.name == name })
		if i < 0 {
			i = len(tallies)
			tallies = append(tallies, &metricTally{name: name, all: true, threshold: math.NaN()})
		}
		c.metric = tallies[i]
		if t := tallies[i]; a.Threshold != nil && !(*a.Threshold <= t.threshold) {
			t.threshold = *a.Threshold
		}
	}
	// Weights count relative to the largest, so that no sum overflows.
	var maxWeight float64
	for _, c := range checks {
		maxWeight = max(maxWeight, c.weight)
	}
	for _, c := range checks {
		c.weight /= maxWeight
	}
	// Every assertion is valid: run the cheap ones, then the judge calls.
	var total, passed float64
	var reasons []string
	all := true
	for _, judged := range []bool{false, true} {
		for _, c := range checks {
			if (c.kind == kindJudge) != judged {
				continue
			}
			share, ok, why, err := c.run(ctx, s, it, ans)
			if err != nil {
				return Result{}, &Error{Item: it.ID, Line: it.Line, Assert: c.pos, Type: c.name, Err: err}
			}
			total += c.weight
			c.metric.total += c.weight
			passed += c.weight * share
			c.metric.passed += c.weight * share
			if !ok {
				all = false
				c.metric.all = false
				reasons = append(reasons, lineBreaks.Replace(why))
			}
		}
	}
	res := Result{Score: passed / total, Reasons: reasons}
	if passed == total {
		res.Score = 1 // not 0.9999999999999999 from rounding
	}
	if math.IsNaN(threshold) {
		res.Pass = all
	} else {
		// A little slack so that 2 of 3 equal weights meet a threshold
		// written as 0.6666666666666666.
		res.Pass = res.Score >= threshold-1e-9
	}
	for _, t := range tallies {
		res.Metrics = append(res.Metrics, t.result())
	}
	return res, nil
}

// Checkable tells, without an answer, whether it can be scored: false
// with no error when there is nothing to check (no expected answer, no
// assertion), false with an *Error (Invalid) when an assertion cannot be
// checked (no value and no expected answer, a bad pattern). Such an item
// is not worth sending: its answer could not be graded.
func (s *Scorer) Checkable(it dataset.Item) (bool, error) {
	if s.Judge == nil {
		// Whether there is a grading model is the command's to check
		// (before anything is read); the run gives its own.
		probe := *s
		probe.Judge = func(context.Context, JudgeRequest) (Verdict, error) {
			return Verdict{}, errors.New("not asked: a check of the assertions only")
		}
		s = &probe
	}
	asserts, fromItem, err := s.assertions(it)
	if err != nil || asserts == nil {
		return false, err
	}
	for i, a := range asserts {
		if _, err := s.prepare(it, a); err != nil {
			pos := 0
			if fromItem {
				pos = i + 1
			}
			return false, &Error{Item: it.ID, Line: it.Line, Assert: pos, Type: typeLabel(a.Type), Invalid: true, Err: err}
		}
	}
	return true, nil
}

// MetricNames are the metrics it is scored on, in the order its
// assertions first name them: what a result that could not be graded
// fails. An item with nothing to check, or whose assertions cannot be
// known, has none.
func (s *Scorer) MetricNames(it dataset.Item) []string {
	asserts, _, err := s.assertions(it)
	if err != nil {
		return nil
	}
	var names []string
	for _, a := range asserts {
		if n := dataset.MetricOf(a); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// assertions are the assertions that apply to it: nil with no error when
// there is nothing to check; fromItem when they are the item's own.
func (s *Scorer) assertions(it dataset.Item) (asserts []dataset.Assertion, fromItem bool, err error) {
	if len(it.Asserts) > 0 {
		return it.Asserts, true, nil
	}
	if s.Default != "" {
		t, err := parseType(s.Default)
		if err != nil {
			return nil, false, &Error{Item: it.ID, Line: it.Line, Type: typeLabel(s.Default), Invalid: true, Err: fmt.Errorf("--assert: %w", err)}
		}
		if t.needsExpected() && len(nonEmpty(it.Expected)) == 0 {
			return nil, false, nil
		}
		a := dataset.Assertion{Type: s.Default, Metric: s.DefaultMetric}
		if err := dataset.GradeDefaults(s.Default, &a); err != nil {
			return nil, false, &Error{Item: it.ID, Line: it.Line, Type: typeLabel(s.Default), Invalid: true, Err: fmt.Errorf("--assert: %w", err)}
		}
		return []dataset.Assertion{a}, false, nil
	}
	if it.Format == dataset.Promptfoo {
		return nil, false, &Error{Item: it.ID, Line: it.Line, Invalid: true,
			Err: errors.New(`no assertion: a promptfoo test case needs an "assert" list (or use --assert TYPE)`)}
	}
	if len(nonEmpty(it.Expected)) == 0 {
		return nil, false, nil
	}
	typ := "exact"
	switch it.Format {
	case dataset.OpenAIEvals:
		typ = "starts-with"
	case dataset.Inspect:
		typ = "includes"
		if len(it.Choices) > 0 {
			typ = "choice"
		}
	}
	return []dataset.Assertion{{Type: typ}}, false, nil
}

// question is what the item asks: its last user message.
func question(it dataset.Item) string {
	for i := len(it.Messages) - 1; i >= 0; i-- {
		if it.Messages[i].Role == "user" {
			return it.Messages[i].Content
		}
	}
	if n := len(it.Messages); n > 0 {
		return it.Messages[n-1].Content
	}
	return ""
}
