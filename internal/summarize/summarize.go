// Package summarize is the summarize pipeline: walk each repository, reuse
// what the store already holds, cut the diffs of the rest to the token
// budget, send them through the engine and commit each summary as it lands.
package summarize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/bump"
	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/forge"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/mailmap"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/spend"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// maxFileBytes leaves a blob out of the diff rather than diffing it whole:
// its diff alone would be cut to the budget many times over.
const maxFileBytes = 1 << 20

// Options configures a run.
type Options struct {
	Repos []string // repository paths
	Walk  history.WalkOptions
	// PathArgs are the pathspecs as given, and WorkDir the directory
	// digest runs in: in a repository whose work tree holds WorkDir, they
	// are taken from there, as git takes them, elsewhere from its root.
	// When set, they replace Walk.Paths.
	PathArgs      []string
	WorkDir       string
	RepoID        string // overrides the root-commit id; only with one repository
	Renames       bool
	MaxDiffTokens int
	Concurrency   int

	// Several commits share a request: up to BatchSize of them and about
	// BatchTokens tokens (0: half a minute's token limit, at most 32,000),
	// gathered for at most BatchWindow.
	BatchSize   int
	BatchTokens int
	BatchWindow time.Duration

	Timeout time.Duration // per attempt
	// MaxWait and MaxFailures stop a run against a provider that asks for
	// a longer wait, or fails that many requests in a row (engine's
	// defaults when zero; negative: never).
	MaxWait     time.Duration
	MaxFailures int
	// MaxCost stops sending once the worst case of what was spent and what
	// is in flight would pass it (US dollars; 0: no limit).
	MaxCost float64
	// DryRun prepares every request and counts it, without sending any or
	// writing to the store.
	DryRun bool
	// Owner names this process in the leases it takes on commits it is
	// summarizing; Lease is how long a lease lasts if its owner dies.
	Owner string
	Lease time.Duration
	// Redactor, when set, replaces the secrets in each commit's message and
	// diff before they are sent.
	Redactor *redact.Redactor
	// Secrets are scrubbed from each commit's message and diff before
	// they are sent, and from every answer, whatever the redactor found.
	Secrets redact.Secrets
	// Release shapes the notes as releases: which tags make sections,
	// the name of the next one, whose commits are left out.
	Release Release
	// Highlights asks the model, once the summaries are in, for 3 to 6
	// bullets about each version's changes (see highlights).
	Highlights bool
	// ReasoningEffort is --reasoning-effort, sent to a model that takes
	// it ("" for the model's default; Claude models that think by default
	// are told not to). It is no part of a summary's key: a commit's
	// summary is paid once, whatever effort wrote it.
	ReasoningEffort string

	// Target is the model the summaries and the highlights are asked of:
	// its limits, prices, rules, client and batch API.
	Target target.Target
	// Batch sends every request through the target's batch API instead of
	// one call each: half the price, answers within a day.
	Batch     batchrun.Mode
	Tokenizer *tokenizer.Tokenizer
	Store     store.Store
	Progress  Progress
	Log       *slog.Logger
}

// DefaultLease is how long other processes wait for a commit whose
// summarizing process died before they summarize it themselves.
const DefaultLease = lease.Default

// Progress hears how far a run has got. Commits are found as the walk goes,
// so the total grows while the first are already done.
type Progress interface {
	Found(n int)
	Done(n int)
	// Spent reports the run's tokens, cost and retries so far.
	Spent(tokens int, costUSD float64, retries int64)
}

type noProgress struct{}

func (noProgress) Found(int)                 {}
func (noProgress) Done(int)                  {}
func (noProgress) Spent(int, float64, int64) {}

// Failure is a commit that could not be summarized.
type Failure struct {
	Repo   string
	Commit string
	Err    error
}

// Empty is a repository whose HEAD has no commit: nothing to do.
type Empty struct {
	Path string
	// Other is a branch, tag or remote branch that holds commits all the
	// same, when HEAD is on an orphan branch ("" when none does); Branch is
	// that orphan branch.
	Branch, Other string
}

