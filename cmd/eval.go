package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/dataset/promptfoo"
	"github.com/digest-cli/digest/internal/eval"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/textsafe"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// EvalOptions are the eval command's flags and arguments.
type EvalOptions struct {
	runDeps

	Dataset     string
	Models      []string
	Temperature float64
	MaxTokens   int
	Seed        int
	Effort      string
	Repeat      int
	System      string
	Limit       int
	Assert      string
	Tolerance   float64
	Judge       string
	Prompt      string
	SkipInvalid bool
	NoRedact    bool
	Concurrency int
	Timeout     time.Duration
	BaseURL     string
	RPM, TPM    int
	ModelConfig string
	DryRun      bool
	MaxCost     float64
	Lease       time.Duration
	Format      string
	Output      string
	JUnit       string
	HTML        string
	MinAccuracy string
	// Min is --min, each METRIC=VALUE or MODEL:METRIC=VALUE, comma
	// separated or repeated.
	Min       []string
	Tokenizer string
	Stops     cmdutil.Stops
	Batch     batchFlags
	// AllowOutside are folders beyond its own whose files a promptfoo
	// config may read (--allow-outside).
	AllowOutside []string

	set       func(name string) bool // whether a flag was given, for the optional parameters
	flags     targetFlags            // what every model and the judge are built from, once read
	promptfoo *promptfoo.Config      // the promptfoo config, read once by config
}

