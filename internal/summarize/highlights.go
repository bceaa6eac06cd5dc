package summarize

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store"
)

// HighlightFailure is a section whose highlights could not be asked for.
type HighlightFailure struct {
	Repo    string // the repository's path
	Version string // "" for Unreleased
	Err     error
}

// section is one version of one repository's release notes.
type section struct {
	rr      *repoRun
	version string
	entries []*changelog.Entry
}

// sections groups the repository's entries by the version that released
// them, in the order the walk met them.
func (rr *repoRun) sections() []section {
	var out []section
	index := map[string]int{}
	for _, e := range rr.entries {
		i, ok := index[e.Version]
		if !ok {
			i = len(out)
			index[e.Version] = i
			out = append(out, section{rr: rr, version: e.Version})
		}
		out[i].entries = append(out[i].entries, e)
	}
	return out
}

// inputs lists the section's changes for the highlights prompt, and counts
// those whose summary is not known (yet: in a dry run, the misses).
func (s section) inputs() (in []prompt.HighlightInput, unknown int) {
	in = make([]prompt.HighlightInput, len(s.entries))
	for i, e := range s.entries {
		in[i] = prompt.HighlightInput{Commit: e.Commit, Type: e.Type, Scope: e.Scope, Breaking: e.Breaking, DiffTokens: e.DiffTokens, Summary: e.Summary}
		if e.Summary == "" {
			unknown++
		}
	}
	return in, unknown
}

// highlightsKey names a section's highlights in the store by what the
// request holds: the model, the prompt's version and the changes listed.
// The section's name is not part of it, nor of the request: once Unreleased
// is tagged, its highlights are served to the release as they are.
func highlightsKey(opts Options, total int, listed []prompt.HighlightInput) string {
	parts := []string{"digest/highlights", prompt.HighlightsVersion, opts.Target.Spec.String(), strconv.Itoa(total)}
	for _, c := range listed {
		parts = append(parts, c.Commit, c.Summary, c.Type, c.Scope, strconv.FormatBool(c.Breaking), strconv.Itoa(c.DiffTokens))
	}
	return key.Of(parts...)
}

// highlightJob is one highlights request and the sections it answers: two
// clones of a repository in one run share their sections' requests.
type highlightJob struct {
	key      string
	req      provider.Request
	sections []section
	bullets  []string
	done     bool
}

// highlighter asks for the highlights of every section of a finished run.
type highlighter struct {
	opts Options
	eng  engine.Runner
	res  *Output
	// leases are the sections this run is asking about, given back as
	// their answers are stored, and all however the run ends.
	leases *lease.Holder

	mu sync.Mutex // guards res's stats
}

// highlights gives each section of the run's release notes the bullets a
// model writes about its changes: read from the store when a run (this
// process's or another's) paid for them, else asked for through the run's
// engine, one request per section, and stored before they are used. A
// section with fewer than prompt.MinHighlights changes, or with a commit
// that got no summary, goes without: its highlights would be paid again
// once the summary comes. Only an interruption, or a store that cannot be
// read, is returned: a request that fails costs its section's highlights
// alone, recorded in res.
func highlights(ctx context.Context, opts Options, eng engine.Runner, res *Output) error {
	res.Changelog.Highlights = []changelog.Highlights{}
	var jobs []*highlightJob
	byKey := map[string]*highlightJob{}
	incomplete := 0
	for _, rr := range res.runs {
		for _, s := range rr.sections() {
			in, unknown := s.inputs()
			if len(in) < prompt.MinHighlights {
				continue
			}
			res.HighlightSections++
			if unknown > 0 {
				incomplete++
				continue
			}
			req, listed := prompt.Highlights(opts.Target.Spec.Model, in)
			req.ReasoningEffort = opts.effort()
			k := highlightsKey(opts, len(in), listed)
			j := byKey[k]
			if j == nil {
				j = &highlightJob{key: k, req: req}
				byKey[k] = j
				jobs = append(jobs, j)
			}
			j.sections = append(j.sections, s)
		}
	}
	if incomplete > 0 {
		opts.Log.Warn(fmt.Sprintf("highlights: %d of %d sections go without, as some of their commits have no summary yet. Try: run again once every commit is summarized",
			incomplete, res.HighlightSections))
	}
	h := &highlighter{opts: opts, eng: eng, res: res, leases: lease.NewHolder(opts.Store, opts.Owner, opts.Lease, opts.Log)}
	defer h.leases.ReleaseAll()
	if err := h.fromStore(ctx, jobs); err != nil {
		// A stop that came after the last summary ends the run here: it
		// is an interruption, whatever the store made of it.
		return cmp.Or(ctx.Err(), err)
	}
	var unanswered []*highlightJob
	for _, j := range jobs {
		if !j.done {
			unanswered = append(unanswered, j)
		}
	}
	if len(unanswered) > 0 {
		defer h.leases.Keep(ctx, opts.Log)()
		next := make(chan *highlightJob)
		var workers sync.WaitGroup
		for range min(max(1, opts.Concurrency), len(unanswered)) {
			workers.Go(func() {
				for j := range next {
					h.ask(ctx, j)
				}
			})
		}
	feed:
		for _, j := range unanswered {
			select {
			case next <- j:
			case <-ctx.Done():
				break feed
			}
		}
		close(next)
		workers.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, j := range jobs {
		for _, s := range j.sections {
			if len(j.bullets) > 0 {
				res.Changelog.Highlights = append(res.Changelog.Highlights, changelog.Highlights{
					Repo: s.rr.repo.Name(), RepoID: s.rr.id, Version: s.version, Bullets: j.bullets})
			}
		}
	}
	return nil
}

// fromStore fills in the jobs whose answers are stored, in one lookup.
func (h *highlighter) fromStore(ctx context.Context, jobs []*highlightJob) error {
	if len(jobs) == 0 {
		return nil
	}
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.key
	}
	found, err := h.opts.Store.EvalResults(ctx, keys)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if r, ok := found[j.key]; ok {
			h.use(j, r.Answer)
			h.res.HighlightsStored++
		}
	}
	return nil
}

