package cmd

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/digest-cli/digest/internal/approxidate"
	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/forgeapi"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/summarize"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/textsafe"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// SummarizeOptions are the summarize command's flags and arguments.
type SummarizeOptions struct {
	runDeps

	Effort        string // --reasoning-effort
	Repos         []string
	Pathspec      []string
	Revs          []string
	All           bool
	Since         string
	Until         string
	MaxCommits    int
	IncludeMerges bool
	Renames       bool
	MaxDiffTokens int
	Tokenizer     string
	RepoID        string
	Concurrency   int
	Model         string
	Format        string
	GroupBy       string
	Template      string
	Output        string
	StepSummary   bool
	Highlights    bool

	// Release notes as projects publish them.
	FirstParent   bool
	EntryText     string
	Tag           string
	Bump          string
	BumpedVersion bool
	Prepend       string
	TagPattern    string
	IgnoreTags    string
	SkipTags      string
	ExcludeAuthor string
	NoForge       bool
	ForgeAPI      string

	// TemplateTimeout and TemplateMaxBytes bound a run of the template.
	TemplateTimeout  time.Duration
	TemplateMaxBytes cmdutil.Size

	BaseURL     string
	RPM, TPM    int
	Timeout     time.Duration
	BatchSize   int
	BatchWindow time.Duration
	DryRun      bool
	MaxCost     float64
	Price       string
	ModelConfig string
	Lease       time.Duration
	NoRedact    bool
	Stops       cmdutil.Stops
	Batch       batchFlags

	flags targetFlags // what the model is built from, once read
}