// NewEvalCmd builds `digest eval`.
func NewEvalCmd(f *cmdutil.Factory, runF func(context.Context, *EvalOptions) error) *cobra.Command {
	o := &EvalOptions{runDeps: newRunDeps(f)}
	cmd := &cobra.Command{
		Use:   "eval DATASET --models MODEL[,MODEL...]",
		Short: "Run a prompt dataset against models and compare their scores",
		Long: `Send every item of a JSON Lines dataset (- for standard input) to every model,
score the answers, and report accuracy with its 95% interval, latency, tokens and
cost per model, and how each pair of models compares on the same items.

Each line is one item, in digest's own format, openai/evals, inspect_ai or promptfoo
(with --prompt). A promptfooconfig.yaml runs as it is (its prompts, providers as
--models unless given, tests inline or from YAML and CSV files); what digest cannot
run in it is listed in one error before anything is sent. The files it names must be in its
folder (--allow-outside DIR opens another; /proc, /sys and /dev never), and no report may
overwrite one of them. Every answer is stored under a hash of everything that shaped it:
running the same command again asks only for what is missing, and a finished run
costs nothing to rerun. With --min-accuracy, a model below the mark makes digest
exit 3 after writing every report.

An assertion may name a metric ("metric": "bias" in a dataset or a promptfoo
config, --assert TYPE@METRIC for the default one): each metric is then scored on
its own assertions and reported per model with its pass rate, 95% interval and
mean score, and per pair of models with McNemar's test on the passes and a paired
t-test on the scores. Without names everything is one metric, accuracy.
--min METRIC=VALUE (or MODEL:METRIC=VALUE) fails the run, exit 3, when a model's
pass rate on the metric is below VALUE; --min-accuracy X is --min accuracy=X.`,
		Example: cmdutil.Example(
			"digest eval testdata/eval/arithmetic.jsonl --models offline",
			"digest eval qa.jsonl --models openai:gpt-4o-mini,anthropic:claude-haiku-4-5 --repeat 3",
			"digest eval qa.jsonl --models ollama:llama3.2 --assert icontains --html report.html",
			"digest eval qa.jsonl --models openai:gpt-4o-mini --min-accuracy 0.85 --junit junit.xml   # in CI",
			"digest eval qa.jsonl --models openai:gpt-4o-mini,openai:gpt-4o --min bias=0.9,accuracy=0.8",
			"digest eval cases.jsonl --prompt prompt.txt --models openai:gpt-4o-mini --dry-run",
			"digest eval promptfooconfig.yaml --dry-run"),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dataset = args[0]
			o.set = func(name string) bool { return cmd.Flags().Changed(name) }
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runEval(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&o.Models, "models", "m", []string{provider.Offline}, "models to evaluate, comma separated (PROVIDER:MODEL or offline)")
	fl.Float64Var(&o.Temperature, "temperature", 0, "sampling temperature (default: the provider's)")
	fl.IntVar(&o.MaxTokens, "max-tokens", 512, "output tokens per answer, at most")
	fl.IntVar(&o.Seed, "seed", 0, "sampling seed, for providers that take one (default: none)")
	addEffortFlag(fl, &o.Effort)
	fl.IntVar(&o.Repeat, "repeat", 1, "ask every item this many times; each repeat is its own result")
	fl.StringVar(&o.System, "system", "", "system prompt for items that have none")
	fl.IntVar(&o.Limit, "limit", 0, "only the first N items (0: all)")
	fl.StringVar(&o.Assert, "assert", "", "assertion for items without their own: exact, includes, icontains, starts-with, regex, numeric, choice, json, json-schema, judge, refusal, each also as not-TYPE; TYPE@METRIC scores it under a named metric")
	fl.Float64Var(&o.Tolerance, "tolerance", score.DefaultTolerance, "numeric assertions pass within this distance, absolute or relative")
	fl.StringVar(&o.Judge, "judge", "", "grading model for judge assertions (PROVIDER:MODEL)")
	fl.StringVar(&o.Prompt, "prompt", "", "prompt template with {{var}} placeholders, for promptfoo test cases")
	fl.BoolVar(&o.SkipInvalid, "skip-invalid", false, "report and skip dataset lines that cannot be read, instead of stopping")
	fl.BoolVar(&o.NoRedact, "no-redact", false, "send prompts as they are, without replacing the secrets found in them (the environment's keys are scrubbed still)")
	fl.IntVarP(&o.Concurrency, "concurrency", "j", 4, "requests in flight per model, at most")
	fl.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up on one attempt after this long (it is retried; 0: never)")
	fl.StringVar(&o.BaseURL, "base-url", "", "endpoint of the models' server, for OpenAI-compatible servers and proxies")
	fl.IntVar(&o.RPM, "rpm", 0, "requests per minute each model allows (0: the built-in figure, else learned)")
	fl.IntVar(&o.TPM, "tpm", 0, "tokens per minute each model allows (0: the built-in figure, else learned)")
	fl.StringVar(&o.ModelConfig, "model-config", "", "JSON file of per-model rpm, tpm and price, over the built-in table")
	fl.BoolVar(&o.DryRun, "dry-run", false, "count the requests, tokens and cost, and send nothing")
	fl.Float64Var(&o.MaxCost, "max-cost", 0, "send nothing that could take the run's cost past this many US dollars (0: no limit)")
	fl.DurationVar(&o.Lease, "lease", lease.Default, "how long another digest waits for an answer this one claimed, should this one die")
	fl.StringVarP(&o.Format, "format", "f", "", "output: table (default on a terminal), json (default elsewhere), jsonl, csv, markdown")
	fl.StringVarP(&o.Output, "output", "o", "", "write the report to this file instead of standard output")
	fl.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to this file")
	fl.StringVar(&o.HTML, "html", "", "also write a self-contained HTML report to this file")
	fl.StringVar(&o.MinAccuracy, "min-accuracy", "", "fail (exit 3) below this accuracy: 0.85 for every model, or MODEL=0.85,...")
	fl.StringArrayVar(&o.Min, "min", nil, "fail (exit 3) when a metric's pass rate is below VALUE: METRIC=VALUE for every model, or MODEL:METRIC=VALUE (comma-separated or repeatable; --min-accuracy X is --min accuracy=X)")
	fl.StringVar(&o.Tokenizer, "tokenizer", tokenizer.Default, "vocabulary that counts tokens for limits and --dry-run")
	fl.StringArrayVar(&o.AllowOutside, "allow-outside", nil, "let a promptfoo config read files in this folder too, beyond its own (repeatable; never /proc, /sys or /dev)")
	o.Stops.AddFlags(fl)
	o.Batch.addFlags(fl)
	cmdutil.DocumentEnv(fl)
	return cmd
}

// parseGates reads --min-accuracy, then --min, which overrides it where
// both name one model's metric.
func parseGates(s string, mins []string, specs []provider.Spec) (eval.Gates, error) {
	gates, err := parseMinAccuracy(s, specs)
	if err != nil {
		return nil, err
	}
	for _, m := range mins {
		gs, err := eval.ParseMin(m)
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			if g.Model != "" {
				model, err := knownModel("--min", g.Model, g.Metric+"="+strconv.FormatFloat(g.Value, 'g', -1, 64), specs)
				if err != nil {
					return nil, err
				}
				g.Model = model
			}
			gates[g.Gate] = g.Value
		}
	}
	return gates, nil
}

// knownModel is the spec of a model a flag names, which must be among
// --models; value is the rest of the flag's entry, for the message.
func knownModel(flag, model, value string, specs []provider.Spec) (string, error) {
	known := map[string]bool{}
	for _, sp := range specs {
		known[sp.String()] = true
	}
	spec, err := provider.ParseSpec(model)
	if err == nil && known[spec.String()] {
		return spec.String(), nil
	}
	names := slices.Sorted(maps.Keys(known))
	if len(names) == 0 {
		return "", fmt.Errorf("%s names %q, and --models names none. Try: --models %s", flag, model, model)
	}
	sep := "="
	if flag == "--min" {
		sep = ":"
	}
	return "", fmt.Errorf("%s names %q, which is not among --models. Try: one of %s, as %s %s%s%s",
		flag, model, strings.Join(names, ", "), flag, names[0], sep, value)
}

