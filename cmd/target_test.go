package cmd

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// targetsOf parses args as the digest command line would (DIGEST_*
// variables from env included) and builds the targets that command would
// send to, through the run's own steps, without running it: for eval its
// models and its judge, for summarize its model. Nothing is sent: a
// provider's client is built, never called.
func targetsOf(t *testing.T, env map[string]string, args ...string) (evaluated []target.Target, judged *target.Target, summarized target.Target) {
	t.Helper()
	ctx := context.Background()
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	ios, _, _ := iostreams.Test()
	f := NewFactory(ios, "test")
	f.Getenv = func(k string) string { return env[k] }
	root := &cobra.Command{Use: "digest", SilenceUsage: true, SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return cmdutil.ApplyEnv(cmd, f.Getenv) }}
	root.AddCommand(
		NewEvalCmd(f, func(ctx context.Context, o *EvalOptions) error {
			cfg, _, err := o.config()
			if err != nil {
				return err
			}
			o.flags.Tokenizer = tok
			for i := range cfg.Models {
				if err := o.connect(ctx, &cfg.Models[i], o.flags); err != nil {
					return err
				}
			}
			evaluated = cfg.Models
			if o.Judge != "" {
				judged, err = judge(ctx, o)
			}
			return err
		}),
		NewSummarizeCmd(f, func(ctx context.Context, o *SummarizeOptions) error {
			cfg, _, err := o.config(time.Now())
			if err != nil {
				return err
			}
			o.flags.Tokenizer = tok
			if err := o.connect(ctx, &cfg.Target, o.flags); err != nil {
				return err
			}
			summarized = cfg.Target
			return nil
		}))
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return evaluated, judged, summarized
}

// TestJudgeAndModelsAreConfiguredAlike: a model given as eval's --models,
// as its --judge and as summarize's --model, under the same flags
// (--model-config, --rpm, DIGEST_TPM, --batch-api), is one configured
// model: the same limits, prices, rules and shared limit, each from where
// the flags say. Only --base-url is the evaluated models' alone.
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
	for _, c := range []struct {
		spec   string
		extra  []string
		price  models.Price // what a request is billed at in the run's mode
		sync   models.Price
		factor float64
	}{
		{"anthropic:claude-sonnet-5", nil,
			models.Price{InputPerM: 3, OutputPerM: 15, CachedInputPerM: 0.3}, models.Price{InputPerM: 3, OutputPerM: 15, CachedInputPerM: 0.3}, 1.42},
		{"anthropic:claude-sonnet-5", []string{"--batch-api", "--dry-run"},
			models.Price{InputPerM: 1.5, OutputPerM: 7.5, CachedInputPerM: 0.15}, models.Price{InputPerM: 3, OutputPerM: 15, CachedInputPerM: 0.3}, 1.42},
		{"openai:my-finetune", nil,
			models.Price{InputPerM: 0.3, OutputPerM: 1.2}, models.Price{InputPerM: 0.3, OutputPerM: 1.2}, 1},
		{"openai:my-finetune", []string{"--batch-api", "--dry-run"},
			models.Price{InputPerM: 0.1, OutputPerM: 0.4}, models.Price{InputPerM: 0.3, OutputPerM: 1.2}, 1},
	} {
		common := append([]string{"--model-config", file, "--rpm", "7"}, c.extra...)
		ms, j, _ := targetsOf(t, env, append([]string{"eval", "d.jsonl", "--models", c.spec, "--judge", c.spec}, common...)...)
		_, _, s := targetsOf(t, env, append([]string{"summarize", t.TempDir(), "--model", c.spec}, common...)...)
		if len(ms) != 1 || j == nil {
			t.Fatalf("%s: %d models and judge %v", c.spec, len(ms), j)
		}
		m := ms[0]
		name := fmt.Sprint(c.spec, c.extra)
		// --rpm over the file's, DIGEST_TPM over the file's, the file's price.
		wantLimits := engine.Limits{RPM: 7, TPM: 20000, Window: time.Minute}
		wantRules := provider.ProviderRules(m.Spec)
		for who, got := range map[string]target.Target{"the evaluated model": m, "the judge": *j, "summarize's model": s} {
			if got.Limits != wantLimits || got.Price != c.price || got.SyncPrice != c.sync || got.PriceUnknown ||
				!reflect.DeepEqual(got.Rules, wantRules) || got.Rules.Factor() != c.factor {
				t.Errorf("%s: %s: limits %+v, price %+v, sync %+v, unknown %v, rules %+v; want %+v, %+v, %+v, known, factor %g",
					name, who, got.Limits, got.Price, got.SyncPrice, got.PriceUnknown, got.Rules, wantLimits, c.price, c.sync, c.factor)
			}
		}
		dry := len(c.extra) > 0
		for who, got := range map[string]target.Target{"the judge": *j, "summarize's model": s} {
			if got.BaseURL != m.BaseURL || got.LimitName != m.LimitName || (got.Provider == nil) != (m.Provider == nil) {
				t.Errorf("%s: %s: base URL %q, limit %q, client %v; the evaluated model's %q, %q, %v",
					name, who, got.BaseURL, got.LimitName, got.Provider != nil, m.BaseURL, m.LimitName, m.Provider != nil)
			}
		}
		if dry && (m.Provider != nil || m.LimitName != "" || j.Provider != nil) {
			t.Errorf("%s: a dry run's targets are connected: %+v, judge %+v", name, m, *j)
		}
		if !dry && (m.Provider == nil || m.LimitName == "" || j.Provider == nil || j.LimitName == "") {
			t.Errorf("%s: the targets are not connected: %+v, judge %+v", name, m, *j)
		}
	}

	// --base-url is the evaluated models' server: the judge is asked at its
	// provider's, and so paces under that account's limit, not theirs.
	ms, j, _ := targetsOf(t, env, "eval", "d.jsonl", "--models", "openai:my-finetune", "--judge", "openai:my-finetune",
		"--model-config", file, "--base-url", "http://localhost:8000/v1")
	if ms[0].BaseURL != "http://localhost:8000/v1" || j.BaseURL != openai.DefaultBaseURL || ms[0].LimitName == j.LimitName {
		t.Errorf("--base-url: the model at %q (limit %q), the judge at %q (limit %q)", ms[0].BaseURL, ms[0].LimitName, j.BaseURL, j.LimitName)
	}
	if ms[0].Limits != j.Limits || ms[0].Price != j.Price {
		t.Errorf("--base-url changed more than the server: %+v %+v, judge %+v %+v", ms[0].Limits, ms[0].Price, j.Limits, j.Price)
	}
}

