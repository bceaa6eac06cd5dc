package offline

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/digest-cli/digest/internal/provider"
)

// judgePrefix begins the system prompt of every request digest eval's
// judge sends (internal/eval's judgeSystem and gradedSystem).
const judgePrefix = "You grade answers."

// gradedScale finds the scale in a graded judge's system prompt.
var gradedScale = regexp.MustCompile(`score the answer from (\d{1,3}) \(worst\) to (\d{1,3}) \(best\)`)

// judgeStop are words of rubrics that say nothing of what an answer must
// hold.
var judgeStop = map[string]bool{
	"answer": true, "correct": true, "expected": true, "that": true, "this": true, "with": true,
	"does": true, "should": true, "must": true, "response": true, "rubric": true, "output": true,
	"the": true, "and": true, "from": true, "into": true, "than": true, "then": true, "there": true,
	"their": true, "they": true, "what": true, "when": true, "which": true, "while": true, "about": true,
}

// maxRubricWords bounds the words of a rubric the offline judge looks for.
const maxRubricWords = 64

// grade answers a judge's request without a model: the share of the
// rubric's words (of four letters or more, or holding a digit, less a few
// common ones) that the answer holds. PASS at half or more; graded, that
// share placed on the scale and rounded. Deterministic and free, it makes
// --judge offline a baseline that exercises the whole path, not a judge
// of meaning. ok is false for a request that is not a judge's.
func grade(req provider.Request) (text string, ok bool) {
	if !strings.HasPrefix(req.System, judgePrefix) {
		return "", false
	}
	var content string
	for _, m := range req.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "Rubric:\n") {
			content = m.Content
			break
		}
	}
	if content == "" {
		return "", false
	}
	rubric, rest, _ := strings.Cut(strings.TrimPrefix(content, "Rubric:\n"), "\n\nQuestion:\n")
	_, answer, _ := strings.Cut(rest, "\n\nAnswer:\n")
	want := gradeWords(rubric, maxRubricWords)
	have := map[string]bool{}
	for _, w := range gradeWords(answer, -1) {
		have[w] = true
	}
	found := 0
	for _, w := range want {
		if have[w] {
			found++
		}
	}
	share := 1.0
	if len(want) > 0 {
		share = float64(found) / float64(len(want))
	}
	reason := fmt.Sprintf("offline judge: %d of %d rubric words are in the answer", found, len(want))
	if m := gradedScale.FindStringSubmatch(req.System); m != nil {
		lo, _ := strconv.Atoi(m[1])
		hi, _ := strconv.Atoi(m[2])
		if hi > lo {
			n := lo + int(math.Round(share*float64(hi-lo)))
			return fmt.Sprintf(`{"score": %d, "reason": %q}`, n, reason), true
		}
	}
	if share >= 0.5 {
		return "PASS\n" + reason, true
	}
	return "FAIL\n" + reason, true
}

// gradeWords are the distinct words of s, lower-cased, that the offline judge
// counts, in order of first appearance; at most limit of them when limit
// is not negative.
func gradeWords(s string, limit int) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if seen[w] || judgeStop[w] || len([]rune(w)) < 4 && !strings.ContainsAny(w, "0123456789") {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if limit >= 0 && len(out) >= limit {
			break
		}
	}
	return out
}