// use reads the bullets out of an answer, stored or just paid for.
func (h *highlighter) use(j *highlightJob, answer string) {
	j.bullets, j.done = prompt.ParseHighlights(answer), true
	if len(j.bullets) == 0 {
		h.opts.Log.Debug("highlights: the answer holds none; the section goes without", "key", j.key, "answer", fmt.Sprintf("%.200q", answer))
	}
}

// ask claims the job's key, so that no other process sharing the database
// pays for the same highlights, and asks the model unless the answer turns
// up in the store meanwhile; a claim another process holds is waited out.
func (h *highlighter) ask(ctx context.Context, j *highlightJob) {
	st, leaseKey := h.opts.Store, "highlights:"+j.key
	for {
		won, err := h.leases.Claim(ctx, leaseKey)
		if err != nil {
			h.fail(ctx, j, err)
			return
		}
		// Won or not, look again: the holder may have stored the answer and
		// let the claim go since the first look.
		found, err := st.EvalResults(ctx, []string{j.key})
		if r, ok := found[j.key]; ok {
			h.mu.Lock()
			h.use(j, r.Answer)
			h.res.HighlightsStored++
			h.mu.Unlock()
		}
		if won && (j.done || err != nil) {
			h.leases.Release(leaseKey)
		}
		if err != nil {
			h.fail(ctx, j, err)
			return
		}
		if j.done {
			return
		}
		if won {
			break
		}
		if engine.Sleep(ctx, lease.Poll(h.opts.Lease)) != nil {
			return
		}
	}
	defer h.leases.Release(leaseKey)

	t := h.opts.Target
	worst := h.opts.Batch.Worst(t.Price, t.SyncPrice).Cost(t.InputTokens(h.opts.Tokenizer.Count, j.req), provider.OutputCap(j.req))
	if !h.res.spend.ReserveWhenSettled(ctx, leaseKey, worst) {
		h.mu.Lock()
		h.res.HighlightsNotSent += len(j.sections)
		h.mu.Unlock()
		return
	}
	o := h.eng.Do(ctx, engine.Task{Key: leaseKey, Request: j.req})
	u := o.Response.Usage
	cost := h.opts.Batch.Price(o, t.Price, t.SyncPrice).CostOf(u)
	if errors.Is(o.Err, engine.ErrPending) {
		h.res.spend.Owe(leaseKey)
	} else {
		h.res.spend.Record(leaseKey, cost, o.Err == nil)
	}
	if o.Err != nil {
		h.fail(ctx, j, o.Err)
		return
	}
	body, _ := json.Marshal(j.req)
	// Stored even once ctx is cancelled: it is paid for.
	if err := st.SaveEvalResult(context.WithoutCancel(ctx), store.EvalResult{Key: j.key, Model: t.Spec.String(),
		LatencyMS: float64(o.Latency) / float64(time.Millisecond), InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CostUSD: cost, Request: body, Answer: o.Response.Text}); err != nil {
		h.fail(ctx, j, err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.use(j, o.Response.Text)
	h.res.HighlightsWritten++
	st2 := &h.res.Changelog.Stats
	st2.InputTokens += u.InputTokens
	st2.OutputTokens += u.OutputTokens
	st2.CostUSD += cost
	h.opts.Progress.Spent(st2.InputTokens+st2.OutputTokens, st2.CostUSD, h.eng.Stats().Retries)
}

// fail records a job that got no answer; an interruption is no failure of
// the job's, and is the run's to report.
func (h *highlighter) fail(ctx context.Context, j *highlightJob, err error) {
	if ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range j.sections {
		h.res.HighlightFailures = append(h.res.HighlightFailures, HighlightFailure{Repo: s.rr.repo.Path(), Version: s.version, Err: err})
	}
}

// estimateHighlights counts, in a dry run, the highlights requests the run
// would send: one per section of prompt.MinHighlights changes or more whose
// highlights are not stored, its input the request with at most
// prompt.MaxOutputTokens for each summary not known yet, its output the
// highlights' cap. A section met again in a second clone is counted once.
func estimateHighlights(ctx context.Context, opts Options, est *Estimate, runs []*repoRun) error {
	counted := map[string]bool{}
	for _, rr := range runs {
		for _, s := range rr.sections() {
			in, unknown := s.inputs()
			if len(in) < prompt.MinHighlights {
				continue
			}
			hashes := make([]string, len(in))
			for i, c := range in {
				hashes[i] = c.Commit
			}
			slices.Sort(hashes)
			seen := key.Of(append([]string{rr.id, s.version}, hashes...)...)
			if counted[seen] {
				continue
			}
			counted[seen] = true
			req, listed := prompt.Highlights(opts.Target.Spec.Model, in)
			req.ReasoningEffort = opts.effort()
			if unknown == 0 && opts.Store != nil {
				k := highlightsKey(opts, len(in), listed)
				found, err := opts.Store.EvalResults(ctx, []string{k})
				if err != nil {
					return err
				}
				if _, ok := found[k]; ok {
					est.HighlightsStored++
					continue
				}
			}
			est.Highlights++
			est.Requests++
			est.InputTokens += opts.Target.InputTokens(opts.Tokenizer.Count, req) + prompt.MaxOutputTokens*min(unknown, len(listed))
			est.MaxOutputTokens += opts.outputCap(prompt.HighlightsMaxTokens)
		}
	}
	return nil
}
