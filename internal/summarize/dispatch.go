package summarize

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/models"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/spend"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/textsafe"
)

// dispatcher carries a run's misses from preparation through batching and
// the engine to the store.
type dispatcher struct {
	opts Options
	res  *Output
	eng  engine.Runner

	mu       sync.Mutex // guards byKey, resolved and res: the producer and the committer share them
	byKey    map[string][]*pending
	resolved int // misses summarized or failed, as opposed to cut short

	// settled carries, for each request answered or failed, the commits to
	// ask about again alone: those a batch answer left out.
	settled chan []*pending

	// deferred are the misses another process holds the lease of; leases,
	// those this one holds and has not yet stored or failed.
	deferred []*pending
	leases   *lease.Holder

	// For --max-cost: what answered requests cost, and what the requests
	// in flight may cost at most. Guarded by mu.
	spend *spend.Cap // --max-cost, the run's across repositories and stages
}

// dispatch sends the misses through the engine in batches as they come,
// storing every summary the moment its answer arrives, until misses is
// closed and every commit it carried is settled.
func dispatch(ctx context.Context, opts Options, eng engine.Runner, misses <-chan *pending, res *Output) error {
	// Whatever ends the engine's run also stops the goroutines feeding it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := &dispatcher{opts: opts, res: res, eng: eng, byKey: map[string][]*pending{},
		leases:  lease.NewHolder(opts.Store, opts.Owner, opts.Lease, opts.Log),
		settled: make(chan []*pending, 2*max(1, opts.Concurrency)), spend: res.spend}
	// However the run ends (done, failed, interrupted), leases still held
	// are given back, so that a rerun need not wait for them to expire.
	defer d.leases.ReleaseAll()

	defer d.leases.Keep(ctx, d.opts.Log)()

	prepared := make(chan *pending)
	tasks := make(chan engine.Task)
	var feeders sync.WaitGroup
	// The feeders must be gone before dispatch returns: they report into res.
	defer feeders.Wait()
	defer cancel()
	var taken int
	var drained bool
	feeders.Go(func() {
		defer close(prepared)
		// Misses are claimed as the workers reach them, not all up front: a
		// second process on the same history then takes the commits this
		// one has not reached yet, instead of waiting for all of them.
		taken, drained = prepare(ctx, opts, misses, func(ps []*pending) []bool { return d.claim(ctx, ps) }, func(p *pending) bool {
			select {
			case prepared <- p:
				return true
			case <-ctx.Done():
				return false
			}
		}, func(p *pending, err error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.fail(p, err)
		})
	})
	feeders.Go(func() { d.batch(ctx, prepared, tasks) })

	err := eng.Run(ctx, tasks, d.commit(ctx))
	cancel() // the engine is done: stop the feeders, then read what they deferred
	feeders.Wait()
	d.mu.Lock()
	complete := drained && d.resolved+len(d.deferred) == taken
	res.deferred = append(res.deferred, d.deferred...)
	d.mu.Unlock()
	if errors.Is(err, context.Canceled) && complete {
		return nil // the signal came after the last answer: nothing was cut short
	}
	return err
}

