package evalreport

import (
	"bufio"
	"fmt"
	"io"

	"github.com/digest-cli/digest/internal/textsafe"
)

// EvalMarkdown writes the run for a GitHub step summary or a pull request:
// the models in a table, the pairs as a list, and the first failed results
// in a collapsed section. Text from a model, a dataset or a user shows as
// one line of literal text in its cell (see textsafe.MarkdownInline).
// The models' table counts refused and cut answers as the table report
// does, and a failed result refused or cut says so before its reasons
// ("refused: ...", "cut (raise --max-tokens): ...").
type EvalMarkdown struct{}

const (
	// mdMaxFailures is how many failed results the report lists.
	mdMaxFailures = 50
	// mdShort is how many characters of an answer or a reason a row shows.
	mdShort = 80
)

// WriteEval implements EvalReporter.
func (EvalMarkdown) WriteEval(w io.Writer, e *Eval) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "## Eval of %s\n\n", textsafe.MarkdownInline(e.Dataset))
	fmt.Fprintf(bw, "Run %s", textsafe.MarkdownInline(e.RunID))
	if !e.StartedAt.IsZero() {
		fmt.Fprintf(bw, ", started %s", e.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprintln(bw, ".")

	if len(e.Models) == 0 {
		fmt.Fprintln(bw, "\nNo models evaluated.")
		return bw.Flush()
	}
	gated, repeated := e.anyGate(), e.Repeat > 1
	if repeated {
		fmt.Fprintf(bw, "\nEach item was asked %d times: the accuracy is of items, one passing when more than half of its repeats pass; Results and Passed count every repeat.\n", e.Repeat)
		fmt.Fprint(bw, "\n| Model | Results | Passed | Item accuracy (95% CI) | Result accuracy | Mean score/item | Disagree |")
	} else {
		fmt.Fprint(bw, "\n| Model | Items | Passed | Accuracy (95% CI) |")
	}
	fmt.Fprint(bw, " Errors | Refused | Cut | Unchecked | Cached | p50 | p95 | p99 | Tokens in | Tokens out | Cost |")
	if gated {
		fmt.Fprint(bw, " Gate |")
	}
	fmt.Fprint(bw, "\n|:--|--:|--:|--:|")
	if repeated {
		fmt.Fprint(bw, "--:|--:|--:|")
	}
	fmt.Fprint(bw, "--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	if gated {
		fmt.Fprint(bw, ":-:|")
	}
	fmt.Fprintln(bw)
	for _, m := range e.Models {
		p50, p95, p99 := latencies(m)
		fmt.Fprintf(bw, "| %s | %d | %d | %s |", textsafe.MarkdownInline(m.Model), m.Items, m.Passed, textsafe.MarkdownInline(accuracyCI(m)))
		if repeated {
			results, meanScore, disagree := perItemCells(m)
			fmt.Fprintf(bw, " %s | %s | %s |", results, meanScore, disagree)
		}
		fmt.Fprintf(bw, " %d | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s |", m.Errors, m.Refused, m.Cut, m.Unchecked, m.Cached,
			p50, p95, p99, tokensIn(m), thousands(m.OutputTokens), textsafe.MarkdownInline(dollars(m.CostUSD)))
		if gated {
			fmt.Fprintf(bw, " %s |", mdGate(m))
		}
		fmt.Fprintln(bw)
	}

	if e.Judge != nil {
		fmt.Fprintf(bw, "\n%s.\n", textsafe.MarkdownInline(e.Judge.String()))
	}
	if len(e.Pairs) > 0 {
		fmt.Fprintln(bw)
		for _, p := range e.Pairs {
			fmt.Fprintf(bw, "- %s\n", textsafe.MarkdownInline(p.String()))
		}
	}
	writeMetricsMarkdown(bw, e)

	failed := e.firstFailures(mdMaxFailures)
	total := 0
	for _, m := range e.Models {
		// Items with nothing to check did not fail: they are counted apart.
		total += m.Items - m.Passed - m.Unchecked
	}
	total = max(total, len(failed))
	if len(failed) > 0 {
		summary := fmt.Sprintf("%d failed results", total)
		switch {
		case total == 1:
			summary = "1 failed result"
		case total > len(failed):
			summary = fmt.Sprintf("%d failed results (the first %d)", total, len(failed))
		}
		fmt.Fprintf(bw, "\n<details>\n<summary>%s</summary>\n\n", summary)
		fmt.Fprintln(bw, "| Model | Item | Answer | Why |")
		fmt.Fprintln(bw, "|:--|:--|:--|:--|")
		for _, r := range failed {
			// A refused or cut answer says so before its reasons.
			answer, why := r.Answer, finishWhy(r)
			if r.Error != "" {
				answer, why = "", "error: "+r.Error
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", textsafe.MarkdownInline(r.Model), textsafe.MarkdownInline(r.ID()),
				textsafe.MarkdownInline(shorten(textsafe.Line(answer), mdShort)), textsafe.MarkdownInline(shorten(textsafe.Line(why), mdShort)))
		}
		fmt.Fprintln(bw, "\n</details>")
	}
	return bw.Flush()
}

// failed tells a result that failed or ended in error from one that passed
// or had nothing to check.
func failed(r Result) bool { return !r.Pass && r.Error != NothingToCheck }

// firstFailures are up to n failed results, taken from the models in
// turn (the first of each, then the second of each...), so that one weak
// model does not fill the list alone. At most n are held per model, each
// model's results read only until its first n failures are in.
func (e *Eval) firstFailures(n int) []Result {
	perModel := make([][]Result, len(e.Models))
	if e.ModelResults != nil {
		for i, m := range e.Models {
			for r := range e.ModelResults(m.Model) {
				if len(perModel[i]) == n {
					break
				}
				if failed(r) {
					perModel[i] = append(perModel[i], r)
				}
			}
		}
	} else {
		index := make(map[string]int, len(e.Models))
		for i, m := range e.Models {
			index[m.Model] = i
		}
		for r := range e.results() {
			if i, ok := index[r.Model]; ok && failed(r) && len(perModel[i]) < n {
				perModel[i] = append(perModel[i], r)
			}
		}
	}
	var out []Result
	for k := 0; len(out) < n; k++ {
		took := false
		for _, rs := range perModel {
			if k < len(rs) && len(out) < n {
				out, took = append(out, rs[k]), true
			}
		}
		if !took {
			break
		}
	}
	return out
}

// mdGate is a model's gate cell: ✅ or ❌ and the threshold.
func mdGate(m ModelStats) string {
	switch {
	case m.MinAccuracy == nil:
		return gateText(m)
	case m.BelowGate:
		return "❌ " + gateText(m)
	}
	return "✅ " + gateText(m)
}
