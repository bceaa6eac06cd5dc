// Package summarize is the summarize pipeline: walk each repository, reuse
// what the store already holds, cut the diffs of the rest to the token
// budget, send them through the engine and commit each summary as it lands.
package summarize

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/budget"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/report"
	"github.com/digest-cli/digest/internal/store"
)

// maxFileBytes leaves a blob out of the diff rather than diffing it whole:
// its diff alone would be cut to the budget many times over.
const maxFileBytes = 1 << 20

// Options configures a run.
type Options struct {
	Repos         []string // repository paths
	Walk          history.WalkOptions
	RepoID        string // overrides the root-commit id; only with one repository
	Renames       bool
	MaxDiffTokens int
	Concurrency   int

	// Several commits share a request: up to BatchSize of them and about
	// BatchTokens tokens, gathered for at most BatchWindow.
	BatchSize   int
	BatchTokens int
	BatchWindow time.Duration

	Limits  engine.Limits
	Timeout time.Duration // per attempt
	Price   models.Price
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

	Model     provider.Spec
	Provider  provider.Provider
	Tokenizer *budget.Tokenizer
	Store     *store.Store
	Progress  Progress
	Log       *slog.Logger
}

// DefaultLease is how long other processes wait for a commit whose
// summarizing process died before they summarize it themselves.
const DefaultLease = lease.Default

// Progress hears how far a run has got.
type Progress interface {
	Start(total int)
	Done(n int)
	// Spent reports the run's tokens, cost and retries so far.
	Spent(tokens int, costUSD float64, retries int64)
}

type noProgress struct{}

func (noProgress) Start(int)                 {}
func (noProgress) Done(int)                  {}
func (noProgress) Spent(int, float64, int64) {}

// Failure is a commit that could not be summarized.
type Failure struct {
	Repo   string
	Commit string
	Err    error
}

// Result is what a run produced: the changelog, and the commits that failed.
type Result struct {
	Changelog report.Changelog
	Failures  []Failure
	Empty     []string // repositories without commits
	Engine    engine.Stats
	NotSent   int           // commits left unsummarized by --max-cost
	Redacted  redact.Counts // secrets replaced in what was sent, by rule
	Estimate  *Estimate     // the counts of a --dry-run

	deferred []*pending // misses another process was summarizing
}

// pending is a commit that missed the cache, on its way to the provider.
// One is held for every miss of a run, so what only matters while the
// commit is in flight sits behind a pointer, let go once it is settled.
type pending struct {
	repo     *repoRun
	index    int // into Result.Changelog.Entries
	commit   history.Commit
	shared   []int         // other entries for the same commit, met in another clone
	tokens   int           // its estimated share of a request
	redacted redact.Counts // secrets replaced in sent
	*commitText
}

// commitText is what prepare made of a pending commit.
type commitText struct {
	cut     budget.Cut
	skipped []report.SkippedFile
	sent    prompt.Commit // what the model is told of it
	// blockTokens, in a dry run, is the exact count of the commit's part of
	// a request, counted by the worker that prepared it.
	blockTokens int
}

// forget drops the commit's text once it is settled (summarized, failed or
// counted): a first run over a long history would otherwise hold every diff
// it prepared until the end.
func (p *pending) forget() {
	p.commitText = nil
}

type repoRun struct {
	repo *history.Repo
	id   string
	root string
}