// batch groups prepared commits into requests of up to BatchSize commits
// and BatchTokens tokens, waiting at most BatchWindow for a batch to fill,
// and re-sends alone each commit a batch answer left out. It closes tasks
// once every commit has been answered or failed.
func (d *dispatcher) batch(ctx context.Context, prepared <-chan *pending, tasks chan<- engine.Task) {
	defer close(tasks)
	size, window := max(1, d.opts.BatchSize), d.opts.BatchWindow
	var buf []*pending
	bufTokens := 0
	var ready []engine.Task
	outstanding := 0
	var timer *time.Timer
	var expired <-chan time.Time
	send := func(items []*pending) { ready = append(ready, d.task(items)) }
	flush := func() {
		if timer != nil {
			timer.Stop()
			timer, expired = nil, nil
		}
		if len(buf) > 0 {
			send(buf)
			buf, bufTokens = nil, 0
		}
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	// Requests waiting for the engine are bounded: past the bound, prepare
	// waits too. Unbounded, a provider slower than preparation (any hosted
	// one) left every commit of a long history prepared and held here.
	maxReady := 2 * max(1, d.opts.Concurrency)
	for prepared != nil || len(buf) > 0 || len(ready) > 0 || outstanding > 0 {
		in := prepared
		if len(ready) >= maxReady {
			in = nil
		}
		var out chan<- engine.Task
		var next engine.Task
		if len(ready) > 0 {
			switch {
			case d.affordable(ready[0].Key):
				out, next = tasks, ready[0]
			case outstanding == 0:
				// Nothing in flight will free budget for this request: leave it
				// unsent and go on with the next, which may be cheaper.
				d.notSent(d.forgetRequest(ready[0].Key))
				ready = ready[1:]
				continue
			}
			// Otherwise hold the request until an answer settles what was spent.
		}
		select {
		case <-ctx.Done():
			return
		case p, ok := <-in:
			if !ok {
				prepared = nil
				flush()
				continue
			}
			if len(buf) > 0 && d.requestTokens(bufTokens+p.tokens, len(buf)+1) > d.opts.BatchTokens {
				flush()
			}
			buf = append(buf, p)
			bufTokens += p.tokens
			if len(buf) >= size || window <= 0 && !d.opts.Batch.On {
				flush()
			} else if timer == nil && !d.opts.Batch.On {
				// Through a batch API, requests are grouped by size alone, so
				// that a rerun after a crash groups the same commits alike.
				timer = time.NewTimer(window)
				expired = timer.C
			}
		case <-expired:
			timer, expired = nil, nil
			flush()
		case out <- next:
			d.reserve(next.Key)
			ready = ready[1:]
			outstanding++
		case again := <-d.settled:
			outstanding--
			for _, p := range again {
				send([]*pending{p}) // alone, and through the cost check like any request
			}
		}
	}
}

// claim reports which misses this process wins the lease of. It defers
// those another process is summarizing right now and fails them all when
// the leases cannot be asked for; while the run is ending, it leaves them.
func (d *dispatcher) claim(ctx context.Context, misses []*pending) []bool {
	keys := make([]string, len(misses))
	for i, p := range misses {
		keys[i] = p.leaseKey(d.opts)
	}
	won, err := d.leases.ClaimAll(ctx, keys)
	if err == nil {
		err = d.dropStored(ctx, misses, won)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			for _, p := range misses {
				d.fail(p, err)
			}
		}
		return make([]bool, len(misses))
	}
	for i, p := range misses {
		if !won[i] {
			d.deferred = append(d.deferred, p)
		}
	}
	return won
}

// dropStored gives back the leases just won of commits whose summaries
// another process stored, and let go of, since the cache lookup: deferred,
// they are read from the store instead of paid for again.
func (d *dispatcher) dropStored(ctx context.Context, misses []*pending, won []bool) error {
	byRepo := map[*repoRun][]string{}
	for i, p := range misses {
		if won[i] {
			byRepo[p.repo] = append(byRepo[p.repo], p.commit.Hash)
		}
	}
	for rr, hashes := range byRepo {
		found, err := rr.summaries(ctx, d.opts, hashes)
		if err != nil {
			return err
		}
		for i, p := range misses {
			if _, ok := found[p.commit.Hash]; ok && won[i] && p.repo == rr {
				won[i] = false
				d.release(p)
			}
		}
	}
	return nil
}

// release gives up a commit's lease once it is stored or failed: waiting
// processes need not wait out its expiry.
func (d *dispatcher) release(p *pending) {
	d.leases.Release(p.leaseKey(d.opts))
}

