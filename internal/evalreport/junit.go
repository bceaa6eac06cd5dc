package evalreport

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/textsafe"
)

// junitMessage is how many characters of a reason or an error the message
// attribute carries; the element's text has them whole.
const junitMessage = 200

type junitCase struct {
	XMLName   xml.Name      `xml:"testcase"`
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	// SystemOut says why a refused or cut answer ended, passed or not.
	SystemOut string `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type junitProperty struct {
	XMLName xml.Name `xml:"property"`
	Name    string   `xml:"name,attr"`
	Value   string   `xml:"value,attr"`
}

// WriteJUnit writes the run as JUnit XML for CI test reporters: a
// <testsuite> per model whose tests, failures and errors come from its
// ModelStats, and a <testcase name="ITEM#REPEAT"> per result with a
// <failure> (the reasons) when it failed or an <error> when the call did.
// A refused or cut answer passes or fails by its score as any other; its
// test case says which it was in a <system-out>, and its failure message
// starts with it ("refused: ...", "cut (raise --max-tokens): ...").
//
// Results are streamed: e.Results must yield them model by model, every
// result of a model before the next model's, and each result's model must
// be in e.Models; otherwise WriteJUnit stops with an error. A model with no
// results gets a suite with its counts and no test cases. A suite has no
// time attribute: its total is only known once its results have been
// written.
func WriteJUnit(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	if _, err := bw.WriteString(xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")

	stats := make(map[string]ModelStats, len(e.Models))
	var tests, failures, errs int
	for _, m := range e.Models {
		stats[m.Model] = m
		tests += m.Items
		failures += m.Failures()
		errs += m.Errors + m.Unchecked // an unchecked result is an error case
	}
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}, Attr: []xml.Attr{
		{Name: xml.Name{Local: "name"}, Value: "digest eval " + textsafe.Line(e.Dataset)},
		{Name: xml.Name{Local: "tests"}, Value: strconv.Itoa(tests)},
		{Name: xml.Name{Local: "failures"}, Value: strconv.Itoa(failures)},
		{Name: xml.Name{Local: "errors"}, Value: strconv.Itoa(errs)},
	}}
	if err := enc.EncodeToken(root); err != nil {
		return err
	}

	done := make(map[string]bool, len(e.Models)) // suites written or open
	open, inSuite := "", false
	var err error
	for r := range e.results() {
		if !inSuite || r.Model != open {
			if done[r.Model] {
				err = fmt.Errorf("junit: the results of model %q do not come one after another", r.Model)
				break
			}
			m, ok := stats[r.Model]
			if !ok {
				err = fmt.Errorf("junit: result for model %q, which is not among the run's models", r.Model)
				break
			}
			if inSuite {
				if err = endSuite(enc); err != nil {
					break
				}
			}
			if err = startSuite(enc, e, m); err != nil {
				break
			}
			open, inSuite, done[r.Model] = r.Model, true, true
		}
		c := junitTestcase(r)
		if e.SharedIDs {
			// CI test views key a test case by its name: two lines with one
			// id would read as one test run twice.
			c.Name += fmt.Sprintf(" (line %d)", r.Line)
		}
		if err = enc.Encode(c); err != nil {
			break
		}
	}
	if err != nil {
		return err
	}
	if inSuite {
		if err := endSuite(enc); err != nil {
			return err
		}
	}
	for _, m := range e.Models {
		if done[m.Model] {
			continue
		}
		done[m.Model] = true
		if err := startSuite(enc, e, m); err != nil {
			return err
		}
		if err := endSuite(enc); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(root.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if _, err := bw.WriteString("\n"); err != nil {
		return err
	}
	return bw.Flush()
}

func startSuite(enc *xml.Encoder, e *Eval, m ModelStats) error {
	attr := func(name, value string) xml.Attr { return xml.Attr{Name: xml.Name{Local: name}, Value: value} }
	start := xml.StartElement{Name: xml.Name{Local: "testsuite"}, Attr: []xml.Attr{
		attr("name", textsafe.Line(m.Model)),
		attr("tests", strconv.Itoa(m.Items)),
		attr("failures", strconv.Itoa(m.Failures())),
		attr("errors", strconv.Itoa(m.Errors+m.Unchecked)),
		attr("skipped", "0"),
	}}
	if !e.StartedAt.IsZero() {
		start.Attr = append(start.Attr, attr("timestamp", e.StartedAt.UTC().Format("2006-01-02T15:04:05")))
	}
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	props := xml.StartElement{Name: xml.Name{Local: "properties"}}
	if err := enc.EncodeToken(props); err != nil {
		return err
	}
	p := []junitProperty{
		{Name: "run_id", Value: textsafe.Line(e.RunID)},
		{Name: "dataset", Value: textsafe.Line(e.Dataset)},
		{Name: "accuracy", Value: decimal(m.Accuracy)},
		{Name: "ci_low", Value: decimal(m.CILow)},
		{Name: "ci_high", Value: decimal(m.CIHigh)},
		{Name: "cached", Value: strconv.Itoa(m.Cached)},
		{Name: "refused", Value: strconv.Itoa(m.Refused)},
		{Name: "cut", Value: strconv.Itoa(m.Cut)},
		{Name: "latency_p50_ms", Value: decimal(m.Latency.P50)},
		{Name: "latency_p95_ms", Value: decimal(m.Latency.P95)},
		{Name: "latency_p99_ms", Value: decimal(m.Latency.P99)},
		{Name: "input_tokens", Value: strconv.Itoa(m.InputTokens)},
		{Name: "cached_input_tokens", Value: strconv.Itoa(m.CachedInputTokens)},
		{Name: "output_tokens", Value: strconv.Itoa(m.OutputTokens)},
		{Name: "cost_usd", Value: decimal(m.CostUSD)},
	}
	if m.MinAccuracy != nil {
		p = append(p, junitProperty{Name: "min_accuracy", Value: decimal(*m.MinAccuracy)},
			junitProperty{Name: "below_gate", Value: strconv.FormatBool(m.BelowGate)})
	}
	p = append(p, metricProperties(m)...)
	for _, prop := range p {
		if err := enc.Encode(prop); err != nil {
			return err
		}
	}
	return enc.EncodeToken(props.End())
}

func endSuite(enc *xml.Encoder) error {
	return enc.EncodeToken(xml.EndElement{Name: xml.Name{Local: "testsuite"}})
}

// junitTestcase is one result as a test case: a failure carries the
// reasons, the answer and the expected answers; an error the call's error;
// a refused or cut answer its finish, in the failure's message and text
// and in <system-out>.
// CI shows these to people, on pages and in logs, so control characters
// show as text (textsafe.Text); XML could not carry most of them anyway.
func junitTestcase(r Result) junitCase {
	c := junitCase{Classname: textsafe.Line(r.Model), Name: textsafe.Line(r.ID()), Time: fmt.Sprintf("%.3f", r.LatencyMS/1000)}
	switch {
	case r.Error != "":
		c.Error = &junitProblem{Message: shorten(textsafe.Line(r.Error), junitMessage), Type: "error", Text: textsafe.Text(r.Error)}
	case !r.Pass:
		message := "failed"
		if len(r.Reasons) > 0 {
			message = strings.Join(r.Reasons, "; ")
		}
		var text strings.Builder
		if label := finishLabel(r.Finish); label != "" {
			message = label + ": " + message
			text.WriteString(finishNote(r.Finish) + "\n")
		}
		for _, reason := range r.Reasons {
			text.WriteString(reason + "\n")
		}
		fmt.Fprintf(&text, "score: %s\nanswer: %s\n", decimal(r.Score), r.Answer)
		if len(r.Expected) > 0 {
			fmt.Fprintf(&text, "expected: %s\n", strings.Join(r.Expected, " | "))
		}
		c.Failure = &junitProblem{Message: shorten(textsafe.Line(message), junitMessage), Type: "assertion", Text: textsafe.Text(text.String())}
	}
	if note := finishNote(r.Finish); note != "" {
		c.SystemOut = textsafe.Text(note + "\n")
	}
	return c
}
