package eval

import (
	"slices"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/dataset/promptfoo"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/target"
)

// TestEvalPromptfooConfig: the fixture config (inline tests, a YAML and a
// CSV test file, two prompts, two providers), as the promptfoo import
// reads it, runs against the providers it names, each on its own wire
// format, and scores as promptfoo would. Each answer is "fake answer:
// PROMPT", so the expected verdicts follow from promptfoo's semantics by
// hand. What the import makes of the config is internal/dataset/promptfoo's
// TestConfigItems; that `digest eval CONFIG` runs it, cmd's.
func TestEvalPromptfooConfig(t *testing.T) {
	const fixture = "../../testdata/eval/promptfoo/promptfooconfig.yaml"
	pf, err := promptfoo.Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	r := newTestRun(t)
	r.models = nil
	for _, m := range pf.Models {
		spec, err := provider.ParseSpec(m)
		if err != nil {
			t.Fatal(err)
		}
		tg := target.Target{Spec: spec, BaseURL: srv.OpenAIBaseURL(), Provider: openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"}),
			Rules: provider.ProviderRules(spec), Limits: engine.Limits{Window: time.Minute}}
		if spec.Provider == "anthropic" {
			tg.BaseURL, tg.Provider = srv.AnthropicBaseURL(), anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: "k"})
		}
		r.models = append(r.models, tg)
	}
	_, e := r.run(t, string(pf.JSONL()), Options{Read: dataset.Options{Name: fixture}})
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
	for _, model := range []string{"openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"} {
		got := results(e, model)
		if len(got) != len(want) {
			t.Errorf("%s: %d results, want 12", model, len(got))
		}
		for item, pass := range want {
			if res, ok := got[item]; !ok || res.Error != "" || res.Pass != pass {
				t.Errorf("%s on %s: %+v, want pass %v", model, item, res, pass)
			}
		}
	}
	var prompts []string
	for _, q := range srv.Requests() {
		if q.Model == "gpt-4o-mini" {
			prompts = append(prompts, q.Messages[len(q.Messages)-1].Content)
		}
	}
	slices.Sort(prompts)
	for _, p := range []string{"Say hello to Ada in English.", "Say hello to Fay in .", "Write a short poem about Dee, in French."} {
		if _, found := slices.BinarySearch(prompts, p); !found {
			t.Errorf("no request asked %q; sent %q", p, prompts)
		}
	}
	if len(prompts) != 12 || len(srv.Requests()) != 24 {
		t.Errorf("%d requests to gpt-4o-mini and %d in all, want 12 and 24", len(prompts), len(srv.Requests()))
	}
}