// Run summarizes the commits the options select. On cancellation it returns
// the context's error after every summary that arrived has been stored.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Progress == nil {
		opts.Progress = noProgress{}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
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
	var repos []*history.Repo
	opened := map[string]bool{}
	for _, p := range opts.Repos {
		r, err := history.Open(p)
		if err != nil {
			return nil, err
		}
		if opened[r.Path()] { // the same repository named twice is walked once
			r.Close()
			continue
		}
		opened[r.Path()] = true
		defer r.Close()
		repos = append(repos, r)
	}

	res := &Result{Changelog: report.Changelog{Model: opts.Model.String()}, Redacted: redact.Counts{}}
	var misses []*pending
	for _, r := range repos {
		m, err := collect(ctx, opts, r, res)
		if err != nil {
			return nil, err
		}
		misses = append(misses, m...)
	}
	st := &res.Changelog.Stats
	st.Repositories = len(repos) - len(res.Empty)
	opts.Progress.Start(len(res.Changelog.Entries))
	opts.Progress.Done(st.Cached)
	misses = sharePending(misses)
	if opts.DryRun {
		res.Estimate = estimate(ctx, opts, misses)
		return res, ctx.Err()
	}
	lease.Sweep(ctx, opts.Store, opts.Owner, opts.Log)
	if len(misses) == 0 {
		return res, nil
	}
	eng := &engine.Engine{
		Provider: opts.Provider, Concurrency: opts.Concurrency, Limits: opts.Limits,
		Timeout: opts.Timeout, Log: opts.Log,
	}
	if opts.Model.Provider != provider.Offline {
		eng.SlowStart = true
		// Token reservations need the request's size; the offline model has
		// no limits to reserve against, so it skips the extra tokenizing.
		eng.Tokens = func(req provider.Request) int {
			n := opts.Tokenizer.Count(req.System) + provider.OutputCap(req.Model, req.MaxTokens)
			for _, m := range req.Messages {
				n += opts.Tokenizer.Count(m.Content)
			}
			return n
		}
	}
	err := dispatch(ctx, opts, eng, misses, res)
	if err == nil {
		err = awaitDeferred(ctx, opts, eng, res)
	}
	res.Engine = eng.Stats()
	res.Changelog.Entries = summarized(res.Changelog.Entries)
	return res, err
}

// collect walks one repository, fills in cached entries and returns the misses.
func collect(ctx context.Context, opts Options, r *history.Repo, res *Result) ([]*pending, error) {
	head, headErr := r.Head()
	if errors.Is(headErr, history.ErrEmpty) && !opts.Walk.All && opts.Walk.Rev == "" {
		res.Empty = append(res.Empty, r.Path())
		return nil, nil
	}
	rr := &repoRun{repo: r, id: opts.RepoID}
	// The root is found by a walk of its own, down first parents: run beside
	// the main walk, on another core, it costs no time.
	var rootWalk sync.WaitGroup
	var rootErr error
	needRoot := rr.id == "" // read here only: the root walk writes rr
	if needRoot && headErr == nil {
		rootWalk.Go(func() { rootErr = rr.findRoot(ctx, opts, head) })
	}
	defer rootWalk.Wait()
	var commits []history.Commit
	messageBytes, dropMessages := 0, false
	walkErr := r.Walk(ctx, opts.Walk, func(c history.Commit) error {
		if c.Boundary {
			// Summarized as adding its whole tree, it would be cached as such
			// and served to every full clone that shares the cache.
			opts.Log.Warn("left out: the commit is the edge of a shallow clone, and without its parent what it changed cannot be known. Try: git fetch --deepen=1, or fetch-depth: 0 in actions/checkout",
				"repo", r.Path(), "commit", c.Hash)
			return nil
		}
		// Past keptMessageBytes, messages are dropped here and read again
		// when prepared: held from the walk to the end of a run, git.git's
		// 60,000 messages took 45 MB. Reading them again costs a few
		// percent of a dry run, worth paying only for long histories.
		if dropMessages {
			c.Message = ""
		} else if messageBytes += len(c.Message); messageBytes > keptMessageBytes {
			for i := range commits {
				commits[i].Message = ""
			}
			c.Message, dropMessages = "", true
		}
		commits = append(commits, c)
		return nil
	})
	if errors.Is(walkErr, history.ErrEmpty) {
		res.Empty = append(res.Empty, r.Path())
		return nil, nil
	}
	if walkErr != nil {
		return nil, walkErr
	}
	if len(commits) == 0 {
		return nil, nil
	}
	if needRoot && headErr != nil {
		// HEAD is unborn, but --all or --rev found commits.
		rootWalk.Go(func() { rootErr = rr.findRoot(ctx, opts, commits[0].Hash) })
	}
	rootWalk.Wait()
	if rootErr != nil {
		return nil, rootErr
	}
	if !opts.DryRun {
		if err := opts.Store.SaveRepository(ctx, store.Repository{ID: rr.id, RootCommit: rr.root, Path: r.Path()}); err != nil {
			return nil, err
		}
	}

	hashes := make([]string, len(commits))
	for i, c := range commits {
		hashes[i] = c.Hash
	}
	var cached map[string]store.Summary
	if opts.Store != nil { // nil only in a dry run with no database yet
		var err error
		if cached, err = opts.Store.Summaries(ctx, rr.id, opts.Model.String(), prompt.Version, opts.Walk.Paths.String(), hashes); err != nil {
			return nil, err
		}
	}
	st := &res.Changelog.Stats
	var misses []*pending
	for _, c := range commits {
		e := report.Entry{
			Repo: r.Name(), RepoID: rr.id, Commit: c.Hash, Author: c.AuthorName,
			Date: c.AuthorDate, Subject: c.Subject, Model: opts.Model.String(),
		}
		st.Commits++
		if s, ok := cached[c.Hash]; ok {
			fillFromSummary(&e, s)
			e.Cached = true
			st.Cached++
			st.SkippedFiles += len(e.SkippedFiles)
		} else {
			misses = append(misses, &pending{repo: rr, index: len(res.Changelog.Entries), commit: c})
		}
		res.Changelog.Entries = append(res.Changelog.Entries, e)
	}
	opts.Log.Debug("walked repository", "repo", r.Path(), "repo_id", rr.id, "commits", len(commits), "cached", len(cached))
	return misses, nil
}