// TestDryRunCountsTokensAsTheModelDoes: Sonnet 5's tokenizer counts 1.42
// tokens for each o200k one, so a dry run counts its input at that factor,
// rounded up per request, where Sonnet 4.5, which counts as o200k does,
// gets the tokenizer's count: the same prompts, 1.42 times the tokens and
// the cost. Here for summarize; eval's is internal/eval's test of the
// same name.
func TestDryRunCountsTokensAsTheModelDoes(t *testing.T) {
	const five, fourFive = "anthropic:claude-sonnet-5", "anthropic:claude-sonnet-4-5"
	h := newHarness(t)
	repo := fixture(t).Dir
	var sums [2]struct {
		Requests    int     `json:"requests"`
		InputTokens int     `json:"input_tokens"`
		CostUSD     float64 `json:"cost_usd"`
	}
	for i, model := range []string{fourFive, five} {
		res := h.run(context.Background(), "summarize", repo, "--model", model, "--dry-run", "-f", "json")
		if res.code != 0 {
			t.Fatalf("summarize --dry-run --model %s: exit %d: %s", model, res.code, res.errOut)
		}
		if err := json.Unmarshal([]byte(res.out), &sums[i]); err != nil {
			t.Fatalf("summarize --dry-run: %v: %s", err, res.out)
		}
	}
	if sums[0].Requests != 1 || sums[1].Requests != 1 {
		t.Fatalf("summarize --dry-run: %d and %d requests, want the fixture's commits in one each", sums[0].Requests, sums[1].Requests)
	}
	if want := (sums[0].InputTokens*142 + 99) / 100; sums[1].InputTokens != want {
		t.Errorf("summarize --dry-run: %s counts %d input tokens, want ceil(1.42 × %d) = %d", five, sums[1].InputTokens, sums[0].InputTokens, want)
	}
}