// parseMinAccuracy reads --min-accuracy: gates on the metric accuracy.
func parseMinAccuracy(s string, specs []provider.Spec) (eval.Gates, error) {
	gates := eval.Gates{}
	if strings.TrimSpace(s) == "" {
		return gates, nil
	}
	known := map[string]bool{}
	for _, sp := range specs {
		known[sp.String()] = true
	}
	for _, part := range strings.Split(s, ",") {
		model, value, hasModel := strings.Cut(strings.TrimSpace(part), "=")
		if !hasModel {
			value, model = model, ""
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || v < 0 || v > 1 {
			return nil, fmt.Errorf("--min-accuracy %q: %q is not an accuracy between 0 and 1. Try: --min-accuracy 0.85 or --min-accuracy openai:gpt-4o-mini=0.85", s, value)
		}
		if model != "" {
			if spec, err := provider.ParseSpec(model); err != nil || !known[spec.String()] {
				names := slices.Sorted(maps.Keys(known))
				if len(names) == 0 {
					return nil, fmt.Errorf("--min-accuracy names %q, and --models names none. Try: --models %s", model, model)
				}
				return nil, fmt.Errorf("--min-accuracy names %q, which is not among --models. Try: one of %s, as --min-accuracy %s=%s",
					model, strings.Join(names, ", "), names[0], strings.TrimSpace(value))
			} else {
				model = spec.String()
			}
		}
		gates[eval.Gate{Model: model, Metric: dataset.DefaultMetric}] = v
	}
	return gates, nil
}

func (o *EvalOptions) config() (eval.Options, eval.Gates, error) {
	var cfg eval.Options
	var temperature error
	if o.set != nil && o.set("temperature") {
		temperature = cmdutil.NotNegativeFloat("temperature", o.Temperature, "the most deterministic answers")
	}
	if err := cmdutil.FirstError(
		temperature,
		cmdutil.AtLeastOne("max-tokens", o.MaxTokens),
		cmdutil.AtLeastOne("repeat", o.Repeat),
		cmdutil.NotNegative("limit", o.Limit, "every item"),
		cmdutil.NotNegativeFloat("tolerance", o.Tolerance, "exact equality"),
		cmdutil.AtLeastOne("concurrency", o.Concurrency),
		cmdutil.NotNegativeDuration("timeout", o.Timeout, "no timeout"),
		cmdutil.NotNegative("rpm", o.RPM, "the model's known or learned limit"),
		cmdutil.NotNegative("tpm", o.TPM, "the model's known or learned limit"),
		cmdutil.NotNegativeFloat("max-cost", o.MaxCost, "no limit"),
	); err != nil {
		return cfg, nil, err
	}
	if o.Lease <= 0 {
		return cfg, nil, cmdutil.UsageError("--lease must be positive, got %s. Try: --lease 5m", o.Lease)
	}
	if len(o.AllowOutside) > 0 && !promptfoo.IsFile(o.Dataset) {
		return cfg, nil, cmdutil.UsageError("--allow-outside is for promptfoo configs, whose files it lets them read, and %s is not one. Try: leave out --allow-outside", o.Dataset)
	}
	if promptfoo.IsFile(o.Dataset) {
		// A promptfoo config names its models and its grader; the flags,
		// when given, win. Whatever digest cannot run is refused here, before
		// anything is sent, and so is every file it names outside its
		// folder (and the --allow-outside ones). It is read once: every
		// later reading of the dataset is of these items.
		pf, err := promptfoo.Load(o.Dataset, o.AllowOutside...)
		if err != nil {
			return cfg, nil, cmdutil.AsUsage(err)
		}
		o.promptfoo = pf
		if pf.NeedsPrompt() && o.Prompt == "" {
			return cfg, nil, cmdutil.UsageError("%s holds promptfoo tests without a prompt. Try: --prompt FILE with the {{var}} template, or a promptfooconfig.yaml naming it", o.Dataset)
		}
		if len(pf.Models) > 0 && !o.set("models") {
			o.Models = pf.Models
		}
		if o.Judge == "" {
			o.Judge = pf.Judge
		}
	}
	if len(o.Models) == 0 {
		return cfg, nil, cmdutil.UsageError("--models is empty. Try: --models offline, or --models openai:gpt-4o-mini")
	}
	if o.Format != "" {
		if _, err := evalreport.ForEvalFormat(o.Format); err != nil {
			return cfg, nil, cmdutil.AsUsage(fmt.Errorf("--format: %w", err))
		}
	}
	if err := checkDryRunOutputs(o); err != nil {
		return cfg, nil, err
	}
	var file models.File
	if o.ModelConfig != "" {
		var err error
		if file, err = models.LoadFile(o.ModelConfig); err != nil {
			return cfg, nil, cmdutil.AsUsage(err)
		}
	}
	mode, err := o.Batch.mode()
	if err != nil {
		return cfg, nil, err
	}
	cfg.Batch = mode
	o.flags = targetFlags{BaseURL: o.BaseURL, RPM: o.RPM, TPM: o.TPM, File: file, Mode: mode, DryRun: o.DryRun, Concurrency: o.Concurrency}
	var specs []provider.Spec
	seen := map[string]bool{}
	for _, m := range o.Models {
		spec, err := provider.ParseSpec(m)
		if err != nil {
			return cfg, nil, cmdutil.AsUsage(fmt.Errorf("--models: %w", err))
		}
		if seen[spec.String()] {
			return cfg, nil, cmdutil.UsageError("--models names %s twice. Try: each model once", spec)
		}
		seen[spec.String()] = true
		specs = append(specs, spec)
		m, err := o.target(spec, o.flags)
		if err != nil {
			return cfg, nil, err
		}
		if o.MaxCost > 0 && m.PriceUnknown {
			return cfg, nil, cmdutil.UsageError("--max-cost needs the price of %s, which digest does not know. Try: --model-config with its price", spec)
		}
		if o.set("temperature") {
			if err := m.Rules.CheckTemperature(o.Temperature); err != nil {
				return cfg, nil, cmdutil.UsageError("%s: %v. Try: --temperature between 0 and %g", spec, err, m.Rules.MaxTemperature)
			}
		}
		cfg.Models = append(cfg.Models, m)
	}
	gates, err := parseGates(o.MinAccuracy, o.Min, specs)
	if err != nil {
		return cfg, nil, cmdutil.AsUsage(err)
	}
	if err := checkEffort(o.Effort); err != nil {
		return cfg, nil, err
	}
	cfg.Params = eval.Params{MaxTokens: o.MaxTokens, Repeat: o.Repeat, System: o.System, ReasoningEffort: o.Effort}
	if o.set("temperature") {
		cfg.Params.Temperature = &o.Temperature
	}
	if o.set("seed") {
		cfg.Params.Seed = &o.Seed
	}
	assertType, assertMetric, err := dataset.SplitAssertFlag(o.Assert)
	if err != nil {
		return cfg, nil, cmdutil.AsUsage(err)
	}
	if assertType != "" {
		if err := score.CheckType(assertType); err != nil {
			return cfg, nil, cmdutil.AsUsage(fmt.Errorf("--assert: %w", err))
		}
	}
	cfg.Scorer = &score.Scorer{Default: assertType, DefaultMetric: assertMetric, Tolerance: score.GivenTolerance(o.Tolerance, o.set("tolerance"))}
	cfg.Read = dataset.Options{Name: o.Dataset, SkipInvalid: o.SkipInvalid}
	// What is sent passes the redaction diffs pass, whatever file it came
	// from; the environment's keys are never sent, stored or reported.
	cfg.Secrets = secrets(o.Getenv)
	if !o.NoRedact && sendsAway(specs, o.Judge) {
		var err error
		if cfg.Redactor, err = redact.New(); err != nil {
			return cfg, nil, err
		}
	}
	if o.Prompt != "" {
		tmpl, err := os.ReadFile(o.Prompt)
		if err != nil {
			return cfg, nil, cmdutil.UsageError("--prompt: %v. Try: a file holding the prompt template", err)
		}
		cfg.Read.Template = string(tmpl)
	}
	cfg.Dataset, cfg.Limit, cfg.Concurrency, cfg.Timeout, cfg.DryRun, cfg.MaxCost = o.Dataset, o.Limit, o.Concurrency, o.Timeout, o.DryRun, o.MaxCost
	cfg.Lease = o.Lease
	if cfg.MaxWait, cfg.MaxFailures, err = o.Stops.Engine(); err != nil {
		return cfg, nil, err
	}
	return cfg, gates, nil
}

func runEval(ctx context.Context, o *EvalOptions) error {
	cfg, gates, err := o.config()
	if err != nil {
		return err
	}
	inputs := []cmdutil.NamedPath{{Flag: "the dataset", Path: o.Dataset}, {Flag: "--prompt", Path: o.Prompt}, {Flag: "--model-config", Path: o.ModelConfig}}
	if o.promptfoo != nil {
		for _, f := range o.promptfoo.Files() {
			inputs = append(inputs, cmdutil.NamedPath{Flag: "a file the promptfoo config reads", Path: f})
		}
	}
	if err := checkEvalOutputs(o, true, inputs); err != nil {
		return err
	}
	if cfg.Tokenizer, err = tokenizer.New(o.Tokenizer); err != nil {
		return cmdutil.AsUsage(fmt.Errorf("--tokenizer: %w", err))
	}
	if err := checkJudgeGiven(o, cfg); err != nil {
		return err
	}
	planned, err := surveyDataset(ctx, o, cfg)
	if err != nil {
		return err
	}
	o.flags.Tokenizer = cfg.Tokenizer
	for i := range cfg.Models {
		if err := o.connect(ctx, &cfg.Models[i], o.flags); err != nil {
			return err
		}
	}
	src := io.Reader(o.IO.In)
	if o.Dataset != "-" { // a FIFO too, opened here for the first time
		file, err := o.openDataset()
		if err != nil {
			return err
		}
		defer file.Close()
		src = file
	}
	cfg.Source = src
	if cfg.Store, err = o.OpenStore(ctx, o.DryRun); err != nil {
		return err
	}
	if cfg.Store != nil {
		defer cfg.Store.Close()
	}
	if o.Judge != "" {
		if cfg.Judge, err = judge(ctx, o); err != nil {
			return err
		}
	}
	targets := make([]*target.Target, 0, len(cfg.Models)+1)
	for i := range cfg.Models {
		targets = append(targets, &cfg.Models[i])
	}
	if cfg.Judge != nil {
		targets = append(targets, cfg.Judge)
	}
	if err := learnFactors(ctx, cfg.Store, targets); err != nil {
		return err
	}
	defer saveFactors(context.WithoutCancel(ctx), cfg.Store, targets, o.Logger())
	// Said once everything is checked, just before the first request.
	noteNotSent(o.Infof, cfg.Models, provider.Request{Temperature: cfg.Params.Temperature, Seed: cfg.Params.Seed, ReasoningEffort: cfg.Params.ReasoningEffort})
	specs := make([]provider.Spec, 0, len(cfg.Models)+1)
	for _, m := range cfg.Models {
		specs = append(specs, m.Spec)
	}
	if cfg.Judge != nil {
		specs = append(specs, cfg.Judge.Spec)
	}
	noteRetired(o.Infof, specs)
	cfg.Log = o.Logger()
	bar := o.IO.NewProgressOf("evaluating", "results", !o.Globals.Quiet)
	cfg.Progress = bar // its total grows as a dataset on standard input is read
	if planned > 0 {
		bar.Start(planned)
		cfg.Progress = countedProgress{bar}
	}
	cfg.Batch.OnLook = showBatches(o.runDeps, bar)
	started := time.Now()
	out, err := eval.Run(ctx, cfg)
	bar.Finish()
	if out != nil {
		for _, le := range out.Skipped {
			fmt.Fprintf(o.IO.ErrOut, "digest: skipped %s\n", textsafe.Line(le.Error()))
		}
	}
	if errors.Is(err, eval.ErrNothingToCheck) || errors.Is(err, eval.ErrNoItems) {
		return cmdutil.AsUsage(err)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) && out != nil {
			if cfg.Store == nil { // a dry run stores nothing
				return cmdutil.Interrupted("interrupted")
			}
			// A run that stored no result is dropped (a batch run
			// interrupted while it polls, typically): the line names a
			// run only if `digest runs show` finds it.
			if _, kept, rerr := cfg.Store.Run(context.WithoutCancel(ctx), out.RunID); rerr == nil && !kept {
				return cmdutil.Interrupted(fmt.Sprintf("interrupted before any result was stored, so no run is kept in %s: run the same command again to continue", cfg.Store.Path()))
			}
			return cmdutil.Interrupted(fmt.Sprintf("interrupted; results so far are stored in %s as run %s: run the same command again to continue", cfg.Store.Path(), out.RunID))
		}
		if out != nil && out.RunID != "" && cfg.Store != nil && !o.DryRun && out.Pending == 0 {
			// A run stopped by a fatal error (a refused key, too many
			// failures in a row) still leaves its reports: a CI job reads
			// its JUnit and step summary to see what failed. The reports
			// are written even if a signal came after the stop.
			rep, rerr := storedReport(context.WithoutCancel(ctx), cfg, out, gates)
			if errors.Is(rerr, errRunNotStored) {
				// Stopped before any result was stored, the run was dropped:
				// its reports would be empty ones, a JUnit of no failures.
				return err
			}
			if errors.Is(err, store.ErrUnreachable) && errors.Is(rerr, store.ErrUnreachable) {
				// The reports are read back from the database that is lost.
				return fmt.Errorf("%w (no reports: they are read from the database)", err)
			}
			if rerr == nil {
				rerr = writeEvalReports(o, rep, true)
			}
			if rerr != nil {
				return errors.Join(err, rerr)
			}
			results := 0
			for _, m := range rep.Models {
				results += m.Items
			}
			return fmt.Errorf("%w (the reports hold the %d results stored before the run stopped)", err, results)
		}
		return err
	}
	if o.DryRun {
		return writeEvalEstimate(o, out)
	}
	if out.Pending > 0 {
		// Reports and thresholds over part of the results would mislead.
		o.Infof("%s", pendingNote(out.Pending, "results"))
		return nil
	}
	rep, err := storedReport(ctx, cfg, out, gates)
	if err != nil {
		return err
	}
	if err := writeEvalReports(o, rep, true); err != nil {
		return err
	}
	errs, unchecked := 0, 0
	for _, m := range rep.Models {
		errs += m.Errors
		unchecked += m.Unchecked
	}
	o.Infof("digest: run %s: %d items × %d models, %d requests, %d retries, %d errors, %d unchecked, %s",
		out.RunID, out.Items, len(cfg.Models), out.Requests, out.Retries, errs, unchecked, time.Since(started).Round(time.Millisecond))
	if n := out.Redacted.Total(); n > 0 {
		o.Infof("digest: %d secrets replaced by markers before sending (%s); --no-redact sends them as they are", n, out.Redacted)
	}
	if cfg.Judge != nil {
		// Verdicts are no model's answers: their cost is in no model's row.
		o.Infof("digest: judge %s: %d verdicts paid for, %s", cfg.Judge.Spec, out.JudgeVerdicts, judgeCost(*cfg.Judge, out.JudgeCostUSD))
	}
	if out.NotSent > 0 {
		return fmt.Errorf("stopped before --max-cost $%g: %d results left unrequested. Try: a higher --max-cost, and run again to continue", o.MaxCost, out.NotSent)
	}
	if err := resultErrors(rep); err != nil {
		return err
	}
	flag := "--min-accuracy"
	if len(o.Min) > 0 {
		flag = "--min"
	}
	return gateError(rep, gates, flag)
}