func emptyOf(r *history.Repo) Empty {
	branch, other, _ := r.Unborn()
	return Empty{Path: r.Path(), Branch: branch, Other: other}
}

// Unusable is a repository a run could not summarize.
type Unusable struct {
	Path string
	Err  error
}

// Output is what a run produced: the changelog, and the commits that failed.
type Output struct {
	Changelog changelog.Changelog
	Failures  []Failure
	Empty     []Empty // repositories whose HEAD has no commits
	// Unusable are the repositories that could not be summarized at all
	// (not a repository, no such --rev), each with why; the others were.
	Unusable []Unusable
	Engine   engine.Stats
	NotSent  int // commits left unsummarized by --max-cost
	// Pending are the commits whose requests wait in a provider's batch
	// that had not ended when the run stopped waiting (--no-wait).
	Pending  int
	Redacted redact.Counts // secrets replaced in what was sent, by rule
	// Bumped is each repository's next version, with Release.Bump.
	Bumped []Bumped
	// Excluded counts the commits Release.ExcludeAuthor left out.
	Excluded int
	// ForgeAsked and ForgeCached count the commits looked up on the
	// forge's API, and those whose answer the store held.
	ForgeAsked, ForgeCached int
	// Estimate holds the counts of a --dry-run, which reports no entries.
	Estimate *Estimate
	// With Options.Highlights: the sections of prompt.MinHighlights
	// changes or more, of them those left unasked by --max-cost and those
	// whose request failed; and the requests paid for now, and the answers
	// read from the store.
	HighlightSections, HighlightsNotSent int
	HighlightFailures                    []HighlightFailure
	HighlightsWritten, HighlightsStored  int

	entries  entryList
	deferred []*pending // misses another process was summarizing
	runs     []*repoRun // one per repository, in order
	// spend is --max-cost, one for the run across repositories and
	// stages (summaries, then highlights).
	spend *spend.Cap
}

// pending is a commit that missed the cache, on its way to the provider.
// What only matters while it is in flight sits behind a pointer, let go
// once the commit is settled.
type pending struct {
	repo     *repoRun
	entry    *changelog.Entry // nil in a dry run
	commit   history.Commit
	tokens   int           // its estimated share of a request
	redacted redact.Counts // secrets replaced in sent
	*commitText
}

// commitText is what prepare made of a pending commit.
type commitText struct {
	cut     tokenizer.Cut
	skipped []changelog.SkippedFile
	sent    prompt.Commit // what the model is told of it
	// blockTokens, in a dry run, is the exact count of the commit's part of
	// a request, counted by the worker that prepared it.
	blockTokens int
}

// incomplete reports a diff that lacked some of the commit's blobs: its
// summary is stored as partial.
func (p *pending) incomplete() bool {
	for _, f := range p.skipped {
		if f.Reason == history.SkipMissing {
			return true
		}
	}
	return false
}

// forget drops the commit's text once it is settled (summarized, failed or
// counted).
func (p *pending) forget() {
	p.commitText = nil
}

type repoRun struct {
	repo *history.Repo
	id   string
	root string
	// walk is the run's walk, its pathspecs taken in this repository: from
	// the directory digest runs in, when that lies in its work tree.
	walk history.WalkOptions
	// promisor names the remote of a partial clone, "" for a complete
	// repository; incomplete counts the commits prepared without some of
	// their blobs, said once per repository instead of once per object.
	promisor   string
	incomplete int
	// entries are this repository's in the report, filled in as their
	// summaries come, then given their versions and links (release).
	entries []*changelog.Entry
	// mailmap names the authors as the repository's .mailmap says; forge
	// is its origin's home on the web, when linked.
	mailmap *mailmap.Map
	forge   forge.Forge
	linked  bool
	// left counts the commits --exclude-author left out; labelled holds
	// those whose labels the forge's API told.
	left     int
	labelled map[string]bool
}