// task builds the request for a batch and remembers which commits it holds.
func (d *dispatcher) task(items []*pending) engine.Task {
	commits := make([]prompt.Commit, len(items))
	keys := make([]string, len(items))
	members := make([]string, len(items))
	for i, p := range items {
		commits[i] = p.sent
		keys[i] = key.Commit(p.repo.id, p.commit.Hash)
		members[i] = p.leaseKey(d.opts)
	}
	k := keys[0]
	if len(keys) > 1 {
		k = "batch:" + key.Of(keys...)
	}
	req := prompt.Request(d.opts.Target.Spec.Model, commits)
	req.ReasoningEffort = d.opts.effort()
	d.mu.Lock()
	d.byKey[k] = items
	d.mu.Unlock()
	return engine.Task{Key: k, Request: req, Members: members}
}

// forgetRequest forgets the request under key and returns its commits.
func (d *dispatcher) forgetRequest(k string) []*pending {
	d.mu.Lock()
	defer d.mu.Unlock()
	items := d.byKey[k]
	delete(d.byKey, k)
	return items
}

// promptOverhead is the system prompt and framing around the commits.
const promptOverhead = 300

// requestTokens bounds a request's tokens, as the model counts them: the
// commits' input and the framing, and every output token the request
// allows.
func (d *dispatcher) requestTokens(input, commits int) int {
	return d.opts.Target.Scale(input+promptOverhead) + d.opts.outputCap(prompt.MaxOutputTokens*commits)
}

// worstCost bounds what the request under key can cost: its estimated
// input and every output token it allows. Callers hold mu.
func (d *dispatcher) worstCost(k string) float64 {
	items := d.byKey[k]
	input := promptOverhead
	for _, p := range items {
		input += p.tokens
	}
	t := d.opts.Target
	return d.opts.Batch.Worst(t.Price, t.SyncPrice).Cost(t.Scale(input), d.opts.outputCap(prompt.MaxOutputTokens*len(items)))
}

// affordable reports whether sending the request under key keeps the run's
// worst-case cost within --max-cost.
func (d *dispatcher) affordable(k string) bool {
	if !d.spend.Limited() {
		return true
	}
	d.mu.Lock()
	worst := d.worstCost(k)
	d.mu.Unlock()
	return d.spend.Fits(worst)
}

// reserve books the worst case of a request being sent until it settles.
func (d *dispatcher) reserve(k string) {
	if !d.spend.Limited() {
		return
	}
	d.mu.Lock()
	worst := d.worstCost(k)
	d.mu.Unlock()
	d.spend.Reserve(k, worst)
}

// notSent records commits left unsummarized because of --max-cost.
func (d *dispatcher) notSent(items []*pending) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range items {
		d.resolved++
		d.release(p)
		d.res.NotSent++
	}
}

// commit handles one answered request: every commit the answer names by its
// full hash is stored; the others are failed, or asked about again alone if
// they shared the request with other commits. Summaries are stored even
// once ctx is cancelled: they are paid for.
func (d *dispatcher) commit(ctx context.Context) func(engine.Outcome) error {
	storeCtx := context.WithoutCancel(ctx)
	return func(o engine.Outcome) error {
		again, err := d.finishRequest(storeCtx, o)
		if err != nil {
			return err
		}
		// Outside mu: batch takes it to build requests, and may be building
		// one now rather than reading settled.
		select {
		case d.settled <- again:
		case <-ctx.Done(): // batch is gone
		}
		return nil
	}
}