// errRunNotStored is storedReport's error for a run the store does not
// hold: one that ended with no result is dropped.
var errRunNotStored = errors.New("the run is not in the database. Try: run the same command again")

// storedReport is the report of the run out names, from the store.
func storedReport(ctx context.Context, cfg eval.Options, out *eval.RunStats, gates eval.Gates) (*evalreport.Eval, error) {
	run, ok, err := cfg.Store.Run(ctx, out.RunID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("run %s: %w", out.RunID, errRunNotStored)
	}
	rep, err := eval.Report(ctx, cfg.Store, run, gates)
	if err != nil {
		return nil, err
	}
	if cfg.Judge != nil && rep.Judge == nil {
		// A run stopped before its end has no judge's line on its record.
		rep.Judge = &evalreport.JudgeCost{Model: cfg.Judge.Spec.String(), Verdicts: out.JudgeVerdicts}
		if !cfg.Judge.PriceUnknown {
			rep.Judge.CostUSD = &out.JudgeCostUSD
		}
	}
	return rep, nil
}

// judgeCost is what the judge's verdicts cost, or that its price is
// unknown.
func judgeCost(m target.Target, usd float64) string {
	if m.PriceUnknown {
		return "cost unknown (no price for it)"
	}
	return fmt.Sprintf("$%.4f", usd)
}

