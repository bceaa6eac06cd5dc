package target_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/digest-cli/digest/internal/calibrate"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
)

// TestLearnedTokenFactorIsKeptForTheNextRun: the factor a run learns from
// reported usage is kept in the database, and the next run's target counts
// with it from its first request: against a server whose tokenizer counts
// 40% more than o200k, a prompt counts about 1.4 times the tokens after one
// run that it counted before it. That digest's runs learn and save it is
// cmd's TestEvalSendsTheKeyFromTheEnvironmentInItsHeaderAlone.
func TestLearnedTokenFactorIsKeptForTheNextRun(t *testing.T) {
	ctx := context.Background()
	o200k, model := heavier(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{CountTokens: model})
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "digest.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := func() target.Target {
		spec := provider.Spec{Provider: "openai", Model: "my-model"}
		tg := target.Target{Spec: spec, Rules: provider.ProviderRules(spec), Provider: openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: "k"})}
		if err := tg.Learn(ctx, st); err != nil {
			t.Fatal(err)
		}
		return tg
	}
	first := run()
	before := first.InputTokens(o200k, question(0))
	eng := first.Engine(target.Setup{Concurrency: 2, Count: o200k})
	for i := range calibrate.MinSamples {
		if o := eng.Do(ctx, engine.Task{Key: fmt.Sprint(i), Request: question(i)}); o.Err != nil {
			t.Fatal(o.Err)
		}
	}
	if err := first.SaveFactor(ctx, st); err != nil {
		t.Fatal(err)
	}
	if ratio := float64(run().InputTokens(o200k, question(0))) / float64(before); ratio < 1.35 || ratio > 1.45 {
		t.Errorf("the next run counts x%.2f the tokens of the first, want about x1.4", ratio)
	}
}
