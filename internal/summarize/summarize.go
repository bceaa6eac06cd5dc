// Package summarize is the summarize pipeline: walk each repository, reuse
// what the store already holds, cut the diffs of the rest to the token
// budget, send them through the engine and commit each summary as it lands.
package summarize

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/budget"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
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

	Model     provider.Spec
	Provider  provider.Provider
	Tokenizer *budget.Tokenizer
	Store     *store.Store
	Progress  Progress
	Log       *slog.Logger
}

// Progress hears how far a run has got.
type Progress interface {
	Start(total int)
	Done(n int)
}

type noProgress struct{}

func (noProgress) Start(int) {}
func (noProgress) Done(int)  {}

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
}

// pending is a commit that missed the cache, on its way to the provider.
type pending struct {
	repo    *repoRun
	index   int // into Result.Changelog.Entries
	commit  history.Commit
	cut     budget.Cut
	skipped []report.SkippedFile
	shared  []int // other entries for the same commit, met in another clone
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
	var repos []*history.Repo
	opened := map[string]bool{}
	for _, p := range opts.Repos {
		r, err := history.Open(p)
		if err != nil {
			return nil, err
		}
		if !opened[r.Path()] { // the same repository named twice is walked once
			opened[r.Path()] = true
			repos = append(repos, r)
		}
	}

	res := &Result{Changelog: report.Changelog{Model: opts.Model.String()}}
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
	if len(misses) == 0 {
		return res, nil
	}
	err := dispatch(ctx, opts, misses, res)
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
	var commits []history.Commit
	walkErr := r.Walk(ctx, opts.Walk, func(c history.Commit) error {
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
	if headErr != nil {
		head = commits[0].Hash // HEAD is unborn, but --all or --rev found commits
	}
	rr := &repoRun{repo: r, id: opts.RepoID}
	if rr.id == "" {
		root, err := r.RootCommit(ctx, head, func(h string) (string, bool, error) { return knownRoot(ctx, opts.Store, h) })
		if err != nil {
			return nil, err
		}
		rr.root, rr.id = root, key.RepoID(root)
	}
	if err := opts.Store.SaveRepository(ctx, store.Repository{ID: rr.id, RootCommit: rr.root, Path: r.Path()}); err != nil {
		return nil, err
	}

	hashes := make([]string, len(commits))
	for i, c := range commits {
		hashes[i] = c.Hash
	}
	cached, err := opts.Store.Summaries(ctx, rr.id, opts.Model.String(), prompt.Version, opts.Walk.Paths.String(), hashes)
	if err != nil {
		return nil, err
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

// dispatch prepares each miss's diff and sends it through the engine,
// storing every answer as it arrives.
func dispatch(ctx context.Context, opts Options, misses []*pending, res *Result) error {
	// Whatever ends the engine's run also stops the producer feeding it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	byKey := make(map[string]*pending, len(misses))
	var mu sync.Mutex // guards byKey and res, shared by the producer and the committer
	st := &res.Changelog.Stats
	resolved := 0 // misses summarized or failed, as opposed to cut short
	// fail records a commit that got no summary; callers hold mu, since the
	// producer and the committer both report failures.
	fail := func(p *pending, err error) {
		resolved++
		res.Failures = append(res.Failures, Failure{Repo: p.repo.repo.Path(), Commit: p.commit.Hash, Err: err})
		st.Failed += 1 + len(p.shared)
		opts.Progress.Done(1 + len(p.shared))
	}
	tasks := make(chan engine.Task)
	var producer sync.WaitGroup
	// The producer must be gone before Run returns: it reports into res.
	defer producer.Wait()
	defer cancel()
	producer.Go(func() {
		defer close(tasks)
		prepare(ctx, opts, misses, func(p *pending, t engine.Task) bool {
			mu.Lock()
			byKey[t.Key] = p
			mu.Unlock()
			select {
			case tasks <- t:
				return true
			case <-ctx.Done():
				return false
			}
		}, func(p *pending, err error) {
			mu.Lock()
			defer mu.Unlock()
			fail(p, err)
		})
	})

	eng := &engine.Engine{Provider: opts.Provider, Concurrency: opts.Concurrency}
	// Summaries are stored even while the run is being cancelled: what was
	// paid for must not be lost to a Ctrl-C.
	storeCtx := context.WithoutCancel(ctx)
	err := eng.Run(ctx, tasks, func(o engine.Outcome) error {
		mu.Lock()
		defer mu.Unlock()
		p := byKey[o.Task.Key]
		if o.Err != nil {
			if ctx.Err() == nil {
				fail(p, o.Err)
			}
			return nil
		}
		summaries, missing := prompt.ParseAnswer(o.Response.Text, []string{p.commit.Hash})
		if len(missing) > 0 {
			fail(p, errors.New("the model's answer has no summary for this commit"))
			return nil
		}
		sum := store.Summary{
			SummaryKey: store.SummaryKey{RepoID: p.repo.id, Commit: p.commit.Hash, Model: opts.Model.String(),
				PromptVersion: prompt.Version, Scope: opts.Walk.Paths.String()},
			Text:         summaries[p.commit.Hash],
			InputTokens:  o.Response.Usage.InputTokens,
			OutputTokens: o.Response.Usage.OutputTokens,
			DiffTokens:   p.cut.Tokens,
			Truncated:    p.cut.Truncated,
			SkippedFiles: encodeSkipped(p.skipped),
		}
		c := p.commit
		if err := opts.Store.SaveSummary(storeCtx, store.Commit{RepoID: p.repo.id, Hash: c.Hash, AuthorName: c.AuthorName,
			AuthorEmail: c.AuthorEmail, AuthorDate: c.AuthorDate, CommitDate: c.CommitDate, Subject: c.Subject}, sum); err != nil {
			return err
		}
		fillFromSummary(&res.Changelog.Entries[p.index], sum)
		for _, i := range p.shared {
			fillFromSummary(&res.Changelog.Entries[i], sum)
			res.Changelog.Entries[i].Cached = true
			st.Cached++
			st.SkippedFiles += len(p.skipped)
		}
		resolved++
		st.Summarized++
		st.SkippedFiles += len(p.skipped)
		st.InputTokens += sum.InputTokens
		st.OutputTokens += sum.OutputTokens
		st.CostUSD += sum.CostUSD
		opts.Progress.Done(1 + len(p.shared))
		opts.Log.Debug("summarized", "commit", c.Hash, "diff_tokens", p.cut.Tokens, "latency", o.Latency)
		return nil
	})
	if errors.Is(err, context.Canceled) && resolved == len(misses) {
		return nil // the signal came after the last answer: nothing was cut short
	}
	return err
}

// prepare builds each miss's request in walk order and hands it to send,
// stopping when send reports the run is over.
// A commit whose diff cannot be read is reported to fail and skipped: one
// damaged object must not cost the summaries of every other commit.
func prepare(ctx context.Context, opts Options, misses []*pending, send func(*pending, engine.Task) bool, fail func(*pending, error)) {
	diffOpts := history.DiffOptions{
		Renames: opts.Renames, Paths: opts.Walk.Paths,
		SkipPath: budget.SkipPath, MaxFileBytes: maxFileBytes,
	}
	for _, p := range misses {
		if ctx.Err() != nil {
			return
		}
		d, err := p.repo.repo.Diff(ctx, p.commit, diffOpts)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fail(p, err)
			continue
		}
		for _, w := range d.Warnings {
			opts.Log.Warn("could not read part of a commit; summarizing the rest", "repo", p.repo.repo.Path(), "commit", p.commit.Hash, "problem", w)
		}
		var sections []budget.Section
		var files []prompt.File
		for _, f := range d.Files {
			files = append(files, prompt.File{Status: f.Status, Path: f.Path, Added: f.Added, Removed: f.Removed, Skip: f.Skip})
			if f.Skip != "" {
				p.skipped = append(p.skipped, report.SkippedFile{Path: f.Path, Reason: f.Skip})
				continue
			}
			if f.Text != "" {
				sections = append(sections, budget.Section{Name: f.Path, Text: f.Text})
			}
		}
		p.cut = opts.Tokenizer.Fit(sections, opts.MaxDiffTokens)
		c := p.commit
		sent := prompt.Commit{
			Hash: c.Hash, Author: c.AuthorName, Date: c.AuthorDate.Format(time.RFC3339),
			Message: c.Message, Files: files, Diff: p.cut.Text,
		}
		t := engine.Task{Key: key.Commit(p.repo.id, c.Hash), Request: prompt.Request(opts.Model.Model, []prompt.Commit{sent})}
		if !send(p, t) {
			return
		}
	}
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