// resultErrors fails the run, exit 1, when any result ended in error (no
// answer, a failed judge, an assertion that could not be checked): a run
// whose requests failed must not pass for a green build. It names the
// first error, from the stored results, so the log says what went wrong.
func resultErrors(rep *evalreport.Eval) error {
	var total, unchecked int
	var per []string
	for _, m := range rep.Models {
		if m.Errors > 0 {
			total += m.Errors
			per = append(per, fmt.Sprintf("%s %d", m.Model, m.Errors))
		}
		unchecked += m.Unchecked
	}
	if total == 0 && unchecked > 0 {
		return fmt.Errorf("%d results had nothing to check and were not sent (%s). Try: give those items \"expected\" answers, or --assert json or judge, which need none",
			unchecked, evalreport.NothingToCheck)
	}
	if total == 0 {
		return nil
	}
	first := ""
	if rep.Results != nil {
		for r := range rep.Results {
			if r.Error != "" && r.Error != evalreport.NothingToCheck {
				first = fmt.Sprintf("; the first, %s on %s: %s", r.Model, r.Item, r.Error)
				break
			}
		}
	}
	also := ""
	if unchecked > 0 {
		also = fmt.Sprintf(", and %d had nothing to check", unchecked)
	}
	try := "run the same command again to retry them; answers already stored are not paid for again"
	if strings.Contains(first, score.ErrNoJudge.Error()) {
		// Read from standard input, the dataset could not be checked for
		// judge assertions before the run: a rerun alone fails alike.
		try = "--judge MODEL (a model that grades the answers), and the same command again; answers already stored are not paid for again"
	}
	return fmt.Errorf("%d results ended in error (%s)%s%s. Try: %s",
		total, strings.Join(per, ", "), also, strings.TrimRight(first, "."), try)
}

