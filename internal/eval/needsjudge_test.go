package eval

import (
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
)

func TestFirstJudgeItem(t *testing.T) {
	long := `{"prompt": "` + strings.Repeat("judge me ", holdLine/8) + `", "assert": [{"type": "judge"}]}`
	for _, tt := range []struct {
		name  string
		lines []string
		limit int
		want  int
	}{
		{"none", []string{`{"prompt": "Is a judge needed?", "expected": "no"}`, `{"prompt": "2+2", "expected": "4"}`}, 0, 0},
		{"digest's judge", []string{`{"prompt": "a", "expected": "a"}`, ``, `{"prompt": "b", "assert": [{"type": "judge", "value": "polite"}]}`}, 0, 3},
		{"promptfoo's name, any case", []string{`{"prompt": "a", "assert": [{"type": "Not-LLM-Rubric", "value": "rude"}]}`}, 0, 1},
		{"model-graded-closedqa", []string{"\r", `{"prompt": "a", "assert": [{"type": "model-graded-closedqa"}]}`}, 0, 2},
		{"a bad line before it", []string{`{"prompt": "judge"`, `{"prompt": "b", "assert": [{"type": "judge"}]}`}, 0, 2},
		{"beyond --limit", []string{`{"prompt": "a", "expected": "a"}`, `{"prompt": "b", "assert": [{"type": "judge"}]}`}, 1, 0},
		{"within --limit", []string{`{"prompt": "a", "expected": "a"}`, `{"prompt": "b", "assert": [{"type": "judge"}]}`}, 2, 2},
		{"a line too long to look at", []string{long, `{"prompt": "b", "expected": "b"}`}, 0, 0},
		{"after a long line, numbered right", []string{long, `{"prompt": "b", "assert": [{"type": "judge"}]}`}, 0, 2},
		{"CRLF line ends", []string{`{"prompt": "a", "expected": "a"}` + "\r", `{"prompt": "b", "assert": [{"type": "judge"}]}` + "\r", ""}, 0, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Join(tt.lines, "\n") // the last line has no newline
			got, _, err := FirstJudgeItem(strings.NewReader(text), dataset.Options{Name: "d.jsonl"}, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("line %d, want %d", got, tt.want)
			}
		})
	}
}