// keptMessageBytes bounds the commit messages a walk keeps for prepare (a
// variable for tests).
var keptMessageBytes = 8 << 20

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
func knownRoot(ctx context.Context, st *store.Store, commit string) (string, bool, error) {
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

// sharePending sends each commit once however many times the run met it
// (two clones of one repository): later entries ride on the first's request.
func sharePending(misses []*pending) []*pending {
	first := make(map[string]*pending, len(misses))
	out := misses[:0]
	for _, p := range misses {
		k := key.Commit(p.repo.id, p.commit.Hash)
		if f, ok := first[k]; ok {
			f.shared = append(f.shared, p.index)
			continue
		}
		first[k] = p
		out = append(out, p)
	}
	return out
}

func fillFromSummary(e *report.Entry, s store.Summary) {
	e.Summary = s.Text
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
func awaitDeferred(ctx context.Context, opts Options, eng *engine.Engine, res *Result) error {
	poll := lease.Poll(opts.Lease)
	for len(res.deferred) > 0 {
		if err := engine.Sleep(ctx, poll); err != nil {
			return err
		}
		waiting := res.deferred
		res.deferred = nil
		var left []*pending
		for _, p := range waiting {
			found, err := opts.Store.Summaries(ctx, p.repo.id, opts.Model.String(), prompt.Version, opts.Walk.Paths.String(), []string{p.commit.Hash})
			if err != nil {
				return err
			}
			s, ok := found[p.commit.Hash]
			if !ok {
				left = append(left, p)
				continue
			}
			// Paid for by the other process: here it is as good as cached.
			for _, i := range append([]int{p.index}, p.shared...) {
				fillFromSummary(&res.Changelog.Entries[i], s)
				res.Changelog.Entries[i].Cached = true
				res.Changelog.Stats.Cached++
				res.Changelog.Stats.SkippedFiles += len(s.SkippedFiles)
			}
			opts.Progress.Done(1 + len(p.shared))
		}
		if len(left) > 0 {
			// dispatch claims again: expired leases are won, live ones deferred anew.
			if err := dispatch(ctx, opts, eng, left, res); err != nil {
				return err
			}
		}
	}
	return nil
}

// leaseKey names the work of summarizing a commit, as the cache does.
func (p *pending) leaseKey(opts Options) string {
	return "summary:" + key.Of(p.repo.id, p.commit.Hash, opts.Model.String(), prompt.Version, opts.Walk.Paths.String())
}

// summarized drops the entries of commits that got no summary (failed or
// never sent because the run stopped): a report only shows what is known.
func summarized(entries []report.Entry) []report.Entry {
	out := entries[:0]
	for _, e := range entries {
		if e.Summary != "" {
			out = append(out, e)
		}
	}
	return out
}