// checkJudgeGiven refuses, before anything is sent, judge assertions with
// no --judge to grade them: each such answer would be paid for and then
// fail to be scored. A dataset read from standard input cannot be looked
// at twice, nor can a FIFO; their judge items end in error, and the run
// with exit 1.
func checkJudgeGiven(o *EvalOptions, cfg eval.Options) error {
	const try = "Try: --judge MODEL (such as --judge openai:gpt-4o-mini), or other assertions"
	if o.Judge != "" {
		return nil
	}
	if typ, _, _ := dataset.SplitAssertFlag(o.Assert); score.IsJudge(typ) {
		return cmdutil.UsageError("--assert %s needs a grading model, and --judge is not set. %s", o.Assert, try)
	}
	if dataset.IsStream(o.Dataset) {
		return nil
	}
	file, err := o.openDataset()
	if err != nil {
		return err
	}
	defer file.Close()
	line, id, err := eval.FirstJudgeItem(file, cfg.Read, o.Limit)
	if err != nil {
		return err
	}
	where := fmt.Sprintf("%s:%d", o.Dataset, line)
	if promptfoo.IsFile(o.Dataset) {
		// A promptfoo file's items are made from it, a line of it each
		// only for a test file's rows: the item's id names it in either.
		where = fmt.Sprintf("%s: item %s", o.Dataset, textsafe.Line(id))
	}
	if line > 0 {
		return cmdutil.UsageError("%s has a judge assertion, which needs a grading model, and --judge is not set. %s", where, try)
	}
	return nil
}