// NewSummarizeCmd builds `digest summarize`. runF replaces the run in tests
// of flag parsing.
func NewSummarizeCmd(f *cmdutil.Factory, runF func(context.Context, *SummarizeOptions) error) *cobra.Command {
	opts := &SummarizeOptions{runDeps: newRunDeps(f)}
	cmd := &cobra.Command{
		Use:   "summarize [PATH ...] [-- PATHSPEC ...]",
		Short: "Summarize the commits of git repositories into a changelog",
		Long: `Summarize each commit of the repositories at PATH (default: the current
directory) with an LLM and print a changelog.

Commits are walked like "git log --no-merges" from HEAD. Each commit's diff
against its first parent leaves out lockfiles, vendored, generated and binary
files (naming them) and is cut to --max-diff-tokens tokens. A summary is
stored under the repository's id (the hash of its root commit, the same for
every clone), the commit, the model and the prompt version: a commit already
summarized is never sent again. Paths after "--" limit the walk and the diff
to those files and directories, as git takes them: relative to the directory
digest runs in when that lies in the repository's work tree (":/PATH" for the
root's), else to the repository's root.

The default model, offline, needs no key and no network: it writes an
extractive summary from the commit message and the diff.`,
		Example: cmdutil.Example(
			"digest summarize",
			"digest summarize ~/src/api ~/src/web --since '2 weeks ago'",
			"digest summarize --rev v1.2.0..v1.3.0 -o CHANGELOG.md",
			"digest summarize --rev origin/main..HEAD --step-summary   # in CI",
			"digest summarize --format jsonl | jq -r .summary",
			"digest summarize -- internal/engine 'docs/*.md'   # from where you are, as git"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Repos, opts.Pathspec = args, nil
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				opts.Repos, opts.Pathspec = args[:dash], args[dash:]
			}
			if len(opts.Repos) == 0 {
				opts.Repos = []string{"."}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSummarize(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Revs, "rev", nil, "commits to summarize, as git rev-list reads revisions: REV, A..B, A...B, ^REV, X^!, main@{1}, @{u}, :/text (repeatable; default HEAD)")
	fl.BoolVar(&opts.All, "all", false, "walk every branch, tag and remote branch instead of HEAD")
	fl.StringVar(&opts.Since, "since", "", "only commits committed after this date (2026-01-31, \"2 weeks ago\", 72h)")
	fl.StringVar(&opts.Until, "until", "", "only commits committed before this date")
	fl.IntVarP(&opts.MaxCommits, "max-commits", "n", 0, "stop after this many commits per repository (0: no limit)")
	fl.BoolVar(&opts.IncludeMerges, "include-merges", false, "summarize merge commits too (diffed against their first parent)")
	fl.BoolVar(&opts.FirstParent, "first-parent", false, "one entry per change as it was merged: follow first parents only, as git log --first-parent, each merge summarized from its diff against its first parent and titled by its pull request")
	fl.StringVar(&opts.TagPattern, "tag-pattern", summarize.DefaultTagPattern, "tags that make sections: those this regular expression matches (\"\" or .: every tag)")
	fl.StringVar(&opts.IgnoreTags, "ignore-tags", "", "tags that make no section: their commits go to the next release (regular expression)")
	fl.StringVar(&opts.SkipTags, "skip-tags", "", "releases left out with their commits (regular expression)")
	fl.StringVar(&opts.Tag, "tag", "", "name the commits no tag holds yet as this release (vX.Y.Z) instead of Unreleased")
	fl.StringVar(&opts.Bump, "bump", "", "name the commits no tag holds yet by the next version, and say it on standard error: auto (the default of a bare --bump) counts it from the kinds of change since the last tag (breaking: major, feat: minor, else patch; in 0.x: breaking: minor, else patch); major, minor or patch raise the last tag so")
	fl.Lookup("bump").NoOptDefVal = summarize.BumpAuto
	fl.BoolVar(&opts.BumpedVersion, "bumped-version", false, "print the next version (see --bump) on standard output instead of the changelog")
	fl.StringVar(&opts.Prepend, "prepend", "", "write the new sections above those of this changelog file, keeping the rest of it byte for byte")
	fl.StringVar(&opts.ExcludeAuthor, "exclude-author", "", "leave out the commits of authors this regular expression matches, as \"Name <email>\" or login (dependabot, \\[bot\\]): neither summarized nor listed")
	fl.BoolVar(&opts.NoForge, "no-forge", false, "never ask the forge's API, even with GITHUB_TOKEN, GH_TOKEN, GITLAB_TOKEN or CI_JOB_TOKEN set")
	fl.StringVar(&opts.ForgeAPI, "forge-api", "", "base URL of the forge's API (default: from the origin remote; $GITHUB_API_URL for GitHub when set)")
	fl.StringVar(&opts.EntryText, "entry-text", "", "what an entry says: title (the subject or pull request's title) or summary (digest's); default: the template's own (github: title, else summary)")
	fl.BoolVar(&opts.Renames, "renames", false, "detect renamed files instead of showing a deletion and an addition")
	fl.IntVar(&opts.MaxDiffTokens, "max-diff-tokens", 4000, "cut each commit's diff to this many tokens")
	fl.StringVar(&opts.Tokenizer, "tokenizer", tokenizer.Default, "vocabulary that counts tokens: "+strings.Join(tokenizer.Names, ", "))
	fl.StringVar(&opts.RepoID, "repo-id", "", "cache the repository under this id instead of its root commit's")
	fl.IntVarP(&opts.Concurrency, "concurrency", "j", 4, "requests in flight at once")
	fl.StringVarP(&opts.Model, "model", "m", provider.Offline, "model as PROVIDER:MODEL, or offline for the built-in summarizer")
	fl.StringVarP(&opts.Format, "format", "f", "markdown", "output format: "+strings.Join(changelog.Formats, ", "))
	fl.StringVar(&opts.GroupBy, "group-by", changelog.GroupByType, "how the Markdown groups each version's commits: "+strings.Join(changelog.GroupBys, ", "))
	fl.StringVar(&opts.Template, "template", "", "write the changelog in a built-in layout (github, keepachangelog, default) or through this Go text/template file instead of --format (see digest help release-notes)")
	fl.DurationVar(&opts.TemplateTimeout, "template-timeout", changelog.DefaultTemplateLimits.Timeout, "stop a --template that runs longer than this, its output's waits on the reader not counted (0: no limit)")
	opts.TemplateMaxBytes = cmdutil.Size(changelog.DefaultTemplateLimits.MaxBytes)
	fl.Var(&opts.TemplateMaxBytes, "template-max-bytes", "stop a --template that writes more than this: 64MiB, 1GiB, 1048576 (0: no limit)")
	fl.StringVarP(&opts.Output, "output", "o", "", "write the output to this file instead of standard output")
	fl.BoolVar(&opts.StepSummary, "step-summary", false, "also append the Markdown changelog to $GITHUB_STEP_SUMMARY")
	fl.BoolVar(&opts.Highlights, "highlights", false, "add 3-6 bullets the model writes about each version of 3 commits or more (one more request each, cached)")
	fl.StringVar(&opts.BaseURL, "base-url", "", "endpoint of the model's server, for OpenAI-compatible servers (vLLM, LM Studio) and proxies")
	fl.IntVar(&opts.RPM, "rpm", 0, "requests per minute the model allows (0: the built-in figure, else learned from the provider)")
	fl.IntVar(&opts.TPM, "tpm", 0, "tokens per minute the model allows (0: the built-in figure, else learned from the provider)")
	fl.DurationVar(&opts.Timeout, "timeout", 2*time.Minute, "give up on one attempt after this long (it is retried; 0: never)")
	fl.IntVar(&opts.BatchSize, "batch-size", 8, "commits per request at most (1: one commit per request)")
	fl.DurationVar(&opts.BatchWindow, "batch-window", 2*time.Second, "wait at most this long for a batch to fill")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "count the requests, tokens and cost a run would send, and send nothing")
	fl.Float64Var(&opts.MaxCost, "max-cost", 0, "stop sending before the run could cost more than this many US dollars (0: no limit)")
	addEffortFlag(fl, &opts.Effort)
	fl.StringVar(&opts.Price, "price", "", "the model's price as INPUT/OUTPUT[/CACHED_INPUT[/CACHE_WRITE]] dollars per million tokens, over the built-in table")
	fl.StringVar(&opts.ModelConfig, "model-config", "", "JSON file of per-model rpm, tpm and price, over the built-in table")
	fl.BoolVar(&opts.NoRedact, "no-redact", false, "send diffs and messages as they are, without replacing the secrets found in them")
	fl.DurationVar(&opts.Lease, "lease", summarize.DefaultLease, "how long another digest waits for a commit this one claimed, should this one die")
	opts.Stops.AddFlags(fl)
	opts.Batch.addFlags(fl)
	cmdutil.DocumentEnv(fl)
	return cmd
}

// config turns the options into a pipeline configuration, or a usage error.
func (o *SummarizeOptions) config(now time.Time) (summarize.Options, changelog.Reporter, error) {
	var cfg summarize.Options
	if err := cmdutil.FirstError(
		cmdutil.NotNegative("max-commits", o.MaxCommits, "no limit"),
		cmdutil.AtLeastOne("max-diff-tokens", o.MaxDiffTokens),
		cmdutil.AtLeastOne("concurrency", o.Concurrency),
		cmdutil.AtLeastOne("batch-size", o.BatchSize),
		cmdutil.NotNegativeDuration("batch-window", o.BatchWindow, "no wait (each commit sent alone)"),
		cmdutil.NotNegative("rpm", o.RPM, "the model's known or learned limit"),
		cmdutil.NotNegative("tpm", o.TPM, "the model's known or learned limit"),
		cmdutil.NotNegativeDuration("timeout", o.Timeout, "no timeout"),
		cmdutil.NotNegativeFloat("max-cost", o.MaxCost, "no limit"),
		cmdutil.PositiveDuration("lease", o.Lease),
		cmdutil.NotNegativeDuration("template-timeout", o.TemplateTimeout, "no limit"),
	); err != nil {
		return cfg, nil, err
	}
	switch {
	case o.All && len(o.Revs) > 0:
		return cfg, nil, cmdutil.UsageError("--all and --rev cannot be combined. Try: one of them")
	case o.RepoID != "" && len(o.Repos) > 1:
		return cfg, nil, cmdutil.UsageError("--repo-id names one repository, but %d were given. Try: one PATH per run with --repo-id", len(o.Repos))
	case o.StepSummary && o.Getenv("GITHUB_STEP_SUMMARY") == "":
		return cfg, nil, cmdutil.UsageError("--step-summary needs GITHUB_STEP_SUMMARY, which is not set. Try: run it as a GitHub Actions step, or drop --step-summary")
	case o.Bump != "" && !slices.Contains(summarize.BumpLevels, o.Bump):
		return cfg, nil, cmdutil.UsageError("--bump=%s: want one of %s", o.Bump, strings.Join(summarize.BumpLevels, ", "))
	case o.Tag != "" && o.Bump != "":
		return cfg, nil, cmdutil.UsageError("--tag names the next release, and --bump counts its name: they cannot be combined. Try: one of them")
	case o.Tag != "" && o.BumpedVersion:
		return cfg, nil, cmdutil.UsageError("--bumped-version prints the next version digest counts, and --tag names it already. Try: one of them")
	case o.BumpedVersion && (o.Prepend != "" || o.Template != ""):
		return cfg, nil, cmdutil.UsageError("--bumped-version prints the next version, not a changelog: --prepend and --template write none. Try: --bump with them, which names the new section and says the version on standard error")
	case o.Prepend != "" && o.Output != "" && filepath.Clean(o.Output) != filepath.Clean(o.Prepend):
		return cfg, nil, cmdutil.UsageError("--prepend writes into %s, and -o names another file, %s. Try: one of them", o.Prepend, o.Output)
	case o.Prepend != "" && len(o.Repos) > 1:
		return cfg, nil, cmdutil.UsageError("--prepend adds one repository's sections to its changelog, but %d repositories were given. Try: one PATH per run with --prepend", len(o.Repos))
	case o.Prepend != "" && o.Format != "markdown" && o.Format != "md":
		return cfg, nil, cmdutil.UsageError("--prepend adds sections to a Markdown changelog, not to --format %s. Try: --format markdown, or a --template", o.Format)
	case o.BumpedVersion && o.DryRun:
		return cfg, nil, cmdutil.UsageError("--bumped-version reads the kinds of change from the summaries, which --dry-run does not write. Try: one of them")
	case o.EntryText != "" && !slices.Contains(changelog.EntryTexts, o.EntryText):
		return cfg, nil, cmdutil.UsageError("--entry-text %q: want one of %s", o.EntryText, strings.Join(changelog.EntryTexts, ", "))
	}
	release, err := o.release()
	if err != nil {
		return cfg, nil, err
	}
	reporter, err := o.reporter()
	if err != nil {
		return cfg, nil, err
	}
	spec, err := provider.ParseSpec(o.Model)
	if err != nil {
		return cfg, nil, cmdutil.AsUsage(err)
	}
	// Where each path leads is known only in each repository (from the
	// directory digest runs in, as git takes them); their form is checked now.
	if err := history.CheckPathspec(o.Pathspec); err != nil {
		return cfg, nil, cmdutil.AsUsage(err)
	}
	walk := history.WalkOptions{Revs: o.Revs, Now: now, All: o.All, MaxCommits: o.MaxCommits, IncludeMerges: o.IncludeMerges, FirstParent: o.FirstParent}
	for _, d := range []struct {
		flag, value string
		into        *time.Time
		endOfDay    bool
	}{{"--since", o.Since, &walk.Since, false}, {"--until", o.Until, &walk.Until, true}} {
		if d.value == "" {
			continue
		}
		t, form, err := approxidate.Parse(d.value, now)
		if err != nil {
			return cfg, nil, cmdutil.AsUsage(fmt.Errorf("%s: %w", d.flag, err))
		}
		if d.endOfDay && form == approxidate.DayOnly {
			t = t.AddDate(0, 0, 1).Add(-time.Nanosecond)
		}
		*d.into = t
	}
	var file models.File
	if o.ModelConfig != "" {
		if file, err = models.LoadFile(o.ModelConfig); err != nil {
			return cfg, nil, cmdutil.AsUsage(err)
		}
	}
	maxWait, maxFailures, err := o.Stops.Engine()
	if err != nil {
		return cfg, nil, err
	}
	mode, err := o.Batch.mode()
	if err != nil {
		return cfg, nil, err
	}
	o.flags = targetFlags{BaseURL: o.BaseURL, RPM: o.RPM, TPM: o.TPM, Price: o.Price, File: file, Mode: mode,
		DryRun: o.DryRun, Concurrency: o.Concurrency}
	model, err := o.target(spec, o.flags)
	if err != nil {
		return cfg, nil, err
	}
	if err := checkEffort(o.Effort); err != nil {
		return cfg, nil, err
	}
	workDir, _ := os.Getwd() // "" leaves pathspecs relative to each root
	cfg = summarize.Options{
		PathArgs: o.Pathspec, WorkDir: workDir,
		MaxWait: maxWait, MaxFailures: maxFailures,
		Repos: o.Repos, Walk: walk, RepoID: o.RepoID, Renames: o.Renames,
		MaxDiffTokens: o.MaxDiffTokens, Concurrency: o.Concurrency, Target: model,
		BatchSize: o.BatchSize, BatchWindow: o.BatchWindow,
		Timeout: o.Timeout, MaxCost: o.MaxCost, DryRun: o.DryRun, Lease: o.Lease,
		Highlights: o.Highlights, Batch: mode, ReasoningEffort: o.Effort, Release: release,
	}
	if model.PriceUnknown && o.MaxCost > 0 {
		return cfg, nil, cmdutil.UsageError("--max-cost needs the price of %s, which digest does not know. Try: --price INPUT/OUTPUT (dollars per million tokens)", spec)
	}
	return cfg, reporter, nil
}

func runSummarize(ctx context.Context, o *SummarizeOptions) error {
	started := time.Now()
	cfg, reporter, err := o.config(started)
	if err != nil {
		return err
	}
	if err := checkTemplate(ctx, o.Logger(), reporter); err != nil {
		return err
	}
	// Find out before the run, not after paying for it.
	outputs := []cmdutil.NamedPath{{Flag: "-o", Path: o.Output}, {Flag: "--prepend", Path: o.Prepend}}
	if o.StepSummary {
		outputs = append(outputs, cmdutil.NamedPath{Flag: "$GITHUB_STEP_SUMMARY", Path: o.Getenv("GITHUB_STEP_SUMMARY")})
	}
	if err := cmdutil.CheckOutputs(outputs, o.DBFile(), []cmdutil.NamedPath{{Flag: "--model-config", Path: o.ModelConfig}, {Flag: "--template", Path: o.templateFile()}}); err != nil {
		return err
	}
	if cfg.Tokenizer, err = tokenizer.New(o.Tokenizer); err != nil {
		return cmdutil.AsUsage(fmt.Errorf("--tokenizer: %w", err))
	}
	// A dry run calls nobody, so it needs no key, and it creates no
	// database: it reads the cache only if there is one.
	cfg.Secrets = secrets(o.Getenv)
	if !o.DryRun {
		// The offline model runs in this process: nothing leaves the machine.
		if cfg.Target.Spec.Provider != provider.Offline && !o.NoRedact {
			if cfg.Redactor, err = redact.New(); err != nil {
				return err
			}
		}
	}
	o.flags.Tokenizer = cfg.Tokenizer
	if err := o.connect(ctx, &cfg.Target, o.flags); err != nil {
		return err
	}
	if cfg.Store, err = o.OpenStore(ctx, o.DryRun); err != nil {
		return err
	}
	if cfg.Store != nil {
		defer cfg.Store.Close()
	}
	cfg.Log = o.Logger()
	if !o.NoForge && !o.DryRun {
		cfg.Release.Forge = o.forgeClient(cfg.Store, cfg.Log, cfg.MaxWait)
	}
	if err := learnFactors(ctx, cfg.Store, []*target.Target{&cfg.Target}); err != nil {
		return err
	}
	defer saveFactors(context.WithoutCancel(ctx), cfg.Store, []*target.Target{&cfg.Target}, cfg.Log)
	noteRetired(o.Infof, []provider.Spec{cfg.Target.Spec}) // once everything is checked
	noteNotSent(o.Infof, []target.Target{cfg.Target}, provider.Request{ReasoningEffort: o.Effort})
	bar := o.IO.NewProgress("summarizing", !o.Globals.Quiet)
	cfg.Progress = bar
	cfg.Batch.OnLook = showBatches(o.runDeps, bar)

	res, err := summarize.Run(ctx, cfg)
	bar.Finish()
	if res != nil {
		for _, e := range res.Empty {
			if e.Other == "" {
				o.Infof("digest: %s has no commits; nothing to summarize", e.Path)
				continue
			}
			o.Infof("digest: %s: HEAD is on branch %s, which has no commits yet; nothing to summarize. Try: --rev %s, or --all",
				e.Path, textsafe.Line(e.Branch), textsafe.Line(e.Other))
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) && res != nil && cfg.Store == nil {
			return cmdutil.Interrupted("interrupted") // a dry run stores nothing
		}
		if errors.Is(err, context.Canceled) && res != nil {
			return cmdutil.Interrupted(fmt.Sprintf("interrupted after %d new summaries, stored in %s; run the same command again to continue",
				res.Changelog.Stats.Summarized, cfg.Store.Path()))
		}
		if res != nil && res.Changelog.Stats.Summarized > 0 {
			return fmt.Errorf("%w (%d new summaries were stored before it)", err, res.Changelog.Stats.Summarized)
		}
		return err
	}
	if len(res.Unusable) == len(o.Repos) {
		// An empty changelog would replace -o's file and read as complete.
		listUnusable(o, res)
		return fmt.Errorf("none of the %d repositories could be summarized (named above); nothing was written. Try: fix those paths, and run again", len(o.Repos))
	}
	if res.Estimate != nil {
		if err := writeEstimate(o, res); err != nil {
			return err
		}
		return unusableError(o, res)
	}
	if res.Pending > 0 {
		// A changelog without them would read as complete.
		o.Infof("%s", pendingNote(res.Pending, "commits"))
		if res.NotSent > 0 {
			return fmt.Errorf("stopped before --max-cost $%g: %d commits left unsent. Try: a higher --max-cost, and run again to continue", o.MaxCost, res.NotSent)
		}
		return unusableError(o, res)
	}

	if o.Bump != "" || o.BumpedVersion {
		for _, b := range res.Bumped {
			o.Infof("digest: %s", bumpNote(b))
		}
	}
	if res.ForgeAsked+res.ForgeCached > 0 {
		o.Infof("digest: forge: %d commits looked up, %d answers from the cache", res.ForgeAsked, res.ForgeCached)
	}
	if res.Excluded > 0 {
		o.Infof("digest: %d commits by authors --exclude-author matches were left out", res.Excluded)
	}
	if o.BumpedVersion {
		if err := writeBumped(o, res.Bumped); err != nil {
			return err
		}
	} else if err := writeChangelog(ctx, o, reporter, &res.Changelog); err != nil {
		return err
	}
	if o.StepSummary {
		if err := appendStepSummary(o.Getenv("GITHUB_STEP_SUMMARY"), o.GroupBy, &res.Changelog); err != nil {
			return err
		}
	}
	s := res.Changelog.Stats
	o.Infof("digest: %d commits seen, %d cached, %d summarized, %d failed, %d files skipped, %d tokens in, %d out, $%.4f, %d requests, %d retries, %s",
		s.Commits, s.Cached, s.Summarized, s.Failed, s.SkippedFiles, s.InputTokens, s.OutputTokens, s.CostUSD,
		res.Engine.Requests, res.Engine.Retries, time.Since(started).Round(time.Millisecond))
	if o.Highlights {
		o.Infof("digest: highlights: %d requests sent, %d answers from the cache; %d sections have highlights", res.HighlightsWritten, res.HighlightsStored, len(res.Changelog.Highlights))
	}
	if n := res.Redacted.Total(); n > 0 {
		o.Infof("digest: %d secrets replaced by markers before sending (%s); --no-redact sends them as they are", n, res.Redacted)
	}
	for _, fl := range res.Failures {
		fmt.Fprintf(o.IO.ErrOut, "digest: %s: commit %s: %s\n", textsafe.Line(fl.Repo), fl.Commit, textsafe.Line(fl.Err.Error()))
	}
	for _, fl := range res.HighlightFailures {
		fmt.Fprintf(o.IO.ErrOut, "digest: %s: highlights of %s: %s\n", textsafe.Line(fl.Repo), textsafe.Line(cmp.Or(fl.Version, "Unreleased")), textsafe.Line(fl.Err.Error()))
	}
	unusable := unusableError(o, res)
	switch {
	case unusable != nil:
		return unusable
	case res.NotSent > 0:
		return fmt.Errorf("stopped before --max-cost $%g: %d commits summarized for $%.4f, %d left unsent, %d failed. Try: a higher --max-cost, and run again to continue",
			o.MaxCost, s.Summarized, s.CostUSD, res.NotSent, len(res.Failures))
	case len(res.Failures) > 0:
		return fmt.Errorf("%d of %d commits could not be summarized; the rest are stored. Try: run again to retry them", len(res.Failures), s.Commits)
	case res.HighlightsNotSent > 0:
		return fmt.Errorf("stopped before --max-cost $%g: highlights of %d of %d sections not asked for; the changelog is written without them ($%.4f spent). Try: a higher --max-cost, and run again to add them",
			o.MaxCost, res.HighlightsNotSent, res.HighlightSections, s.CostUSD)
	case len(res.HighlightFailures) > 0:
		return fmt.Errorf("highlights of %d of %d sections could not be written; the changelog is written without them. Try: run again to retry them",
			len(res.HighlightFailures), res.HighlightSections)
	}
	return nil
}

// unusableError names, one line each, the repositories a run set aside
// (not a repository, no such --rev), and fails the run for them, exit 1,
// once the others' changelog is written.
func unusableError(o *SummarizeOptions, res *summarize.Output) error {
	if len(res.Unusable) == 0 {
		return nil
	}
	listUnusable(o, res)
	return fmt.Errorf("%d of %d repositories could not be summarized (named above); the others' changelog is written. Try: fix or drop those paths, and run again",
		len(res.Unusable), len(o.Repos))
}

// listUnusable names each repository set aside, one line each, before the
// error that ends the run.
func listUnusable(o *SummarizeOptions, res *summarize.Output) {
	for _, u := range res.Unusable {
		fmt.Fprintf(o.IO.ErrOut, "digest: skipped %s: %s\n", textsafe.Line(u.Path), textsafe.Line(u.Err.Error()))
	}
}

// writeEstimate prints what a --dry-run counted: a sentence for people, or
// one JSON object with --format json or jsonl.
func writeEstimate(o *SummarizeOptions, res *summarize.Output) error {
	e := res.Estimate
	if o.Output != "" && o.Output != "-" {
		// -o names the changelog, which an estimate must not replace: a dry
		// run is the same command with --dry-run added.
		o.Infof("digest: --dry-run leaves %s as it is; the estimate is on standard output", textsafe.Line(o.Output))
	}
	if o.Format == "json" || o.Format == "jsonl" {
		doc := struct {
			DryRun bool   `json:"dry_run"`
			Model  string `json:"model"`
			Cached int    `json:"cached"`
			*summarize.Estimate
		}{true, res.Changelog.Model, res.Changelog.Stats.Cached, e}
		enc := json.NewEncoder(o.IO.Out)
		return enc.Encode(doc)
	}
	highlights := ""
	if o.Highlights {
		highlights = fmt.Sprintf(", the highlights of %d sections (%d stored),", e.Highlights, e.HighlightsStored)
	}
	_, err := fmt.Fprintf(o.IO.Out, "dry run: %d commits to summarize (%d cached)%s in %d requests to %s: %d input tokens, at most %d output tokens, at most $%.4f\n",
		e.Commits, res.Changelog.Stats.Cached, highlights, e.Requests, res.Changelog.Model, e.InputTokens, e.MaxOutputTokens, e.CostUSD)
	return err
}

// release reads the flags that shape the notes as releases.
func (o *SummarizeOptions) release() (summarize.Release, error) {
	// Only the layouts that show new contributors pay for reading every
	// author of the history: a template's, and the JSON document's.
	bumpAs := o.Bump
	if bumpAs == "" && o.BumpedVersion {
		bumpAs = summarize.BumpAuto
	}
	rel := summarize.Release{Tag: o.Tag, Bump: bumpAs,
		Contributors: o.Template != "" && o.Template != changelog.TemplateDefault && o.Template != changelog.TemplateKeepAChangelog || o.Format == "json"}
	pattern := o.TagPattern
	if pattern == "." {
		pattern = ""
	}
	var err error
	if rel.Tags, err = summarize.Tags(pattern, o.IgnoreTags); err != nil {
		return rel, cmdutil.UsageError("%v. Try: a regular expression as Go reads them (RE2), such as '^v[0-9]'", err)
	}
	if o.SkipTags != "" {
		skip, err := regexp.Compile(o.SkipTags)
		if err != nil {
			return rel, cmdutil.UsageError("--skip-tags: %v. Try: a regular expression as Go reads them (RE2), such as 'rc'", err)
		}
		rel.Skip = skip.MatchString
	}
	if o.ExcludeAuthor != "" {
		if rel.ExcludeAuthor, err = regexp.Compile(o.ExcludeAuthor); err != nil {
			return rel, cmdutil.UsageError("--exclude-author: %v. Try: a regular expression as Go reads them (RE2), such as 'dependabot|\\[bot\\]'", err)
		}
	}
	return rel, nil
}

// forgeClient gives the pipeline the client of a repository's forge API,
// when a token for that forge is set: logins, pull requests and labels
// the history cannot tell, each answer stored.
func (o *SummarizeOptions) forgeClient(st store.Store, log *slog.Logger, maxWait time.Duration) func(forge.Forge) (*forgeapi.Client, error) {
	return func(f forge.Forge) (*forgeapi.Client, error) {
		token, ok := forgeapi.TokenFor(f.Kind, o.Getenv)
		if !ok {
			return nil, nil
		}
		api := o.ForgeAPI
		if api == "" && f.Kind == forge.GitHub {
			api = o.Getenv("GITHUB_API_URL") // set by GitHub Actions, Enterprise Server's included
		}
		c, err := forgeapi.New(f, token, st, log, forgeapi.Options{APIURL: api, MaxWait: maxWait})
		if err != nil {
			return nil, cmdutil.AsUsage(err)
		}
		return c, nil
	}
}

// templateFile is --template when it names a file, not a built-in layout.
func (o *SummarizeOptions) templateFile() string {
	if _, builtin := changelog.BuiltinTemplate(o.Template); builtin {
		return ""
	}
	return o.Template
}

// bumpNote says what --bump counted.
func bumpNote(b summarize.Bumped) string {
	switch {
	case b.Last == "":
		return fmt.Sprintf("%s: next version %s, the first release", textsafe.Line(b.Repo), b.Next)
	case b.Level == "":
		return fmt.Sprintf("%s: next version %s: nothing changed since %s, so nothing to bump", textsafe.Line(b.Repo), b.Next, textsafe.Line(b.Last))
	}
	return fmt.Sprintf("%s: next version %s, a %s release after %s", textsafe.Line(b.Repo), b.Next, b.Level, textsafe.Line(b.Last))
}

// writeBumped prints --bumped-version's answer: the next version, or with
// several repositories one line each, its name first.
func writeBumped(o *SummarizeOptions, bumped []summarize.Bumped) error {
	return cmdutil.WriteFile(o.Output, o.IO.Out, func(w io.Writer) error {
		for _, b := range bumped {
			line := b.Next
			if len(bumped) > 1 {
				line = textsafe.Line(b.Repo) + " " + b.Next
			}
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
		}
		return nil
	})
}

// reporter is what writes the changelog: --template's, or --format's,
// Markdown grouped by --group-by.
func (o *SummarizeOptions) reporter() (changelog.Reporter, error) {
	if !slices.Contains(changelog.GroupBys, o.GroupBy) {
		return nil, cmdutil.UsageError("--group-by %q: want one of %s", o.GroupBy, strings.Join(changelog.GroupBys, ", "))
	}
	if o.Template != "" {
		if o.Format != "markdown" && o.Format != "md" {
			return nil, cmdutil.UsageError("--template and --format %s cannot be combined: the template is the format. Try: one of them", o.Format)
		}
		t, err := changelog.ParseTemplateOrBuiltin(o.Template)
		if err != nil {
			return nil, cmdutil.AsUsage(err)
		}
		limits := changelog.TemplateLimits{Timeout: o.TemplateTimeout, MaxBytes: int64(o.TemplateMaxBytes)}
		return changelog.Template{T: t, GroupBy: o.GroupBy, Limits: limits, EntryText: o.EntryText}, nil
	}
	reporter, err := changelog.ForFormat(o.Format)
	if err != nil {
		return nil, cmdutil.AsUsage(fmt.Errorf("--format: %w", err))
	}
	if _, ok := reporter.(changelog.Markdown); ok {
		reporter = changelog.Markdown{GroupBy: o.GroupBy, EntryText: o.EntryText}
	}
	return reporter, nil
}

// appendStepSummary adds the Markdown changelog to a GitHub Actions job summary.
func appendStepSummary(path, groupBy string, c *changelog.Changelog) error {
	var b bytes.Buffer
	if err := (changelog.Markdown{GroupBy: groupBy}).Write(&b, c); err != nil {
		return err
	}
	if err := cmdutil.AppendFile(path, append(b.Bytes(), '\n')); err != nil {
		return fmt.Errorf("--step-summary: %w", err)
	}
	return nil
}
