package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// targetsOf parses args as the digest command line would (DIGEST_*
// variables from env included) and builds the targets that command would
// send to, through the run's own steps, without running it: for eval its
// model and then its judge, for summarize its model. Nothing is sent.
func targetsOf(t *testing.T, env map[string]string, args ...string) (got []target.Target) {
	t.Helper()
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	ios, _, _ := iostreams.Test()
	f := NewFactory(ios, "test")
	f.Getenv = func(k string) string { return env[k] }
	root := &cobra.Command{Use: "digest", SilenceUsage: true, SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return cmdutil.ApplyEnv(cmd, f.Getenv) }}
	connect := func(ctx context.Context, o runDeps, f targetFlags, tg target.Target) error {
		f.Tokenizer = tok
		err := o.connect(ctx, &tg, f)
		got = append(got, tg)
		return err
	}
	root.AddCommand(
		NewEvalCmd(f, func(ctx context.Context, o *EvalOptions) error {
			cfg, _, err := o.config()
			if err == nil {
				err = connect(ctx, o.runDeps, o.flags, cfg.Models[0])
			}
			if err == nil {
				var j *target.Target
				if j, err = judge(ctx, o); err == nil {
					got = append(got, *j)
				}
			}
			return err
		}),
		NewSummarizeCmd(f, func(ctx context.Context, o *SummarizeOptions) error {
			cfg, _, err := o.config(time.Now())
			if err == nil {
				err = connect(ctx, o.runDeps, o.flags, cfg.Target)
			}
			return err
		}))
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return got
}

// TestJudgeAndModelsAreConfiguredAlike: a model given as eval's --models,
// as its --judge and as summarize's --model, under the same flags
// (--model-config, --rpm, DIGEST_TPM, --batch-api), is one configured
// model: the same limits, prices, rules and shared limit, each from where
// the flags say, connected unless the run is dry. Only --base-url is the
// evaluated models' alone.
func TestJudgeAndModelsAreConfiguredAlike(t *testing.T) {
	file := filepath.Join(t.TempDir(), "models.json")
	if err := os.WriteFile(file, []byte(`{
 "anthropic:claude-sonnet-5": {"rpm": 50, "tpm": 40000,
   "price": {"input_per_million": 3, "output_per_million": 15, "cached_input_per_million": 0.3}},
 "openai:my-finetune": {"rpm": 60, "price": {"input_per_million": 0.3, "output_per_million": 1.2},
   "batch_price": {"input_per_million": 0.1, "output_per_million": 0.4}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test", "DIGEST_TPM": "20000"}
	sonnet, sonnetBatch := models.Price{InputPerM: 3, OutputPerM: 15, CachedInputPerM: 0.3}, models.Price{InputPerM: 1.5, OutputPerM: 7.5, CachedInputPerM: 0.15}
	for _, c := range []struct {
		spec        string
		extra       []string
		price, sync models.Price // what a request is billed at in the run's mode, and at once
	}{
		{"anthropic:claude-sonnet-5", nil, sonnet, sonnet},
		{"anthropic:claude-sonnet-5", []string{"--batch-api", "--dry-run"}, sonnetBatch, sonnet},
		{"openai:my-finetune", []string{"--batch-api", "--dry-run"}, models.Price{InputPerM: 0.1, OutputPerM: 0.4}, models.Price{InputPerM: 0.3, OutputPerM: 1.2}},
	} {
		common := append([]string{"--model-config", file, "--rpm", "7"}, c.extra...)
		got := append(targetsOf(t, env, append([]string{"eval", "d.jsonl", "--models", c.spec, "--judge", c.spec}, common...)...),
			targetsOf(t, env, append([]string{"summarize", t.TempDir(), "--model", c.spec}, common...)...)...)
		for i := range got {
			if dry := len(c.extra) > 0; (got[i].Provider == nil) != dry || (got[i].LimitName == "") != dry {
				t.Errorf("%s %v: target %d connected %v, limit %q", c.spec, c.extra, i, got[i].Provider != nil, got[i].LimitName)
			}
			got[i].Provider, got[i].Batcher = nil, nil // each its own client
		}
		// --rpm over the file's, DIGEST_TPM over the file's, the file's price.
		m := got[0]
		if m.Limits != (engine.Limits{RPM: 7, TPM: 20000, Window: time.Minute}) || m.Price != c.price || m.SyncPrice != c.sync || m.PriceUnknown {
			t.Errorf("%s %v: %+v, want price %+v and %+v", c.spec, c.extra, m, c.price, c.sync)
		}
		if !reflect.DeepEqual(got[1], m) || !reflect.DeepEqual(got[2], m) {
			t.Errorf("%s %v: the model, the judge and summarize's model differ:\n%+v\n%+v\n%+v", c.spec, c.extra, m, got[1], got[2])
		}
	}

	// --base-url is the evaluated models' server: the judge is asked at its
	// provider's, and so paces under that account's limit, not theirs.
	got := targetsOf(t, env, "eval", "d.jsonl", "--models", "openai:my-finetune", "--judge", "openai:my-finetune",
		"--model-config", file, "--base-url", "http://localhost:8000/v1")
	m, j := got[0], got[1]
	if m.BaseURL != "http://localhost:8000/v1" || j.BaseURL != openai.DefaultBaseURL || m.LimitName == j.LimitName || m.Limits != j.Limits || m.Price != j.Price {
		t.Errorf("--base-url: the model at %q (limit %q, %+v), the judge at %q (limit %q, %+v)", m.BaseURL, m.LimitName, m.Limits, j.BaseURL, j.LimitName, j.Limits)
	}
}

// TestDryRunCountsTokensAsTheModelDoes: Sonnet 5's tokenizer counts 1.42
// tokens for each o200k one, so summarize's dry run counts its input at
// that factor, rounded up per request, where Sonnet 4.5, which counts as
// o200k does, gets the tokenizer's count. eval's is internal/eval's test
// of the same name.
func TestDryRunCountsTokensAsTheModelDoes(t *testing.T) {
	h := newHarness(t)
	repo := fixture(t).Dir
	var sums [2]struct {
		Requests    int `json:"requests"`
		InputTokens int `json:"input_tokens"`
	}
	for i, model := range []string{"anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-5"} {
		res := h.run(context.Background(), "summarize", repo, "--model", model, "--dry-run", "-f", "json")
		if err := json.Unmarshal([]byte(res.out), &sums[i]); err != nil || res.code != 0 || sums[i].Requests != 1 {
			t.Fatalf("--model %s: exit %d, %v: %s %s", model, res.code, err, res.out, res.errOut)
		}
	}
	if want := (sums[0].InputTokens*142 + 99) / 100; sums[1].InputTokens != want {
		t.Errorf("Sonnet 5 counts %d input tokens, want ceil(1.42 × %d) = %d", sums[1].InputTokens, sums[0].InputTokens, want)
	}
}