// surveyDataset reads a dataset file before anything is sent: a dataset
// none of whose items has anything to check is refused (exit 2), and the
// lines are counted for the progress bar's total, in results (items ×
// models × repeats; 0 when unknown, on standard input). Standard input and
// a FIFO cannot be read twice: there the run refuses it itself, having sent
// nothing, since such items are never sent.
func surveyDataset(ctx context.Context, o *EvalOptions, cfg eval.Options) (int, error) {
	if dataset.IsStream(o.Dataset) {
		return 0, nil
	}
	file, err := o.openDataset()
	if err != nil {
		return 0, err
	}
	ok, err := eval.AnyCheckable(ctx, file, cfg.Read, o.Limit, cfg.Scorer)
	file.Close()
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, cmdutil.AsUsage(fmt.Errorf("%s: %w", o.Dataset, eval.ErrNothingToCheck))
	}
	if o.Globals.Quiet || !o.IO.IsStderrTTY() {
		return 0, nil // no bar to count for
	}
	if file, err = o.openDataset(); err != nil {
		return 0, err
	}
	defer file.Close()
	lines, err := eval.CountLines(file)
	if err != nil {
		return 0, err
	}
	if o.Limit > 0 {
		lines = min(lines, o.Limit)
	}
	return lines * len(cfg.Models) * max(1, o.Repeat), nil
}

// openDataset opens the dataset file for reading. A promptfoo config is
// not read again: its items are those config read, from the files checked
// then, and protected from the run's outputs.
func (o *EvalOptions) openDataset() (io.ReadCloser, error) {
	if o.promptfoo != nil {
		return io.NopCloser(bytes.NewReader(o.promptfoo.JSONL())), nil
	}
	file, err := promptfoo.Open(o.Dataset)
	if err != nil {
		return nil, cmdutil.AsUsage(err)
	}
	return file, nil
}

// countedProgress is a bar whose total was counted before the run: the
// items the run finds do not add to it.
type countedProgress struct{ bar *iostreams.Progress }

func (p countedProgress) Done(n int) { p.bar.Done(n) }
func (p countedProgress) Spent(tokens int, costUSD float64, retries int64) {
	p.bar.Spent(tokens, costUSD, retries)
}

// checkEvalOutputs refuses, before anything is sent, reports that would
// overwrite the database, an input, or one another (the step summary too,
// when this run appends to it).
func checkEvalOutputs(o *EvalOptions, stepSummary bool, inputs []cmdutil.NamedPath) error {
	outputs := []cmdutil.NamedPath{{Flag: "-o", Path: o.Output}, {Flag: "--junit", Path: o.JUnit}, {Flag: "--html", Path: o.HTML}}
	if stepSummary {
		outputs = append(outputs, cmdutil.NamedPath{Flag: "$GITHUB_STEP_SUMMARY", Path: o.Getenv("GITHUB_STEP_SUMMARY")})
	}
	return cmdutil.CheckOutputs(outputs, o.DBFile(), inputs)
}

// sendsAway reports whether a run's prompts leave the machine: the offline
// model runs in this process.
func sendsAway(models []provider.Spec, judge string) bool {
	for _, m := range models {
		if m.Provider != provider.Offline {
			return true
		}
	}
	j, err := provider.ParseSpec(judge)
	return judge != "" && (err != nil || j.Provider != provider.Offline)
}

// gateError fails the run, exit 3, when a model is below its
// --min-accuracy or --min, or when --min names a metric the run does not
// have (a misspelt gate must not pass silently).
func gateError(rep *evalreport.Eval, gates eval.Gates, flag string) error {
	var below []string
	for _, m := range rep.Models {
		if m.BelowGate {
			below = append(below, fmt.Sprintf("%s %.1f%% < %.1f%%", m.Model, 100*m.Accuracy, 100**m.MinAccuracy))
		}
		for _, ms := range m.Metrics {
			if ms.Below {
				below = append(below, fmt.Sprintf("%s %s %.1f%% < %.1f%%", m.Model, ms.Name, 100*ms.PassRate, 100**ms.Min))
			}
		}
	}
	metrics := rep.MetricNames()
	if metrics == nil {
		metrics = []string{dataset.DefaultMetric}
	}
	var missing []string
	for g := range gates {
		if !slices.Contains(metrics, g.Metric) && !slices.Contains(missing, g.Metric) {
			missing = append(missing, g.Metric)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		below = append(below, fmt.Sprintf("no metric %s in this run (it has %s)", strings.Join(missing, ", "), strings.Join(metrics, ", ")))
	}
	if len(below) == 0 {
		return nil
	}
	return &cmdutil.ExitError{Code: cmdutil.ExitGate, Err: fmt.Errorf("below %s: %s", flag, strings.Join(below, ", "))}
}

// writeEvalReports writes the report in every form asked for: the main
// format, JUnit, HTML, and, for a run just made, the GitHub step summary
// when there is one.
func writeEvalReports(o *EvalOptions, rep *evalreport.Eval, stepSummary bool) error {
	if err := writeEachEvalReport(o, rep, stepSummary); err != nil {
		return err
	}
	if rep.ResultsErr != nil {
		return rep.ResultsErr() // a report cut short by the store must not pass for whole
	}
	return nil
}

func writeEachEvalReport(o *EvalOptions, rep *evalreport.Eval, stepSummary bool) error {
	format := o.Format
	if format == "" {
		format = "json"
		if o.IO.IsStdoutTTY() && (o.Output == "" || o.Output == "-") {
			format = "table"
		}
	}
	r, err := evalreport.ForEvalFormat(format)
	if err != nil {
		return err
	}
	if err := cmdutil.WriteFile(o.Output, o.IO.Out, func(w io.Writer) error { return r.WriteEval(w, rep) }); err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := cmdutil.WriteFile(o.JUnit, nil, func(w io.Writer) error { return evalreport.WriteJUnit(w, rep) }); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		if err := cmdutil.WriteFile(o.HTML, nil, func(w io.Writer) error { return evalreport.WriteHTML(w, rep) }); err != nil {
			return err
		}
	}
	if path := o.Getenv("GITHUB_STEP_SUMMARY"); path != "" && stepSummary {
		var b bytes.Buffer
		md, _ := evalreport.ForEvalFormat("markdown")
		if err := md.WriteEval(&b, rep); err != nil {
			return err
		}
		return cmdutil.AppendFile(path, b.Bytes())
	}
	return nil
}