// finishRequest stores or fails the commits of an answered request and returns
// those to ask about again.
func (d *dispatcher) finishRequest(storeCtx context.Context, o engine.Outcome) ([]*pending, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	items := d.byKey[o.Task.Key]
	delete(d.byKey, o.Task.Key)
	if errors.Is(o.Err, engine.ErrPending) {
		d.spend.Owe(o.Task.Key)
	} else {
		d.spend.Record(o.Task.Key, d.price(o).CostOf(o.Response.Usage), o.Err == nil)
	}
	var tooLarge *engine.TooLargeError
	if o.Err != nil && len(items) > 1 && errors.As(o.Err, &tooLarge) {
		return items, nil // each alone may fit where together they do not
	}
	if errors.Is(o.Err, engine.ErrPending) {
		for _, p := range items {
			d.pend(p)
		}
		return nil, nil
	}
	if o.Err != nil {
		for _, p := range items {
			d.fail(p, o.Err)
		}
		return nil, nil
	}
	if why := unfinished(o.Response); why != "" {
		// A refusal or a cut answer is never stored as a summary. Asked
		// together, each commit is asked again alone: one commit's diff may
		// be what was refused, or what overran the cap.
		d.spendUnstored(o)
		if len(items) > 1 {
			d.opts.Log.Debug("answer "+why+"; asking again one by one", "commits", len(items))
			return items, nil
		}
		for _, p := range items {
			d.fail(p, errors.New(why))
		}
		return nil, nil
	}
	hashes := make([]string, len(items))
	for i, p := range items {
		hashes[i] = p.commit.Hash
	}
	answers, _ := prompt.ParseAnswer(o.Response.Text, hashes)
	var answered, again []*pending
	for _, p := range items {
		switch {
		case answers[p.commit.Hash].Summary != "":
			answered = append(answered, p)
		case len(items) > 1:
			again = append(again, p)
		default:
			d.fail(p, errors.New("the model's answer has no summary for this commit"))
		}
	}
	usages := shareUsage(answered, answers, o.Response.Usage)
	for i, p := range answered {
		if err := d.store(storeCtx, p, answers[p.commit.Hash], usages[i], d.price(o)); err != nil {
			return nil, err
		}
	}
	if len(again) > 0 {
		d.opts.Log.Debug("batch answer left commits out; asking again one by one", "missing", len(again), "of", len(items))
	}
	return again, nil
}

// price is what an answer was billed at.
func (d *dispatcher) price(o engine.Outcome) models.Price {
	return d.opts.Batch.Price(o, d.opts.Target.Price, d.opts.Target.SyncPrice)
}

// unfinished says why an answer cannot be stored as summaries, or "": a
// refusal (its words kept in the reason), or an answer cut short.
func unfinished(r provider.Response) string {
	switch r.Finish {
	case provider.FinishRefusal:
		return fmt.Sprintf("the model refused to summarize it: %q", clip(textsafe.Line(r.Text), 200))
	case provider.FinishContentFilter:
		return "the provider's content filter withheld or cut the summary"
	case provider.FinishLength:
		return fmt.Sprintf("the summary was cut at the output-token cap (%d tokens a commit)", prompt.MaxOutputTokens)
	}
	return ""
}

// clip cuts s to at most n bytes, on a character's boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// spendUnstored counts what an answer that stored no summary was paid.
func (d *dispatcher) spendUnstored(o engine.Outcome) {
	st := &d.res.Changelog.Stats
	st.InputTokens += o.Response.Usage.InputTokens
	st.OutputTokens += o.Response.Usage.OutputTokens
	st.CostUSD += d.price(o).CostOf(o.Response.Usage)
}

// shareUsage splits a batch's tokens among the commits it answered: input
// (and its cached part) by the size of each commit's part of the prompt,
// output by the length of each summary. The shares add up to the totals
// exactly, and so do their costs.
func shareUsage(answered []*pending, answers map[string]prompt.Answer, u provider.Usage) []provider.Usage {
	inWeights := make([]int, len(answered))
	outWeights := make([]int, len(answered))
	for i, p := range answered {
		inWeights[i] = p.tokens
		outWeights[i] = len(answers[p.commit.Hash].Summary)
	}
	inputs, outputs := split(u.InputTokens, inWeights), split(u.OutputTokens, outWeights)
	reads, writes := split(u.CacheReadTokens, inWeights), split(u.CacheWriteTokens, inWeights)
	out := make([]provider.Usage, len(answered))
	for i := range out {
		out[i] = provider.Usage{InputTokens: inputs[i], OutputTokens: outputs[i], CacheReadTokens: reads[i], CacheWriteTokens: writes[i]}
	}
	return out
}