// cacheKey is a summary's identity in the cache: the repository, the
// commit, the model, the prompt's version and the pathspec it was cut to.
// Every lookup, claim and store of a summary names it through here.
func (rr *repoRun) cacheKey(opts Options, promptVersion, commit string) store.SummaryKey {
	return store.SummaryKey{RepoID: rr.id, Commit: commit, Model: opts.Target.Spec.String(), PromptVersion: promptVersion, Scope: rr.walk.Paths.String()}
}

// release gives the repository's entries their hashes abbreviated as git
// does, links to the forge its origin remote names and the version that
// first shipped each, with what each section says of itself: once, for
// what is reported, off the walk.
func (rr *repoRun) release(ctx context.Context, opts Options, res *Output) error {
	if len(rr.entries) == 0 && opts.Release.Bump == "" {
		return nil
	}
	for _, e := range rr.entries {
		e.Short = rr.repo.Abbrev(e.Commit)
		if rr.linked {
			e.Forge, e.URL = rr.forge, rr.forge.Commit(e.Commit)
		}
	}
	if err := rr.askForge(ctx, opts, res); err != nil {
		return err
	}
	return rr.versions(ctx, opts, res)
}

// summaries looks commits up in the cache. A partial summary (written
// without some blobs) is served only to a partial clone, which could write
// no better one: a complete repository summarizes the commit again, and its
// summary replaces the partial one.
//
// A commit summarized under an earlier prompt version (prompt.Earlier) is
// served from that summary: a summary is paid once.
func (rr *repoRun) summaries(ctx context.Context, opts Options, hashes []string) (map[string]store.Summary, error) {
	found := map[string]store.Summary{}
	missing := hashes
	for _, version := range append([]string{prompt.Version}, prompt.Earlier...) {
		k := rr.cacheKey(opts, version, "")
		got, err := opts.Store.Summaries(ctx, k.RepoID, k.Model, k.PromptVersion, k.Scope, missing)
		if err != nil {
			return nil, err
		}
		for hash, s := range got {
			if s.Partial && rr.promisor == "" {
				continue
			}
			found[hash] = s
		}
		if len(found) == len(hashes) {
			break
		}
		missing = missing[:0:0]
		for _, h := range hashes {
			if _, ok := found[h]; !ok {
				missing = append(missing, h)
			}
		}
	}
	return found, nil
}

// batchTokens caps a batch's tokens, output allowance included: no more
// than half of a minute's token limit. A commit larger than that still
// goes, alone.
func batchTokens(tpm int) int {
	if tpm > 0 {
		return min(32_000, tpm/2)
	}
	return 32_000
}

