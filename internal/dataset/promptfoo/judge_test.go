package promptfoo

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
)

// is-refusal reads in a promptfoo config and in a CSV __expected cell,
// needing no value there.
func TestRefusal(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts:
  - "Do {{task}}"
providers:
  - openai:gpt-4o-mini
tests:
  - vars: {task: harm}
    assert:
      - type: is-refusal
  - vars: {task: math}
    assert:
      - type: not-is-refusal
  - file://tests.csv
`,
		"tests.csv": "task,__expected\nwrite malware,is-refusal\nadd 2 and 2,not-is-refusal\n",
	})
	path := filepath.Join(dir, "promptfooconfig.yaml")
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	items := openAndRead(t, path, dataset.Options{Name: path})
	var got []string
	for _, it := range items {
		got = append(got, assertsOf(it))
	}
	if want := "refusal null|not-refusal null|refusal null|not-refusal null"; strings.Join(got, "|") != want {
		t.Errorf("promptfoo asserts %q, want %s", got, want)
	}
}

// promptfoo's metric on an assertion names the metric of the assertions
// it becomes.
func TestAssertionMetric(t *testing.T) {
	dir := writeFiles(t, map[string]string{"promptfooconfig.yaml": `prompts: ["Q: {{q}}"]
tests:
  - vars: {q: one}
    assert:
      - type: contains-all
        value: [a, b]
        metric: bias
      - type: equals
        value: one
`, "bad.yaml": `prompts: ["Q: {{q}}"]
tests:
  - vars: {q: two}
    assert:
      - type: equals
        value: two
        metric: Tone
`})
	good := filepath.Join(dir, "promptfooconfig.yaml")
	items := openAndRead(t, good, dataset.Options{Name: good})
	var got []string
	for _, a := range items[0].Asserts {
		got = append(got, dataset.MetricOf(a))
	}
	if want := "bias bias accuracy"; len(items) != 1 || strings.Join(got, " ") != want {
		t.Errorf("%d items, metrics %q, want %q", len(items), strings.Join(got, " "), want)
	}
	if _, err := Load(filepath.Join(dir, "bad.yaml")); err == nil || !strings.Contains(err.Error(), `metric "Tone" is not a lower-case identifier`) {
		t.Errorf("err = %v, want the bad metric named", err)
	}
}

// promptfoo's llm-rubric and g-eval in a config: graded with their
// thresholds, the test's threshold kept for an assertion that passes or
// fails, and options digest cannot honour refused.
func TestGradedJudges(t *testing.T) {
	dir := writeFiles(t, map[string]string{"promptfooconfig.yaml": `prompts: ["Q: {{q}}"]
tests:
  - vars: {q: one}
    threshold: 0.5
    assert:
      - type: g-eval
        value: [Is clear, Is short]
        metric: tone
      - type: llm-rubric
        value: Is polite
        threshold: 0.8
      - type: llm-rubric
        value: Is kind
      - type: contains
        value: one
`, "tests.csv": "q,__expected1,__expected2\ntwo,g-eval(0.9): is clear,llm-rubric: is kind\n",
		"csvconfig.yaml": "prompts: [\"Q: {{q}}\"]\ntests: file://tests.csv\n",
		"bad.yaml": `prompts: ["Q: {{q}}"]
tests:
  - vars: {q: three}
    assert:
      - type: llm-rubric
        value: Is polite
        rubricPrompt: Grade it
      - type: contains
        value: three
        threshold: 0.5
  - vars: {q: four}
    threshold: 0.5
    assert:
      - type: g-eval
        value: Is clear
`})
	good := filepath.Join(dir, "promptfooconfig.yaml")
	items := openAndRead(t, good, dataset.Options{Name: good})
	desc := func(it dataset.Item) string {
		var parts []string
		for _, a := range it.Asserts {
			th := "-"
			if a.Threshold != nil {
				th = fmt.Sprint(*a.Threshold)
			}
			parts = append(parts, a.Type+" "+a.Scale+" "+th+" "+dataset.MetricOf(a))
		}
		return strings.Join(parts, "|")
	}
	if want := "judge 0-10 0.7 tone|judge 0-1 0.8 accuracy|judge  0.5 accuracy|includes  - accuracy"; len(items) != 1 || desc(items[0]) != want {
		t.Errorf("got  %s\nwant %s", desc(items[0]), want)
	}
	if v, ok := items[0].Asserts[0].Value.([]any); !ok || len(v) != 2 {
		t.Errorf("g-eval's criteria %#v, want both", items[0].Asserts[0].Value)
	}
	csv := filepath.Join(dir, "csvconfig.yaml")
	items = openAndRead(t, csv, dataset.Options{Name: csv})
	if want := "judge 0-10 0.9 accuracy|judge  - accuracy"; len(items) != 1 || desc(items[0]) != want {
		t.Errorf("csv: got %s, want %s", desc(items[0]), want)
	}
	_, err := Load(filepath.Join(dir, "bad.yaml"))
	for _, part := range []string{
		`:7: assertion option "rubricPrompt" is not supported`,
		`:10: an assertion's threshold is for graded assertions (llm-rubric, g-eval), and contains passes or fails`,
		`:11: the test's threshold has no assertion to hold to`,
	} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("bad.yaml: %v, want %q in it", err, part)
		}
	}
}
