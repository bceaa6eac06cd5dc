package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dryRunRows runs `digest eval ARGS --dry-run -f json` and gives its rows
// as "MODEL: REQUESTS", the judge's marked.
func dryRunRows(t *testing.T, h *harness, args ...string) string {
	t.Helper()
	res := h.run(context.Background(), append(args, "--dry-run", "-f", "json")...)
	var est struct {
		Models []struct {
			Model    string
			Judge    bool
			Requests int
		}
	}
	if err := json.Unmarshal([]byte(res.out), &est); err != nil || res.code != 0 {
		t.Fatalf("%v: exit %d: %v %s", args, res.code, err, res.errOut)
	}
	var rows []string
	for _, m := range est.Models {
		rows = append(rows, fmt.Sprintf("%s%s: %d", map[bool]string{true: "judge "}[m.Judge], m.Model, m.Requests))
	}
	return strings.Join(rows, ", ")
}

// A promptfoo config is a dataset eval takes as it is: its 12 items go to
// the providers it names, unless --models names others, and its
// defaultTest.options.provider grades the llm-rubric assertions. A CSV
// test file runs on its own with --prompt, and asks for it without. How
// the items score is internal/eval's TestEvalPromptfooConfig.
func TestEvalPromptfooConfigNamesTheModelsAndTheGrader(t *testing.T) {
	h := newHarness(t)
	const dir = "../testdata/eval/promptfoo/"
	graded := filepath.Join(t.TempDir(), "promptfooconfig.yaml")
	os.WriteFile(graded, []byte(`prompts: ["Translate: {{text}}"]
providers: [openai:chat:oracle]
defaultTest: {options: {provider: "openai:chat:grader"}}
tests: [{vars: {text: Bonjour}, assert: [{type: llm-rubric, value: a greeting in English}]}]
`), 0o644)
	for args, want := range map[string]string{
		dir + "promptfooconfig.yaml":                       "openai:gpt-4o-mini: 12, anthropic:claude-3-5-haiku-latest: 12",
		dir + "promptfooconfig.yaml --models openai:other": "openai:other: 12",
		graded: "openai:oracle: 1, judge openai:grader: 1",
		dir + "tests.csv --prompt " + dir + "prompt.txt --models openai:m": "openai:m: 2",
	} {
		if got := dryRunRows(t, h, append([]string{"eval"}, strings.Fields(args)...)...); got != want {
			t.Errorf("eval %s: %s, want %s", args, got, want)
		}
	}
	res := h.run(context.Background(), "eval", dir+"tests.csv", "--models", "openai:m", "-f", "json")
	oneLineError(t, res, 2, "--prompt")
}

// A config with parts digest cannot run is refused whole, as a usage
// error, before anything is sent. Each part's message is
// internal/dataset/promptfoo's TestRefusesWhatDoesNotMap.
func TestEvalPromptfooRefusedBeforeSending(t *testing.T) {
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	cfg := filepath.Join(t.TempDir(), "promptfooconfig.yaml")
	os.WriteFile(cfg, []byte("prompts: ['Hi {{n}}']\nproviders: [openai:gpt-4o-mini]\ntests:\n  - vars: {n: a}\n    assert: [{type: javascript, value: 'output.length > 1'}]\n"), 0o644)
	res := h.run(context.Background(), "eval", cfg, "-f", "json")
	oneLineError(t, res, 2, cfg+`:5: assertion "javascript" is not one digest scores`)
	if n := h.calls.Load(); n != 0 {
		t.Errorf("%d requests sent for a refused config", n)
	}
}

// A config's llm-rubric test with no grader anywhere is refused before
// anything is sent, naming the item: its "line" is no line of the file.
func TestEvalPromptfooRubricWithoutGraderNamesTheItem(t *testing.T) {
	h := newHarness(t)
	cfg := filepath.Join(t.TempDir(), "promptfooconfig.yaml")
	os.WriteFile(cfg, []byte(`prompts: ["Translate: {{text}}"]
tests:
  - vars: {text: Hallo}
    assert: [{type: equals, value: Hello}]
  - vars: {text: Bonjour}
    assert: [{type: llm-rubric, value: a greeting in English}]
`), 0o644)
	res := h.run(context.Background(), "eval", cfg, "--models", "offline")
	if res.code != 2 || !strings.Contains(res.errOut, cfg+": item ") || strings.Contains(res.errOut, cfg+":2 ") || h.calls.Load() != 0 {
		t.Fatalf("exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
}
