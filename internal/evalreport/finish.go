package evalreport

import (
	"fmt"
	"strings"

	"github.com/digest-cli/digest/internal/textsafe"
)

// Refused and cut answers in the reports for people: a result says which
// it was (finishLabel), a model's row counts them apart from wrong
// answers (ModelStats.Refused, Cut), and its input tokens say how many
// were read from the provider's prompt cache (tokensIn).

// finishLabel is how a report for people names a result's finish:
// "refused", "cut (raise --max-tokens)", "cut by a content filter"; ""
// for a whole answer. A finish digest has no words for shows as it is,
// one line of text.
func finishLabel(finish string) string {
	switch finish {
	case "", "stop": // "stop", the provider's word for a whole answer
		return ""
	case FinishRefusal:
		return "refused"
	case FinishLength:
		return "cut (raise --max-tokens)"
	case FinishContentFilter:
		return "cut by a content filter"
	}
	return "finish: " + textsafe.Line(finish)
}

// finishWhy is a failed result's reasons, led by its finish when it has
// one: "refused: exact: got ...".
func finishWhy(r Result) string {
	why := strings.Join(r.Reasons, "; ")
	if label := finishLabel(r.Finish); label != "" {
		if why == "" {
			return label
		}
		return label + ": " + why
	}
	return why
}

// finishCounts is the finish of a cell of repeats: "refused" when every
// repeat was, "1/3 refused" when some were, and alike for cut answers,
// joined with ", "; "" when every answer was whole.
func finishCounts(repeats []Result) string {
	var order []string
	counts := map[string]int{}
	for _, r := range repeats {
		if label := finishLabel(r.Finish); label != "" {
			if counts[label] == 0 {
				order = append(order, label)
			}
			counts[label]++
		}
	}
	parts := make([]string, len(order))
	for i, label := range order {
		parts[i] = label
		if counts[label] < len(repeats) {
			parts[i] = fmt.Sprintf("%d/%d %s", counts[label], len(repeats), label)
		}
	}
	return strings.Join(parts, ", ")
}

// tokensIn is a model's input tokens for people, with the part read from
// the provider's prompt cache when there is one: "12,345 (1,024 cached)".
func tokensIn(m ModelStats) string {
	if m.CachedInputTokens == 0 {
		return thousands(m.InputTokens)
	}
	return fmt.Sprintf("%s (%s cached)", thousands(m.InputTokens), thousands(m.CachedInputTokens))
}

// finishNote is a result's finish in a sentence, for the JUnit report:
// "refused: the model declined, and its refusal was scored as the
// answer", the CutHint for an answer cut at the output cap; "" for a whole
// answer.
func finishNote(finish string) string {
	switch label := finishLabel(finish); finish {
	case FinishRefusal:
		return "refused: the model declined, and its refusal was scored as the answer"
	case FinishLength:
		return CutHint
	case FinishContentFilter:
		return "cut by a content filter: the answer was scored as far as it went"
	default:
		return label
	}
}
