package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

const promptfooConfig = "../testdata/eval/promptfoo/promptfooconfig.yaml"

// promptfooHarness points both providers of the fixture config at one
// fake server, whose answers are "fake answer: " and the prompt.
func promptfooHarness(t *testing.T) (*harness, *fakeprovider.Server) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["ANTHROPIC_API_KEY"] = "k", "k"
	h.env["OPENAI_BASE_URL"], h.env["ANTHROPIC_BASE_URL"] = srv.OpenAIBaseURL(), srv.AnthropicBaseURL()
	return h, srv
}

// The fixture config (inline tests, a YAML and a CSV test file, two
// prompts, two providers) runs unchanged, against the providers it names,
// and scores as promptfoo would. Each answer is "fake answer: PROMPT", so
// the expected verdicts follow from promptfoo's semantics by hand.
func TestEvalPromptfooConfig(t *testing.T) {
	h, srv := promptfooHarness(t)
	// --rpm and --tpm only pace: the real models' built-in limits would slow the test.
	res := h.run(context.Background(), "eval", promptfooConfig, "-f", "jsonl", "--rpm", "60000", "--tpm", "100000000")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	const p1, p2 = " [Say hello to {{name}} in {{language}}.]", " [prompt.txt]"
	want := map[string]bool{
		"inline greeting" + p1:     false, // equals "Hello Ada" fails
		"inline greeting" + p2:     false,
		"list var (name=Bob)" + p1: false, // not-contains Bob fails
		"list var (name=Bob)" + p2: false,
		"list var (name=Cy)" + p1:  true,
		"list var (name=Cy)" + p2:  true,
		"tests.yaml:9" + p1:        false, // contains-all [Dee, German]: no German
		"tests.yaml:9" + p2:        false,
		"csv one" + p1:             false, // is-json fails
		"csv one" + p2:             false,
		"tests.csv:3" + p1:         true,  // icontains SAY HELLO, contains-any Zed or Fay
		"tests.csv:3" + p2:         false, // a poem prompt: no "say hello"
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(res.out), "\n") {
		var r struct {
			Model, Item, Error string
			Pass               bool
			Reasons            []string
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		pass, ok := want[r.Item]
		if !ok || r.Error != "" {
			t.Errorf("unexpected result %s", l)
			continue
		}
		if r.Pass != pass {
			t.Errorf("%s on %s: pass %v, want %v (%v)", r.Model, r.Item, r.Pass, pass, r.Reasons)
		}
		seen[r.Model]++
	}
	if seen["openai:gpt-4o-mini"] != 12 || seen["anthropic:claude-3-5-haiku-latest"] != 12 || len(seen) != 2 {
		t.Errorf("results per model %v, want 12 for each of the config's two providers", seen)
	}
	var prompts []string
	for _, r := range srv.Requests() {
		if r.Model == "gpt-4o-mini" {
			prompts = append(prompts, r.Messages[len(r.Messages)-1].Content)
		}
	}
	slices.Sort(prompts)
	for _, p := range []string{"Say hello to Ada in English.", "Say hello to Fay in .", "Write a short poem about Dee, in French."} {
		if _, found := slices.BinarySearch(prompts, p); !found {
			t.Errorf("no request asked %q; sent %q", p, prompts)
		}
	}
	if len(prompts) != 12 {
		t.Errorf("%d requests to gpt-4o-mini, want 12", len(prompts))
	}
}

// --models on the command line wins over the config's providers.
func TestEvalPromptfooModelsFlagWins(t *testing.T) {
	h, srv := promptfooHarness(t)
	res := h.run(context.Background(), "eval", promptfooConfig, "--models", "openai:other", "-f", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	for _, r := range srv.Requests() {
		if r.Model != "other" {
			t.Fatalf("a request for %s, with --models openai:other", r.Model)
		}
	}
	if n := srv.Stats().Requests; n != 12 {
		t.Errorf("%d requests, want 12", n)
	}
}

// A config with parts digest cannot run is refused whole, as a usage
// error, before anything is sent.
func TestEvalPromptfooRefusedBeforeSending(t *testing.T) {
	h, srv := promptfooHarness(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "promptfooconfig.yaml")
	os.WriteFile(cfg, []byte("prompts: ['Hi {{n}}']\nproviders: [openai:gpt-4o-mini]\ntests:\n  - vars: {n: a}\n    assert: [{type: javascript, value: 'output.length > 1'}]\n"), 0o644)
	res := h.run(context.Background(), "eval", cfg, "-f", "json")
	if res.code != 2 || !strings.Contains(res.errOut, cfg+`:5: assertion "javascript" is not one digest scores`) || !strings.Contains(res.errOut, "Try: ") {
		t.Errorf("exit %d: %s", res.code, res.errOut)
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("%d requests sent for a refused config", n)
	}
}

// A CSV test file runs on its own with --prompt, and asks for it without.
func TestEvalPromptfooTestFile(t *testing.T) {
	h, _ := promptfooHarness(t)
	tests := "../testdata/eval/promptfoo/tests.csv"
	res := h.run(context.Background(), "eval", tests, "--models", "openai:m", "-f", "json")
	if res.code != 2 || !strings.Contains(res.errOut, "--prompt") {
		t.Errorf("without --prompt: exit %d: %s", res.code, res.errOut)
	}
	res = h.run(context.Background(), "eval", tests, "--prompt", "../testdata/eval/promptfoo/prompt.txt", "--models", "openai:m", "-f", "json")
	var out evalJSON
	if err := json.Unmarshal([]byte(res.out), &out); err != nil || res.code != 0 {
		t.Fatalf("exit %d: %v %s", res.code, err, res.errOut)
	}
	// "csv one" fails is-json; the other fails icontains "SAY HELLO" on the poem prompt.
	if m := out.Models[0]; m.Items != 2 || m.Passed != 0 {
		t.Errorf("%d items, %d passed; want 2 and 0", m.Items, m.Passed)
	}
}

// defaultTest.options.provider grades the llm-rubric assertions, as
// promptfoo's grader; without it, --judge would be needed.
func TestEvalPromptfooGrader(t *testing.T) {
	srv := oracleServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["OPENAI_BASE_URL"] = "k", srv.OpenAIBaseURL()
	cfg := filepath.Join(t.TempDir(), "promptfooconfig.yaml")
	os.WriteFile(cfg, []byte(`prompts: ["Translate: {{text}}"]
providers: [openai:chat:oracle]
defaultTest:
  options:
    provider: openai:chat:grader
tests:
  - vars: {text: Bonjour}
    assert: [{type: llm-rubric, value: a greeting in English}]
`), 0o644)
	res := h.run(context.Background(), "eval", cfg, "-f", "json")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	graded := false
	for _, r := range srv.Requests() {
		graded = graded || r.Model == "grader"
	}
	if !graded {
		t.Error("the llm-rubric assertion never reached the config's grader")
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
	if res.code != 2 || !strings.Contains(res.errOut, cfg+": item ") || strings.Contains(res.errOut, cfg+":2 ") {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
}
