package target_test

import (
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/sharedlimit"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

func targetOf(prov, model string) target.Target {
	spec := provider.Spec{Provider: prov, Model: model}
	return target.Target{Spec: spec, Limits: engine.Limits{TPM: 30_000, Window: time.Minute}, Rules: provider.ProviderRules(spec)}
}

// TestTokensAreScaledToTheModelsTokenizer: a Sonnet 5 target counts a
// request's prompt at 1.42 times its o200k tokens, rounded up, and its
// output cap as it is; gpt-4o-mini, whose tokenizer is o200k, counts the
// prompt as it is. The engine reserves exactly what Tokens says, so pacing,
// --max-cost and --dry-run count alike.
func TestTokensAreScaledToTheModelsTokenizer(t *testing.T) {
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	req := provider.Request{System: "You summarize commits for a changelog.", MaxTokens: 300,
		Messages: []provider.Message{{Role: "user", Content: "Summarize: Add a greeting helper; the helper keeps main small."}}}
	o200k := engine.PromptTokens(tok.Count, req)
	if o200k < 10 {
		t.Fatalf("the prompt counts %d o200k tokens: the tokenizer is not counting", o200k)
	}
	for _, c := range []struct {
		prov, model string
		input       int
	}{
		{"anthropic", "claude-sonnet-5", (o200k*142 + 99) / 100}, // ceil(1.42 × o200k)
		{"openai", "gpt-4o-mini", o200k},
	} {
		tg := targetOf(c.prov, c.model)
		r := req
		r.Model = c.model
		if got := tg.InputTokens(tok.Count, r); got != c.input {
			t.Errorf("%s: input %d tokens, want %d (%d o200k)", tg.Spec, got, c.input, o200k)
		}
		want := c.input + provider.OutputCap(r)
		if got := tg.Tokens(tok.Count, r); got != want {
			t.Errorf("%s: %d tokens, want %d: the input as the model counts it and the output cap", tg.Spec, got, want)
		}
		eng, ok := tg.Engine(target.Setup{Concurrency: 1, Count: tok.Count}).(*engine.Engine)
		if !ok {
			t.Fatalf("%s: with batches off the engine is not an *engine.Engine", tg.Spec)
		}
		if eng.Tokens == nil {
			t.Fatalf("%s: the engine reserves no tokens", tg.Spec)
		}
		if got := eng.Tokens(r); got != want {
			t.Errorf("%s: the engine reserves %d tokens, want %d", tg.Spec, got, want)
		}
		if eng.Limits != tg.Limits || eng.Model != tg.Spec.String() {
			t.Errorf("%s: engine limits %+v for %q, want the target's %+v", tg.Spec, eng.Limits, eng.Model, tg.Limits)
		}
	}
	if got := targetOf("anthropic", "claude-sonnet-5").Tokens(tok.Count, provider.Request{Model: "claude-sonnet-5", MaxTokens: 7}); got != 7 {
		t.Errorf("an empty prompt counts %d tokens, want the output cap alone, 7", got)
	}
}

// fakeStore stands in for a database: the engine's shared limit only holds it.
type fakeStore struct{ store.Store }

// TestEngineSharesTheLimitOnlyWithAStoreAndAName: the engine paces with the
// limit other processes share when the run has a store and the target a
// limit name, alone otherwise; with batches on, its tasks go through the
// batch API.
func TestEngineSharesTheLimitOnlyWithAStoreAndAName(t *testing.T) {
	tg := targetOf("openai", "gpt-4o-mini")
	tg.LimitName = sharedlimit.Name("openai", "https://api.openai.com/v1", "gpt-4o-mini", "k")
	st := fakeStore{}
	eng := tg.Engine(target.Setup{Store: st, Concurrency: 1}).(*engine.Engine)
	if l, ok := eng.Shared.(sharedlimit.Limit); !ok || l.Name != tg.LimitName || l.Store != st {
		t.Errorf("with a store and a name the engine shares %#v, want the target's limit", eng.Shared)
	}
	if eng := tg.Engine(target.Setup{Concurrency: 1}).(*engine.Engine); eng.Shared != nil {
		t.Errorf("without a store the engine shares %#v, want nothing", eng.Shared)
	}
	alone := tg
	alone.LimitName = ""
	if eng := alone.Engine(target.Setup{Store: st, Concurrency: 1}).(*engine.Engine); eng.Shared != nil {
		t.Errorf("without a limit name the engine shares %#v, want nothing", eng.Shared)
	}
	if _, ok := tg.Engine(target.Setup{Store: st, Concurrency: 1, Batch: batchrun.Mode{On: true}}).(*batchrun.Runner); !ok {
		t.Error("with batches on, the target's tasks do not go through a batch run")
	}
}