func split(total int, weights []int) []int {
	out := make([]int, len(weights))
	sum := 0
	for _, w := range weights {
		sum += w
	}
	if len(weights) == 0 {
		return out
	}
	given := 0
	for i, w := range weights {
		if sum > 0 {
			out[i] = total * w / sum
		} else {
			out[i] = total / len(weights)
		}
		given += out[i]
	}
	// Integer division leaves a remainder: hand it out largest weight first.
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return weights[order[a]] > weights[order[b]] })
	for i := 0; given < total; i = (i + 1) % len(order) {
		out[order[i]]++
		given++
	}
	return out
}

// store saves one commit's summary and reports it; callers hold mu.
func (d *dispatcher) store(ctx context.Context, p *pending, a prompt.Answer, u provider.Usage, price models.Price) error {
	st := &d.res.Changelog.Stats
	kind := kindOf(a, p.commit.Message, p.paths())
	sum := store.Summary{
		SummaryKey:   p.repo.cacheKey(d.opts, prompt.Version, p.commit.Hash),
		Text:         a.Summary,
		ChangeType:   kind.Type,
		ChangeScope:  kind.Scope,
		Breaking:     kind.Breaking,
		InputTokens:  u.InputTokens,
		OutputTokens: u.OutputTokens,
		CostUSD:      price.CostOf(u),
		DiffTokens:   p.cut.Tokens,
		Truncated:    p.cut.Truncated,
		SkippedFiles: encodeSkipped(p.skipped),
		Partial:      p.incomplete(),
	}
	c := p.commit
	if err := d.opts.Store.SaveSummary(ctx, store.Commit{RepoID: p.repo.id, Hash: c.Hash, AuthorName: c.AuthorName,
		AuthorEmail: c.AuthorEmail, AuthorDate: c.AuthorDate, CommitDate: c.CommitDate, Subject: c.Subject}, sum); err != nil {
		return err
	}
	fillFromSummary(p.entry, sum, p.commit.Message)
	d.resolved++
	d.release(p)
	st.Summarized++
	st.SkippedFiles += len(p.skipped)
	d.countRedacted(p)
	st.InputTokens += sum.InputTokens
	st.OutputTokens += sum.OutputTokens
	st.CostUSD += sum.CostUSD
	d.opts.Progress.Spent(st.InputTokens+st.OutputTokens, st.CostUSD, d.eng.Stats().Retries)
	d.opts.Progress.Done(1)
	d.opts.Log.Debug("summarized", "commit", c.Hash, "diff_tokens", p.cut.Tokens)
	p.forget()
	return nil
}

// countRedacted adds the secrets kept out of p's request to the run's
// counts, whether or not a summary came back: they were kept from leaving
// either way. Callers hold mu.
func (d *dispatcher) countRedacted(p *pending) {
	d.res.Redacted.Add(p.redacted)
	d.res.Changelog.Stats.RedactedSecrets += p.redacted.Total()
}

// pend records a commit whose request waits in a provider's batch: it is
// neither summarized nor failed, and a rerun collects it. Callers hold mu.
func (d *dispatcher) pend(p *pending) {
	d.resolved++
	d.release(p)
	d.res.Pending++
	p.forget()
	d.countRedacted(p)
	d.opts.Progress.Done(1)
}

// fail records a commit that got no summary; callers hold mu.
func (d *dispatcher) fail(p *pending, err error) {
	var tooLarge *engine.TooLargeError
	if pe := (*provider.Error)(nil); errors.As(err, &tooLarge) && errors.As(err, &pe) {
		// The commit alone is over the limit: summarize's own flags cut it.
		named := *pe
		named.Hint = "Try: a lower --max-diff-tokens, or a higher --tpm if the model allows it"
		err = &named
	}
	d.resolved++
	d.release(p)
	d.res.Failures = append(d.res.Failures, Failure{Repo: p.repo.repo.Path(), Commit: p.commit.Hash, Err: err})
	d.res.Changelog.Stats.Failed++
	p.forget()
	d.countRedacted(p)
	d.opts.Progress.Done(1)
}