// checkDryRunOutputs refuses what a dry run cannot write: it has counts,
// not results, so no CSV, Markdown, JUnit or HTML report. Writing nothing
// where they were asked for would leave a former run's files to be read
// as this one's.
func checkDryRunOutputs(o *EvalOptions) error {
	if !o.DryRun {
		return nil
	}
	switch {
	case o.Format != "" && o.Format != "table" && o.Format != "json" && o.Format != "jsonl":
		return cmdutil.UsageError("--dry-run writes its estimate as table or json, not %s. Try: -f json, or leave out --dry-run", o.Format)
	case o.JUnit != "":
		return cmdutil.UsageError("--dry-run has no results for --junit. Try: leave out --junit, or --dry-run")
	case o.HTML != "":
		return cmdutil.UsageError("--dry-run has no results for --html. Try: leave out --html, or --dry-run")
	}
	return nil
}

func writeEvalEstimate(o *EvalOptions, out *eval.RunStats) error {
	toTerminal := o.IO.IsStdoutTTY() && (o.Output == "" || o.Output == "-")
	return cmdutil.WriteFile(o.Output, o.IO.Out, func(w io.Writer) error {
		if o.Format == "json" || o.Format == "jsonl" || o.Format == "" && !toTerminal {
			return json.NewEncoder(w).Encode(struct {
				DryRun bool            `json:"dry_run"`
				Items  int             `json:"items"`
				Models []eval.Estimate `json:"models"`
			}{true, out.Items, out.Estimate})
		}
		return writeEstimateLines(w, out)
	})
}

// writeEstimateLines is a dry run's estimate as lines of text, one per
// model and one for the judge.
func writeEstimateLines(w io.Writer, out *eval.RunStats) error {
	for _, e := range out.Estimate {
		if e.Judge {
			e.Model = "judge " + e.Model
		}
		cost := "cost unknown: digest has no price for it (Try: --model-config with its price)"
		if e.CostUSD != nil {
			cost = fmt.Sprintf("at most $%.4f", *e.CostUSD)
		}
		if _, err := fmt.Fprintf(w, "dry run: %s: %d requests (%d cached), %d input tokens, at most %d output tokens, %s\n",
			e.Model, e.Requests, e.Cached, e.InputTokens, e.MaxOutputTokens, cost); err != nil {
			return err
		}
	}
	return nil
}

// judge is the grading model, built from the same flags as the evaluated
// models: the same limits, models file, mode and rules. --base-url is for
// the evaluated models: the judge is served from its provider's variable
// or default. o.config has read the flags.
func judge(ctx context.Context, o *EvalOptions) (*target.Target, error) {
	spec, err := provider.ParseSpec(o.Judge)
	if err != nil {
		return nil, cmdutil.AsUsage(fmt.Errorf("--judge: %w", err))
	}
	f := o.flags
	f.BaseURL = ""
	t, err := o.target(spec, f)
	if err != nil {
		return nil, err
	}
	if o.MaxCost > 0 && t.PriceUnknown {
		return nil, cmdutil.UsageError("--max-cost needs the price of the judge %s, which digest does not know. Try: --model-config with its price", spec)
	}
	if err := o.connect(ctx, &t, f); err != nil {
		return nil, err
	}
	return &t, nil
}

// noteRetired warns, before anything is sent, of models the providers
// have retired or will retire, naming what to run instead.
func noteRetired(infof func(string, ...any), specs []provider.Spec) {
	for _, spec := range specs {
		if w := models.Retirement(spec, time.Now()); w != "" {
			infof("digest: %s", w)
		}
	}
}

// noteNotSent says once per model, before anything is sent, which of the
// flags asked for its API does not take (its rules leave them out), so
// that a comparison across models still runs and nobody reads a model's
// default as the value asked for.
func noteNotSent(infof func(string, ...any), ms []target.Target, asked provider.Request) {
	for _, m := range ms {
		if _, flags := m.Rules.Apply(asked); len(flags) > 0 {
			infof("digest: %s takes no %s; sent without it", m.Spec, strings.Join(flags, " or "))
		}
	}
}