// Run summarizes the commits the options select. On cancellation it returns
// the context's error after every summary that arrived has been stored.
//
// Each repository's history streams through the run: commits are looked up
// in the cache, prepared and sent as the walk reaches them, so memory does
// not grow with the length of the history, beyond the report's entries.
// Repositories are run one after another: a clone named after its original
// finds the original's summaries stored, and pays for none of them again.
func Run(ctx context.Context, opts Options) (*Output, error) {
	if opts.Progress == nil {
		opts.Progress = noProgress{}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.BatchTokens <= 0 {
		opts.BatchTokens = batchTokens(opts.Target.Limits.TPM)
	}
	if opts.BatchTokens <= 0 {
		opts.BatchTokens = math.MaxInt // batches bounded by size alone
	}
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Owner == "" {
		opts.Owner = lease.NewOwner()
	}
	res := &Output{Changelog: changelog.Changelog{Model: opts.Target.Spec.String()}, Redacted: redact.Counts{}, spend: spend.New(opts.MaxCost)}
	// Every repository is opened and its --rev resolved before any is
	// summarized: one that cannot be (a typo in a path, a tag only some
	// have) is set aside with why, and the others are summarized. With a
	// single repository there is nothing else to do: its error is the run's.
	var repos []*history.Repo
	var walks []history.WalkOptions // repos[i]'s walk, its pathspecs taken there
	opened := map[string]bool{}
	for _, p := range opts.Repos {
		r, err := history.Open(p)
		if err == nil {
			if opened[r.Path()] { // the same repository named twice is walked once
				r.Close()
				continue
			}
			var warnings []string
			if warnings, err = r.Resolve(opts.Walk); err != nil && !errors.Is(err, history.ErrEmpty) {
				r.Close()
			} else if rerr := renamesIn(opts, r); rerr != nil {
				// Refused before any commit is read, not at the first diff.
				err = rerr
				r.Close()
			} else if walk, werr := walkIn(opts, r); werr != nil {
				err = werr
				r.Close()
			} else {
				err = nil
				walks = append(walks, walk)
				for _, w := range warnings {
					opts.Log.Warn(w, "repo", r.Path())
				}
			}
		}
		if err != nil {
			if len(opts.Repos) == 1 {
				return nil, err
			}
			res.Unusable = append(res.Unusable, Unusable{Path: p, Err: err})
			continue
		}
		opened[r.Path()] = true
		defer r.Close()
		repos = append(repos, r)
	}

	var eng engine.Runner
	var counted map[string]bool
	if opts.DryRun {
		res.Estimate = &Estimate{}
		if len(repos) > 1 {
			// Nothing is stored to find in a second clone of a repository:
			// the commits counted already are remembered instead.
			counted = map[string]bool{}
		}
	} else {
		lease.Sweep(ctx, opts.Store, opts.Owner, opts.Log)
		eng = opts.Target.Engine(target.Setup{Store: opts.Store, Concurrency: opts.Concurrency, Timeout: opts.Timeout,
			MaxWait: opts.MaxWait, MaxFailures: opts.MaxFailures, Log: opts.Log, Count: opts.Tokenizer.Count, Batch: opts.Batch, Secrets: opts.Secrets})
	}
	err := func() error {
		for i, r := range repos {
			if err := runRepo(ctx, opts, eng, r, walks[i], res, counted); err != nil {
				return err
			}
		}
		if opts.DryRun {
			return ctx.Err()
		}
		return awaitDeferred(ctx, opts, eng, res)
	}()
	// A run that stopped early still reports what it summarized, with
	// versions and links unless it was interrupted.
	for _, rr := range res.runs {
		if rerr := rr.release(ctx, opts, res); rerr != nil && err == nil && ctx.Err() == nil {
			err = rerr
		}
	}
	// An empty repository's next version is its first.
	if opts.Release.Bump != "" && err == nil {
		for _, e := range res.Empty {
			next, berr := firstVersion(opts.Release.Bump)
			if berr != nil {
				err = berr
				break
			}
			res.Bumped = append(res.Bumped, Bumped{Repo: filepath.Base(e.Path), Next: next, Level: opts.Release.Bump})
		}
	}
	// Highlights written while summaries wait in a batch would be paid
	// again once they come.
	if opts.Highlights && err == nil && res.Pending == 0 {
		if opts.DryRun {
			err = estimateHighlights(ctx, opts, res.Estimate, res.runs)
		} else {
			err = highlights(ctx, opts, eng, res)
		}
	}
	res.Changelog.Stats.Repositories = len(repos) - len(res.Empty)
	if opts.DryRun {
		res.Estimate.CostUSD = opts.Target.Price.Cost(res.Estimate.InputTokens, res.Estimate.MaxOutputTokens)
	} else {
		res.Engine = eng.Stats()
	}
	res.Changelog.Entries = res.entries.summarized()
	return res, err
}

// runRepo walks one repository and sends the commits the cache lacks
// through the engine (or counts them, in a dry run) while the walk goes on.
// A walk that fails part way still sees what it handed on settled.
func runRepo(ctx context.Context, opts Options, eng engine.Runner, r *history.Repo, walk history.WalkOptions, res *Output, counted map[string]bool) error {
	head, headErr := r.Head()
	if errors.Is(headErr, history.ErrEmpty) && !opts.Walk.All && len(opts.Walk.Revs) == 0 {
		res.Empty = append(res.Empty, emptyOf(r))
		return nil
	}
	if opts.Release.Bump != "" && headErr == nil {
		// A last tag --bump cannot count from fails the run before
		// anything is paid for, not after.
		if t, ok, err := r.LastTag(ctx, "HEAD", opts.Release.Tags); err != nil {
			return err
		} else if _, err := bump.Force(t.Tag, bump.Patch); ok && err != nil {
			return fmt.Errorf("%s: --bump: %w", r.Path(), err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &scan{opts: opts, rr: &repoRun{repo: r, id: opts.RepoID, promisor: r.PromisorRemote(), walk: walk}, res: res, counted: counted}
	if err := s.rr.openPeople(); err != nil {
		return err
	}
	res.runs = append(res.runs, s.rr)
	misses := make(chan *pending, scanAhead)
	var walking sync.WaitGroup
	var walkErr error
	walking.Go(func() {
		defer close(misses)
		walkErr = s.run(ctx, head, headErr, misses)
	})
	st := &res.Changelog.Stats
	settledBefore := st.Summarized + st.Failed
	var err error
	if opts.DryRun {
		estimate(ctx, opts, misses, res.Estimate)
	} else {
		err = dispatch(ctx, opts, eng, misses, res)
	}
	cancel() // a failed dispatch leaves the walk blocked on misses
	walking.Wait()
	st.Commits += s.commits
	res.Excluded += s.rr.left
	st.Cached += s.cached
	st.SkippedFiles += s.skippedFiles
	if n := s.rr.incomplete; n > 0 {
		opts.Log.Warn(fmt.Sprintf("%s is a partial clone (promisor remote %q): %d commits were summarized without some files' contents, listed as %q; their summaries are kept for partial clones and replaced when a complete clone summarizes them. Try: a clone without --filter for complete summaries",
			r.Path(), s.rr.promisor, n, history.SkipMissing))
	}
	for _, w := range r.Warnings() {
		opts.Log.Warn("diff attributes or drivers not honoured", "repo", r.Path(), "problem", w)
	}
	if errors.Is(walkErr, history.ErrEmpty) {
		res.Empty = append(res.Empty, emptyOf(r))
		walkErr = nil
	}
	// A stop that came once the walk had ended and every commit it found
	// was settled (Ctrl-C just after the last answer) interrupted nothing:
	// whichever stage noticed it first must not decide the exit code.
	if errors.Is(err, context.Canceled) && walkErr == nil && !opts.DryRun &&
		s.commits == s.cached+st.Summarized+st.Failed-settledBefore {
		err = nil
	}
	if err != nil {
		return err
	}
	return walkErr
}

// walkIn is the run's walk in r: pathspecs given from a directory of r's
// work tree are taken from there, as git takes them; anywhere else, from
// r's root. The cache keeps them root-relative either way.
func walkIn(opts Options, r *history.Repo) (history.WalkOptions, error) {
	walk := opts.Walk
	if len(opts.PathArgs) == 0 {
		return walk, nil
	}
	paths, err := r.Pathspec(opts.PathArgs, opts.WorkDir)
	if err != nil {
		return walk, fmt.Errorf("%s: %w", r.Path(), err)
	}
	walk.Paths = paths
	return walk, nil
}

// findRoot names the repository by the root of the history from head.
func (rr *repoRun) findRoot(ctx context.Context, opts Options, head string) error {
	var known func(string) (string, bool, error)
	if opts.Store != nil {
		known = func(h string) (string, bool, error) { return knownRoot(ctx, opts.Store, h) }
	}
	root, err := rr.repo.RootCommit(ctx, head, known)
	if err != nil {
		return err
	}
	rr.root, rr.id = root, key.RepoID(root)
	return nil
}

// knownRoot finds the root of a stored commit's repository, trusting only
// ids derived from their root: an id set by --repo-id says nothing of roots.
func knownRoot(ctx context.Context, st store.SummaryStore, commit string) (string, bool, error) {
	repos, err := st.RepositoriesOf(ctx, commit)
	if err != nil {
		return "", false, err
	}
	for _, r := range repos {
		if r.RootCommit != "" && r.ID == key.RepoID(r.RootCommit) {
			return r.RootCommit, true, nil
		}
	}
	return "", false, nil
}

func fillFromSummary(e *changelog.Entry, s store.Summary, message string) {
	e.Summary = s.Text
	if strings.HasPrefix(e.Model, provider.Offline) {
		// What a person would write, and apart what a machine counted.
		e.Summary, e.Details = offline.Split(s.Text)
	}
	e.Type, e.Scope, e.Breaking = s.ChangeType, s.ChangeScope, s.Breaking
	if e.Type == "" {
		// Stored before digest asked for the kind of change: the rules
		// read it from the message.
		k := committype.Classify(message, nil)
		e.Type, e.Scope, e.Breaking = k.Type, k.Scope, k.Breaking
	}
	e.Truncated = s.Truncated
	e.DiffTokens = s.DiffTokens
	e.SkippedFiles = decodeSkipped(s.SkippedFiles)
	e.InputTokens = s.InputTokens
	e.OutputTokens = s.OutputTokens
	e.CostUSD = s.CostUSD
}

// awaitDeferred finishes the commits another process held the lease of:
// their summaries are read from the store as that process stores them, and
// any whose lease expires (its owner died) is claimed and summarized here.
func awaitDeferred(ctx context.Context, opts Options, eng engine.Runner, res *Output) error {
	take := func() []*pending {
		waiting := res.deferred
		res.deferred = nil
		return waiting
	}
	return lease.Await(ctx, opts.Lease, take, func(waiting []*pending) error {
		var left []*pending
		for _, p := range waiting {
			found, err := p.repo.summaries(ctx, opts, []string{p.commit.Hash})
			if err != nil {
				return err
			}
			s, ok := found[p.commit.Hash]
			if !ok {
				left = append(left, p)
				continue
			}
			// Paid for by the other process: here it is as good as cached.
			fillFromSummary(p.entry, s, p.commit.Message)
			p.entry.Cached = true
			res.Changelog.Stats.Cached++
			res.Changelog.Stats.SkippedFiles += len(s.SkippedFiles)
			opts.Progress.Done(1)
		}
		if len(left) == 0 {
			return nil
		}
		// dispatch claims again: expired leases are won, live ones deferred anew.
		return dispatch(ctx, opts, eng, feed(left), res)
	})
}

// hide leaves a summarized entry out of the report.
func (res *Output) hide(e *changelog.Entry) {
	if res.entries.hidden == nil {
		res.entries.hidden = map[*changelog.Entry]bool{}
	}
	res.entries.hidden[e] = true
}

// leaseKey names the work of summarizing a commit, as the cache does.
func (p *pending) leaseKey(opts Options) string {
	k := p.repo.cacheKey(opts, prompt.Version, p.commit.Hash)
	return "summary:" + key.Of(k.RepoID, k.Commit, k.Model, k.PromptVersion, k.Scope)
}

// feed hands on ps through a closed channel, as a walk would.
func feed(ps []*pending) <-chan *pending {
	c := make(chan *pending, len(ps))
	for _, p := range ps {
		c <- p
	}
	close(c)
	return c
}

// renamesIn says why --renames cannot run in r, or nil.
func renamesIn(opts Options, r *history.Repo) error {
	if !opts.Renames {
		return nil
	}
	return r.CanDetectRenames()
}

// effort is the reasoning effort the model is sent: none where its rules
// take none.
func (o Options) effort() string {
	req, _ := o.Target.Rules.Apply(provider.Request{ReasoningEffort: o.ReasoningEffort})
	return req.ReasoningEffort
}

// outputCap is the output-token cap of a request for maxTokens, as the
// model is sent it (with room to think, where it thinks).
func (o Options) outputCap(maxTokens int) int {
	return provider.OutputCap(provider.Request{Model: o.Target.Spec.Model, MaxTokens: maxTokens, ReasoningEffort: o.effort()})
}
