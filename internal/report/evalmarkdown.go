package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// EvalMarkdown writes the run for a GitHub step summary or a pull request:
// the models in a table, the pairs as a list, and the first failed results
// in a collapsed section.
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
	fmt.Fprintf(bw, "## Eval of %s\n\n", mdText(e.Dataset))
	fmt.Fprintf(bw, "Run %s", mdText(e.RunID))
	if !e.StartedAt.IsZero() {
		fmt.Fprintf(bw, ", started %s", e.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	fmt.Fprintln(bw, ".")

	if len(e.Models) == 0 {
		fmt.Fprintln(bw, "\nNo models evaluated.")
		return bw.Flush()
	}
	gated := e.anyGate()
	fmt.Fprint(bw, "\n| Model | Items | Passed | Accuracy (95% CI) | Errors | Cached | p50 | p95 | p99 | Tokens in | Tokens out | Cost |")
	if gated {
		fmt.Fprint(bw, " Gate |")
	}
	fmt.Fprint(bw, "\n|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	if gated {
		fmt.Fprint(bw, ":-:|")
	}
	fmt.Fprintln(bw)
	for _, m := range e.Models {
		p50, p95, p99 := latencies(m)
		fmt.Fprintf(bw, "| %s | %d | %d | %s | %d | %d | %s | %s | %s | %s | %s | %s |",
			mdText(m.Model), m.Items, m.Passed, mdText(accuracyCI(m)), m.Errors, m.Cached,
			p50, p95, p99, thousands(m.InputTokens), thousands(m.OutputTokens), mdText(dollars(m.CostUSD)))
		if gated {
			fmt.Fprintf(bw, " %s |", mdGate(m))
		}
		fmt.Fprintln(bw)
	}

	if len(e.Pairs) > 0 {
		fmt.Fprintln(bw)
		for _, p := range e.Pairs {
			fmt.Fprintf(bw, "- %s\n", mdText(p.String()))
		}
	}

	// Results stream by until the first failures are in; the models' counts
	// tell how many there are in all.
	var failed []Result
	for r := range e.results() {
		if len(failed) == mdMaxFailures {
			break
		}
		if !r.Pass {
			failed = append(failed, r)
		}
	}
	total := 0
	for _, m := range e.Models {
		total += m.Items - m.Passed
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
			answer, why := r.Answer, strings.Join(r.Reasons, "; ")
			if r.Error != "" {
				answer, why = "", "error: "+r.Error
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", mdText(r.Model), mdText(r.ID()),
				mdText(shorten(oneLine(answer), mdShort)), mdText(shorten(oneLine(why), mdShort)))
		}
		fmt.Fprintln(bw, "\n</details>")
	}
	return bw.Flush()
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

// mdText makes text from a model, a dataset or a user safe inside a
// Markdown line or table cell: one line, HTML's special characters as
// entities, Markdown's punctuation and the cell separator backslash-escaped.
func mdText(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '(', ')', '|', '~', '!', '#', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
