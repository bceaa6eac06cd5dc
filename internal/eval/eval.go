// Package eval runs a prompt dataset against several models through the
// shared engine, scores every answer, and stores each result the moment it
// lands, so that a rerun asks only for what is missing.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/lease"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/spend"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// Params are the sampling parameters every request carries.
type Params struct {
	Temperature     *float64 `json:"temperature,omitempty"`
	MaxTokens       int      `json:"max_tokens"`
	Seed            *int     `json:"seed,omitempty"`
	ReasoningEffort string   `json:"reasoning_effort,omitempty"`
	Repeat          int      `json:"repeat"`
	System          string   `json:"system,omitempty"` // used when an item has none
	// NotSent names, per model, the flags its API does not take, which its
	// requests went without: Run records it (NotSentBy).
	NotSent map[string][]string `json:"not_sent,omitempty"`
}

// NotSentBy is, per model that refuses some of them, the flags of p its
// requests go without, by the models' rules: what a run says once at its
// start and records in its parameters.
func (p Params) NotSentBy(models []target.Target) map[string][]string {
	out := map[string][]string{}
	for _, m := range models {
		_, dropped := m.Rules.Apply(provider.Request{Temperature: p.Temperature, Seed: p.Seed, ReasoningEffort: p.ReasoningEffort})
		if len(dropped) > 0 {
			out[m.Spec.String()] = dropped
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Options configure a run.
type Options struct {
	Dataset string    // name, as shown in reports
	Source  io.Reader // the dataset's lines
	Read    dataset.Options
	Limit   int // items at most (0: all)
	Models  []target.Target
	Params  Params
	Scorer  *score.Scorer
	// Judge grades judge assertions; nil when there is none. Its calls go
	// through an engine of their own and count toward MaxCost.
	Judge       *target.Target
	Concurrency int
	Timeout     time.Duration
	// MaxWait and MaxFailures stop a run against a provider that asks for
	// a longer wait, or fails that many requests in a row (engine's
	// defaults when zero; negative: never).
	MaxWait     time.Duration
	MaxFailures int
	Tokenizer   *tokenizer.Tokenizer
	Store       store.Store
	Progress    Progress
	Log         *slog.Logger
	Now         func() time.Time
	DryRun      bool
	MaxCost     float64
	// Owner names this process in the leases it takes on the keys it is
	// asking for; Lease is how long another process waits for such a key
	// should this one die. Empty and zero: lease.NewOwner and lease.Default.
	Owner string
	Lease time.Duration
	// Batch sends every request, verdicts included, through the models'
	// batch APIs: half the price, answers within a day.
	Batch batchrun.Mode
	// Redactor, when set, replaces the secrets in each item's prompt before
	// it is keyed and sent, as summarize does with diffs. Secrets are
	// scrubbed from every prompt, expected answer, answer and error,
	// whatever their source.
	Redactor *redact.Redactor
	Secrets  redact.Secrets
}

// Progress hears how far a run has got.
type Progress interface {
	Done(n int)
	Spent(tokens int, costUSD float64, retries int64)
}

type noProgress struct{}

func (noProgress) Done(int)                  {}
func (noProgress) Spent(int, float64, int64) {}

// RunStats is what a run did.
type RunStats struct {
	RunID    string
	Items    int
	Skipped  []*dataset.LineError
	Estimate []Estimate // per model, for a dry run
	NotSent  int        // results left unrequested by --max-cost
	// Unchecked counts the results of items with nothing to check (no
	// expected answer, no assertion of their own or from --assert): never
	// sent, recorded as errors.
	Unchecked int
	// Pending are the results whose requests wait in a provider's batch
	// that had not ended when the run stopped waiting (--no-wait).
	Pending  int
	Requests int64
	Retries  int64
	// JudgeVerdicts and JudgeCostUSD are the verdicts this run paid the
	// judge for and what they cost; a verdict found stored is free.
	JudgeVerdicts int
	JudgeCostUSD  float64
	// Redacted counts the secrets replaced in the items' prompts, by rule.
	Redacted redact.Counts
}

// Estimate is what a dry run counted for one model, or for the judge.
type Estimate struct {
	Model           string `json:"model"`
	Judge           bool   `json:"judge,omitempty"` // the verdicts of the grading model
	Requests        int    `json:"requests"`
	Cached          int    `json:"cached"`
	InputTokens     int    `json:"input_tokens"`
	MaxOutputTokens int    `json:"max_output_tokens"`
	// CostUSD is the most the requests could cost; nil when the model's
	// price is unknown.
	CostUSD *float64 `json:"cost_usd"`
}

// job is one model's answer to one item and repeat.
type job struct {
	model  int
	item   dataset.Item
	repeat int
	key    string
	req    provider.Request
}

// Run evaluates the dataset.
func Run(ctx context.Context, o Options) (*RunStats, error) {
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Lease <= 0 {
		o.Lease = lease.Default
	}
	if o.Owner == "" {
		o.Owner = lease.NewOwner()
	}
	o.Params.Repeat = max(1, o.Params.Repeat)
	r := &runner{o: o, out: &RunStats{Redacted: redact.Counts{}}, pending: map[string]*inFlight{}, spend: spend.New(o.MaxCost),
		deferred: map[string][]job{}, leases: lease.NewHolder(o.Store, o.Owner, o.Lease, o.Log)}
	if o.Judge != nil && !o.DryRun {
		o.Scorer.Judge = r.judge(*o.Judge)
	}
	names := make([]string, len(o.Models))
	for i, m := range o.Models {
		names[i] = m.Spec.String()
	}
	started := o.Now()
	r.out.RunID = started.UTC().Format("20060102-150405") + "-" + key.Of(o.Dataset, fmt.Sprint(names), fmt.Sprint(started.UnixNano()))[:6]
	if o.DryRun {
		return r.dryRun(ctx)
	}
	o.Params.NotSent = o.Params.NotSentBy(o.Models)
	params, _ := json.Marshal(o.Params)
	var paramMap map[string]any
	json.Unmarshal(params, &paramMap)
	if err := o.Store.StartRun(ctx, store.EvalRun{ID: r.out.RunID, Dataset: o.Dataset, Models: names, Params: paramMap, CreatedAt: started}); err != nil {
		return nil, err
	}
	err := r.run(ctx)
	if err == nil && r.out.Items == 0 {
		err = r.noItems()
		if dropErr := o.Store.DropRunIfEmpty(context.WithoutCancel(ctx), r.out.RunID); dropErr != nil {
			err = joinUnlessSame(err, dropErr)
		}
		return r.out, err
	}
	if err == nil && r.out.Items > 0 && r.out.Unchecked == r.out.Items*len(o.Models)*o.Params.Repeat {
		// Nothing was sent: the run is kept, finished, for its rows
		// say why every item failed to be checked.
		err = ErrNothingToCheck
		if finishErr := o.Store.FinishRun(context.WithoutCancel(ctx), r.out.RunID, o.Now(), r.judgeSpend()); finishErr != nil {
			err = joinUnlessSame(err, finishErr)
		}
		return r.out, err
	}
	switch {
	case err == nil && r.out.Pending > 0:
		// Left waiting in batches (--no-wait): the rerun that collects
		// them is the run; this one is kept only for the cached rows it
		// wrote, unfinished, as an interrupted one is.
		err = o.Store.DropRunIfEmpty(context.WithoutCancel(ctx), r.out.RunID)
	case err == nil:
		err = o.Store.FinishRun(context.WithoutCancel(ctx), r.out.RunID, o.Now(), r.judgeSpend())
	default:
		if dropErr := o.Store.DropRunIfEmpty(context.WithoutCancel(ctx), r.out.RunID); dropErr != nil {
			err = joinUnlessSame(err, dropErr)
		}
	}
	return r.out, err
}

// joinUnlessSame adds the error of tidying up after a run to the run's
// own, unless both say the database server is lost: the line would say
// so twice, each time with the same Try.
func joinUnlessSame(err, tidy error) error {
	if errors.Is(err, store.ErrUnreachable) && errors.Is(tidy, store.ErrUnreachable) {
		return err
	}
	return errors.Join(err, tidy)
}

// judgeSpend is what the run paid its judge, as the run's record keeps it:
// runs show reads the judge's line from there.
func (r *runner) judgeSpend() *store.RunJudge {
	if r.o.Judge == nil {
		return nil
	}
	j := &store.RunJudge{Model: r.o.Judge.Spec.String(), Verdicts: r.out.JudgeVerdicts}
	if !r.o.Judge.PriceUnknown {
		cost := r.out.JudgeCostUSD
		j.CostUSD = &cost
	}
	return j
}

type runner struct {
	o   Options
	out *RunStats

	engines     []engine.Runner
	judgeEngine engine.Runner
	// leases are the keys this process is asking about (answers and
	// verdicts), given back as their answers are stored.
	leases  *lease.Holder
	scoring *scoring // nil: answers are scored in place
	// writes stores every answer, row and release of the run, in batches.
	writes *writer
	// mu guards pending, deferred, answered and the outcome's counts. It is
	// never held across a call to the database: requests would wait on
	// each other's round trips.
	mu          sync.Mutex
	pending     map[string]*inFlight // requests sent, by key, until their rows are stored
	deferred    map[string][]job     // keys another process holds the lease of, with the jobs waiting for their answer
	answered    map[string]struct{}  // keys answered lately, in answerOrder
	answerOrder []string
	spend       *spend.Cap // --max-cost, answers and verdicts alike
	judgeMu     sync.Mutex // guards the outcome's judge figures
	// verdicts asks the judge each verdict once within the run: the
	// claims that keep other processes from asking it again are this
	// process's own for every goroutine, so twin answers graded at once
	// would each win theirs.
	verdicts singleflight.Group
}

// inFlight is a request sent for one key, and the jobs that share its
// answer: several items may ask the same thing. Once the outcome is in,
// answered is set and a job reaching the key is recorded from it at once;
// the key leaves pending when the outcome's rows are stored, and a job
// reaching it after that finds the answer in the store.
type inFlight struct {
	jobs     []job
	answered bool
	answer   score.Answer
	err      error // the request's failure, if it failed
}

// request builds the provider-neutral request for an item.
func (r *runner) request(m target.Target, it dataset.Item) provider.Request {
	system := it.System
	if system == "" {
		system = r.o.Params.System
	}
	// What the model does not take is left out here, before the key is
	// made: the key holds what is sent. The system prompt and the turns
	// before the question are shared across items, worth caching.
	req, _ := m.Rules.Apply(provider.Request{Model: m.Spec.Model, System: system, Messages: it.Messages, MaxTokens: r.o.Params.MaxTokens,
		Temperature: r.o.Params.Temperature, Seed: r.o.Params.Seed, ReasoningEffort: r.o.Params.ReasoningEffort, CachePrefix: true})
	return req
}

func (r *runner) keyOf(m target.Target, req provider.Request, repeat int) string {
	return key.Request{Provider: m.Spec.Provider, BaseURL: key.BaseURL(m.BaseURL), Model: m.Spec.Model, Temperature: req.Temperature,
		MaxTokens: req.MaxTokens, Seed: req.Seed, System: req.System, Messages: req.Messages, Repeat: repeat, ReasoningEffort: req.ReasoningEffort}.Key()
}

// lookupBatch is how many jobs share one cache lookup.
const lookupBatch = 256

// run streams the dataset: each item's jobs are answered from the store
// when their key is there, and sent to the model's engine otherwise.
func (r *runner) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// However the run ends, the leases still held are given back, so that
	// a rerun or another process need not wait for them to expire; until
	// then they are kept from expiring under a request that takes long.
	defer r.leases.ReleaseAll()
	lease.Sweep(ctx, r.o.Store, r.o.Owner, r.o.Log)
	defer r.leases.Keep(ctx, r.o.Log)()
	// Whatever stops the run, the writer is closed only once the engines
	// and the scoring are done: what they handed it, answers that arrived
	// after an interrupt included, is committed before the run returns.
	r.writes = newWriter(r.o.Store, r.leases, cancel)
	if r.o.Judge != nil {
		slots := r.o.Concurrency
		if r.o.Batch.On {
			// Every verdict a batch's answers ask for waits in the judge's
			// next batch together, not a few batches' worth at a time.
			slots = batchScoring
		}
		r.scoring = newScoring(slots, cancel)
	}
	queues := make([]chan engine.Task, len(r.o.Models))
	var wg sync.WaitGroup
	errs := make([]error, len(r.o.Models))
	for i, m := range r.o.Models {
		eng := m.Engine(r.setup())
		r.engines = append(r.engines, eng)
		queues[i] = make(chan engine.Task)
		wg.Go(func() {
			errs[i] = eng.Run(ctx, queues[i], r.commit(ctx, i))
			if errs[i] != nil {
				cancel() // a fatal error or a failed write stops every model
			}
		})
	}
	readErr := r.feed(ctx, queues)
	if readErr == nil {
		readErr = r.awaitDeferred(ctx, queues)
	}
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	errs = append(errs, r.scoring.wait(), r.writes.close())
	for _, e := range append(r.engines, r.judgeEngine) {
		if e == nil {
			continue
		}
		st := e.Stats()
		r.out.Requests += st.Requests
		r.out.Retries += st.Retries
	}
	// One model's fatal error cancels the others: report the cause, not
	// the cancellations it caused.
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return readErr
}

// batchScoring is how many answers are scored at once through a batch
// API: the verdicts they wait for go out in one batch.
const batchScoring = 4096

// setup is what the run adds to each target to build its engine, the same
// for answers and verdicts.
func (r *runner) setup() target.Setup {
	return target.Setup{Store: r.o.Store, Concurrency: r.o.Concurrency, Timeout: r.o.Timeout, MaxWait: r.o.MaxWait,
		MaxFailures: r.o.MaxFailures, Log: r.o.Log, Count: r.o.Tokenizer.Count, Batch: r.o.Batch, Secrets: r.o.Secrets}
}

// feed reads the dataset and dispatches its jobs in lookup batches.
func (r *runner) feed(ctx context.Context, queues []chan engine.Task) error {
	var batch []job
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		defer func() { batch = batch[:0] }()
		keys := make([]string, len(batch))
		for i, j := range batch {
			keys[i] = j.key
		}
		cached, err := r.o.Store.EvalResults(ctx, keys)
		if err != nil {
			return err
		}
		var hits, misses []job
		var answers []score.Answer
		for _, j := range batch {
			if res, ok := cached[j.key]; ok {
				hits, answers = append(hits, j), append(answers, storedAnswer(res))
			} else {
				misses = append(misses, j)
			}
		}
		if r.scoring == nil {
			// Scored in place, a lookup batch's hits share one write: a
			// cached rerun is bound by the lookups, not by commits.
			if err := r.storeRows(ctx, hits, answers, false, nil); err != nil {
				return err
			}
		} else {
			for i, j := range hits {
				if err := r.scoring.do(func() error { return r.storeRows(ctx, []job{j}, answers[i:i+1], false, nil) }); err != nil {
					return err
				}
			}
		}
		return r.dispatch(ctx, queues, misses)
	}
	items := 0
	var unchecked []store.RunResult
	skipped, err := dataset.Read(r.o.Source, r.o.Read, func(it dataset.Item) error {
		items++
		it = r.clean(it)
		if found, ok := r.o.Progress.(interface{ Found(int) }); ok {
			found.Found(len(r.o.Models) * r.o.Params.Repeat)
		}
		if why := uncheckable(r.o.Scorer, it); why != "" {
			if err := r.addUnchecked(ctx, &unchecked, it, why); err != nil {
				return err
			}
			return r.stopAt(ctx, items)
		}
		for mi, m := range r.o.Models {
			req := r.request(m, it)
			for rep := range r.o.Params.Repeat {
				batch = append(batch, job{model: mi, item: it, repeat: rep, key: r.keyOf(m, req, rep), req: req})
				// Repeats stream like items: however many are asked for,
				// one lookup batch at a time is held, and a stop is heard
				// between two of them.
				if len(batch) >= lookupBatch {
					if err := flush(); err != nil {
						return err
					}
					if err := ctx.Err(); err != nil {
						return err
					}
				}
			}
		}
		return r.stopAt(ctx, items)
	})
	r.out.Items, r.out.Skipped = items, skipped
	if err != nil && !errors.Is(err, errLimit) {
		return err
	}
	if err := r.saveUnchecked(ctx, &unchecked); err != nil {
		return err
	}
	return flush()
}

// clean is it as it may leave the machine and be stored: the secrets the
// redactor finds in its prompt replaced by markers, and the environment's
// secrets scrubbed from its prompt and expected answers, wherever they came
// from (a dataset line, a file a config names).
func (r *runner) clean(it dataset.Item) dataset.Item {
	text := func(s string) string {
		if r.o.Redactor != nil {
			var found redact.Counts
			s, found = r.o.Redactor.Redact(s)
			if found.Total() > 0 {
				r.mu.Lock()
				r.out.Redacted.Add(found)
				r.mu.Unlock()
			}
		}
		return r.o.Secrets.Scrub(s)
	}
	it.System = text(it.System)
	it.Messages = slices.Clone(it.Messages)
	for i := range it.Messages {
		it.Messages[i].Content = text(it.Messages[i].Content)
	}
	if len(r.o.Secrets) == 0 {
		return it
	}
	// Expected answers and assertion values are compared here, not sent
	// (but for a judge's rubric): markers would change what they check, so
	// only the environment's secrets leave them.
	it.Asserts = slices.Clone(it.Asserts)
	for i, a := range it.Asserts {
		switch v := a.Value.(type) {
		case string:
			it.Asserts[i].Value = r.o.Secrets.Scrub(v)
		case []any:
			vs := slices.Clone(v)
			for j, e := range vs {
				if s, ok := e.(string); ok {
					vs[j] = r.o.Secrets.Scrub(s)
				}
			}
			it.Asserts[i].Value = vs
		}
	}
	it.Expected = slices.Clone(it.Expected)
	for i := range it.Expected {
		it.Expected[i] = r.o.Secrets.Scrub(it.Expected[i])
	}
	return it
}

// stopAt stops the reading after the item limit, before a line past it is
// read, or once the run is cancelled.
func (r *runner) stopAt(ctx context.Context, items int) error {
	if r.o.Limit > 0 && items == r.o.Limit {
		return errLimit
	}
	return ctx.Err()
}

// ErrNothingToCheck is the error of a run none of whose items has anything
// to check: nothing was sent.
var ErrNothingToCheck = errors.New(`every item has nothing to check, so nothing was sent. Try: give the items "expected" answers, or --assert json or judge, which need none`)

// ErrNoItems is the error of a dataset with no items at all: an empty file,
// blank lines only, or every line skipped as invalid. A run of nothing
// would pass any gate and every CI job: it is refused, and nothing of it
// is kept.
var ErrNoItems = errors.New("the dataset has no items")

type noItemsError struct {
	name    string
	skipped int
}

func (e *noItemsError) Is(target error) bool { return target == ErrNoItems }

func (e *noItemsError) Error() string {
	if e.skipped > 0 {
		return fmt.Sprintf("every line of %s was skipped as invalid (%d), so there is nothing to evaluate. Try: mend the lines named above, or leave out --skip-invalid to stop at the first", e.name, e.skipped)
	}
	return fmt.Sprintf(`%s has no items: it is empty or holds only blank lines. Try: one JSON object per line, such as {"prompt": "What is 2 + 2?", "expected": "4"}`, e.name)
}

// noItems is the error of a run that read no item, or nil.
func (r *runner) noItems() error {
	if r.out.Items > 0 {
		return nil
	}
	name := r.o.Dataset
	switch name {
	case "-":
		name = "stdin"
	case "":
		name = "the dataset"
	}
	return &noItemsError{name: name, skipped: len(r.out.Skipped)}
}

// uncheckable says why no answer to it could be graded, without asking for
// one, or "": nothing to check (evalreport.NothingToCheck), or an assertion
// that cannot be checked (no value and no expected answer, a promptfoo
// test with no assertion, a bad pattern). Such an item is never sent: its
// answer would fail for want of a check, not for being wrong.
func uncheckable(sc *score.Scorer, it dataset.Item) string {
	ok, err := sc.Checkable(it)
	switch {
	case err != nil:
		return err.Error()
	case !ok:
		return evalreport.NothingToCheck
	}
	return ""
}

// addUnchecked adds the error rows of an item with nothing to check, one
// per model and repeat, under the keys its requests would have had, and
// stores them a lookup batch at a time.
func (r *runner) addUnchecked(ctx context.Context, rows *[]store.RunResult, it dataset.Item, why string) error {
	for _, m := range r.o.Models {
		req := r.request(m, it)
		for rep := range r.o.Params.Repeat {
			*rows = append(*rows, store.RunResult{RunID: r.out.RunID, Model: m.Spec.String(), Item: it.ID, Line: it.Line,
				Repeat: rep, Key: r.keyOf(m, req, rep), Expected: it.Expected, Error: why})
			if len(*rows) >= lookupBatch {
				if err := r.saveUnchecked(ctx, rows); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// saveUnchecked stores the rows of items with nothing to check.
func (r *runner) saveUnchecked(ctx context.Context, rows *[]store.RunResult) error {
	if len(*rows) == 0 {
		return nil
	}
	saved := slices.Clone(*rows)
	r.mu.Lock()
	r.out.Unchecked += len(saved)
	r.mu.Unlock()
	if err := r.writes.add(write{rows: saved, stored: func() { r.o.Progress.Done(len(saved)) }}); err != nil {
		return err
	}
	*rows = (*rows)[:0]
	return ctx.Err()
}

var errLimit = errors.New("item limit reached")

// dispatch sends the jobs of a lookup batch that missed the cache, one
// request per key: a job whose request is in flight, or waits for another
// process, shares its answer; one whose answer is in is recorded from it;
// the keys new to the run are claimed together (claimAndSend).
func (r *runner) dispatch(ctx context.Context, queues []chan engine.Task, jobs []job) error {
	var fresh [][]job // by key, in the order first reached
	byKey := map[string]int{}
	var late []job // of requests answered already
	var lateFrom []*inFlight
	r.mu.Lock()
	for _, j := range jobs {
		if f, sent := r.pending[j.key]; sent {
			if f.answered {
				late, lateFrom = append(late, j), append(lateFrom, f)
			} else {
				f.jobs = append(f.jobs, j)
			}
			continue
		}
		if waiting, ok := r.deferred[j.key]; ok {
			r.deferred[j.key] = append(waiting, j)
			continue
		}
		if i, ok := byKey[j.key]; ok {
			fresh[i] = append(fresh[i], j)
			continue
		}
		byKey[j.key] = len(fresh)
		fresh = append(fresh, []job{j})
	}
	r.mu.Unlock()
	for i, j := range late {
		f := lateFrom[i] // answered is final: read without the lock
		if err := r.scoring.do(func() error { return r.storeRows(ctx, []job{j}, []score.Answer{f.answer}, false, f.err) }); err != nil {
			return err
		}
	}
	return r.claimAndSend(ctx, queues, fresh)
}

// claimAndSend claims the keys of groups of jobs (a group per key) in one
// go and sends one request for each group, unless another process holds
// its key (the jobs wait for its answer), the answer is in the store by
// now, or --max-cost forbids it.
func (r *runner) claimAndSend(ctx context.Context, queues []chan engine.Task, groups [][]job) error {
	var claim []string
	for _, g := range groups {
		if r.leased(g[0].model) {
			claim = append(claim, g[0].key)
		}
	}
	won := make(map[string]bool, len(claim))
	if len(claim) > 0 {
		ok, err := r.leases.ClaimAll(ctx, claim)
		if err != nil {
			return err
		}
		for i, k := range claim {
			won[k] = won[k] || ok[i]
		}
	}
	// The answer may have landed since the lookup: a twin's, answered by
	// this run meanwhile, or another process's, which has let the key go.
	var send [][]job
	var recheck []string
	r.mu.Lock()
	for _, g := range groups {
		k, leased := g[0].key, r.leased(g[0].model)
		if leased && !won[k] {
			r.deferred[k] = append(r.deferred[k], g...)
			continue
		}
		if _, just := r.answered[k]; leased || just {
			recheck = append(recheck, k)
		}
		send = append(send, g)
	}
	r.mu.Unlock()
	found := map[string]store.EvalResult{}
	if len(recheck) > 0 {
		var err error
		if found, err = r.o.Store.EvalResults(ctx, recheck); err != nil {
			return err
		}
	}
	// The keys claimed and not sent go back together, however this ends;
	// those never reached are given back at the end of the run.
	var unsent []string
	defer func() { r.leases.Release(unsent...) }()
	for _, g := range send {
		k := g[0].key
		if res, ok := found[k]; ok {
			unsent = append(unsent, k)
			if err := r.recordCached(ctx, g, storedAnswer(res)); err != nil {
				return err
			}
			continue
		}
		r.mu.Lock()
		r.pending[k] = &inFlight{jobs: g}
		r.mu.Unlock()
		if !r.spend.ReserveWhenSettled(ctx, k, r.worstCost(g[0])) {
			// Only dispatch adds jobs to a key, on this goroutine: g holds
			// them all.
			r.mu.Lock()
			delete(r.pending, k)
			r.out.NotSent += len(g)
			r.mu.Unlock()
			unsent = append(unsent, k)
			r.o.Progress.Done(len(g))
			continue
		}
		select {
		case queues[g[0].model] <- engine.Task{Key: k, Request: g[0].req}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// leased reports whether the keys of a model's requests are claimed
// before they are sent. The offline model's answers cost nothing and take
// no time: claiming one, and looking it up again after, would cost more
// than a second process working it out again.
func (r *runner) leased(model int) bool {
	return r.o.Models[model].Spec.Provider != provider.Offline
}

// leaseOf is what a write gives back once k's answer is stored: k, or
// nothing for a model whose keys are not claimed.
func (r *runner) leaseOf(model int, k string) []string {
	if !r.leased(model) {
		return nil
	}
	return []string{k}
}

// recordCached stores the rows of jobs whose answer was already paid for.
func (r *runner) recordCached(ctx context.Context, jobs []job, answer score.Answer) error {
	return r.scoring.do(func() error {
		return r.storeRows(ctx, jobs, slices.Repeat([]score.Answer{answer}, len(jobs)), false, nil)
	})
}

// storedAnswer is a stored result as the scorer reads it.
func storedAnswer(res store.EvalResult) score.Answer {
	return score.Answer{Text: res.Answer, Finish: provider.Finish(res.Finish)}
}

// finishOf is how a result's finish is stored: "" for a whole answer.
func finishOf(f provider.Finish) string {
	if f == provider.FinishStop {
		return ""
	}
	return string(f)
}

// awaitDeferred finishes the keys another process held the lease of: their
// answers are read from the store as that process stores them, and a key it
// lets go unanswered (it failed) or whose lease expires or was left by a
// dead process of this machine is claimed and sent here.
func (r *runner) awaitDeferred(ctx context.Context, queues []chan engine.Task) error {
	take := func() []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		return slices.Sorted(maps.Keys(r.deferred))
	}
	return lease.Await(ctx, r.o.Lease, take, func(keys []string) error {
		r.mu.Lock()
		waiting := make(map[string][]job, len(keys))
		for _, k := range keys {
			waiting[k] = r.deferred[k]
			delete(r.deferred, k)
		}
		r.mu.Unlock()
		found, err := r.o.Store.EvalResults(ctx, keys)
		if err != nil {
			return err
		}
		var unanswered [][]job
		for _, k := range keys {
			if res, ok := found[k]; ok {
				// Paid for by the other process: here it is as good as cached.
				if err := r.recordCached(ctx, waiting[k], storedAnswer(res)); err != nil {
					return err
				}
			} else {
				unanswered = append(unanswered, waiting[k])
			}
		}
		return r.claimAndSend(ctx, queues, unanswered)
	})
}

// remember notes a key just answered, keeping the last few thousand: a
// twin of an unleased key looked up before the answer landed is
// dispatched after it. Callers hold mu.
func (r *runner) remember(k string) {
	const keep = 4096
	if r.answered == nil {
		r.answered = make(map[string]struct{}, keep)
	}
	r.answered[k] = struct{}{}
	r.answerOrder = append(r.answerOrder, k)
	if len(r.answerOrder) > keep {
		delete(r.answered, r.answerOrder[0])
		r.answerOrder = r.answerOrder[1:]
	}
}

func (r *runner) worstCost(j job) float64 {
	m := r.o.Models[j.model]
	return r.o.Batch.Worst(m.Price, m.SyncPrice).Cost(m.InputTokens(r.o.Tokenizer.Count, j.req), provider.OutputCap(j.req))
}

// commit handles an engine's outcome: the answer is scored and recorded
// for every job that asked for it, and handed to the writer with their
// rows and the key's lease, which goes back in the same transaction; a
// failure is recorded but never cached. Nothing here waits for the
// database: the engine's next outcome is taken at once.
func (r *runner) commit(ctx context.Context, model int) func(engine.Outcome) error {
	m := r.o.Models[model]
	return func(o engine.Outcome) error {
		k := o.Task.Key
		u := o.Response.Usage
		cost := r.o.Batch.Price(o, m.Price, m.SyncPrice).CostOf(u)
		if errors.Is(o.Err, engine.ErrPending) {
			// Neither answered nor failed: a rerun collects it, and the
			// batch bills it then.
			r.spend.Owe(k)
			r.mu.Lock()
			jobs := r.pending[k].jobsOrNone()
			delete(r.pending, k)
			r.out.Pending += len(jobs)
			r.mu.Unlock()
			r.o.Progress.Done(len(jobs))
			return r.writes.add(write{release: r.leaseOf(model, k)})
		}
		r.spend.Record(k, cost, o.Err == nil)
		answer := score.Answer{Text: o.Response.Text, Finish: o.Response.Finish}
		r.mu.Lock()
		f := r.pending[k]
		if f == nil {
			f = &inFlight{}
			r.pending[k] = f
		}
		f.answered, f.answer, f.err = true, answer, o.Err
		jobs := f.jobs // final: a job reaching k from now on is recorded by dispatch
		r.mu.Unlock()
		var paid []store.EvalResult
		if o.Err == nil {
			req, _ := json.Marshal(o.Task.Request)
			paid = append(paid, store.EvalResult{Key: k, Model: m.Spec.String(), LatencyMS: float64(o.Latency) / float64(time.Millisecond),
				InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
				CostUSD: cost, Request: req, Answer: o.Response.Text, Finish: finishOf(o.Response.Finish)})
		}
		// The first job paid; the others share its answer, as from a cache.
		answers := slices.Repeat([]score.Answer{answer}, len(jobs))
		if r.scoring == nil {
			rows, err := r.scoreRows(ctx, jobs, answers, true, o.Err)
			if err != nil {
				return err
			}
			return r.writes.add(write{answers: paid, rows: rows, release: r.leaseOf(model, k), stored: r.settled(k, len(rows))})
		}
		// Stored before it is scored: a judge may take long, and a run
		// stopped meanwhile must not have to pay for the answer again.
		if err := r.writes.add(write{answers: paid}); err != nil {
			return err
		}
		return r.scoring.do(func() error {
			rows, err := r.scoreRows(ctx, jobs, answers, true, o.Err)
			if err != nil {
				return err
			}
			return r.writes.add(write{rows: rows, release: r.leaseOf(model, k), stored: r.settled(k, len(rows))})
		})
	}
}

// jobsOrNone is f's jobs; none for a nil f.
func (f *inFlight) jobsOrNone() []job {
	if f == nil {
		return nil
	}
	return f.jobs
}

// settled is what follows the write of an outcome's rows: the key leaves
// pending (a job reaching it now finds the answer stored), and the rows
// count as done.
func (r *runner) settled(k string, rows int) func() {
	return func() {
		r.mu.Lock()
		delete(r.pending, k)
		r.remember(k)
		r.mu.Unlock()
		r.o.Progress.Done(rows)
	}
}

// storeRows scores each job's answer (or notes the failure to get one) and
// hands the rows to the writer, together.
func (r *runner) storeRows(ctx context.Context, jobs []job, answers []score.Answer, firstPaid bool, callErr error) error {
	rows, err := r.scoreRows(ctx, jobs, answers, firstPaid, callErr)
	if err != nil || len(rows) == 0 {
		return err
	}
	return r.writes.add(write{rows: rows, stored: func() { r.o.Progress.Done(len(rows)) }})
}

// scoreRows is the row of each job's answer, or of the failure to get one.
// A verdict waiting in the judge's batch leaves its job without a row,
// written by the rerun that collects it; a judge cut short by the run's
// stop leaves them all so, for a rerun to score from the stored answers.
func (r *runner) scoreRows(ctx context.Context, jobs []job, answers []score.Answer, firstPaid bool, callErr error) ([]store.RunResult, error) {
	rows := make([]store.RunResult, 0, len(jobs))
	pending := 0
	for i, j := range jobs {
		row, err := r.scored(ctx, j, answers[i], callErr == nil && !(firstPaid && i == 0), callErr)
		if errors.Is(err, engine.ErrPending) {
			pending++
			continue
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if pending > 0 {
		r.mu.Lock()
		r.out.Pending += pending
		r.mu.Unlock()
		r.o.Progress.Done(pending)
	}
	if r.o.Judge != nil && ctx.Err() != nil {
		return nil, nil
	}
	return rows, nil
}

// scored is the row for an answer, or for a failure to get one. A judge
// that stopped (a refused key, a dead server, a quota) stops the run: every
// later verdict would fail alike. The answer is stored; a rerun scores it.
func (r *runner) scored(ctx context.Context, j job, answer score.Answer, cached bool, callErr error) (store.RunResult, error) {
	rr := store.RunResult{RunID: r.out.RunID, Model: r.o.Models[j.model].Spec.String(), Item: j.item.ID, Line: j.item.Line,
		Repeat: j.repeat, Key: j.key, Expected: j.item.Expected, Cached: cached}
	if callErr != nil {
		rr.Error = callErr.Error()
		// No answer holds the request: the result keeps it, so that its
		// report shows what was asked.
		rr.Request, _ = json.Marshal(j.req)
		rr.Metrics = storedMetrics(r.o.Scorer.MetricNames(j.item), nil)
	} else {
		res, err := r.o.Scorer.ScoreAnswer(ctx, j.item, answer)
		if fe := (*engine.FatalError)(nil); errors.As(err, &fe) || errors.Is(err, engine.ErrPending) {
			return rr, err
		}
		if err != nil {
			// A judge that failed, or an assertion that cannot be checked:
			// the answer is kept, the item counts as an error.
			rr.Error = err.Error()
			rr.Metrics = storedMetrics(r.o.Scorer.MetricNames(j.item), nil)
		} else {
			rr.Pass, rr.Score, rr.Reasons = res.Pass, res.Score, res.Reasons
			rr.Metrics = storedMetrics(nil, res.Metrics)
		}
	}
	return rr, nil
}

// storedMetrics is what a result stores of its metrics: the grades, or
// failures on each of names for a result that could not be graded; nil
// when the only metric is the default one, which Pass and Score hold.
func storedMetrics(names []string, graded []score.MetricResult) []store.MetricScore {
	if len(graded) == 0 {
		for _, n := range names {
			graded = append(graded, score.MetricResult{Name: n})
		}
	}
	if len(graded) == 0 || len(graded) == 1 && graded[0].Name == dataset.DefaultMetric {
		return nil
	}
	out := make([]store.MetricScore, len(graded))
	for i, m := range graded {
		out[i] = store.MetricScore{Name: m.Name, Pass: m.Pass, Score: m.Score}
	}
	return out
}

// costOf is the most an estimate's requests could cost, nil when the
// model's price is unknown.
func costOf(m target.Target, e Estimate) *float64 {
	if m.PriceUnknown {
		return nil
	}
	cost := m.Price.Cost(e.InputTokens, e.MaxOutputTokens)
	return &cost
}

// dryRun counts what a run would send, per model, without sending or storing.
func (r *runner) dryRun(ctx context.Context) (*RunStats, error) {
	est := make([]Estimate, len(r.o.Models))
	for i, m := range r.o.Models {
		est[i].Model = m.Spec.String()
	}
	var judged *Estimate
	unknownAnswer := 0 // tokens of the answer the judge would grade, when not yet known
	if r.o.Judge != nil {
		judged = &Estimate{Model: r.o.Judge.Spec.String(), Judge: true}
		r.o.Scorer.Judge = r.estimateJudge(*r.o.Judge, judged, &unknownAnswer)
	}
	items := 0
	skipped, err := dataset.Read(r.o.Source, r.o.Read, func(it dataset.Item) error {
		items++
		it = r.clean(it)
		if uncheckable(r.o.Scorer, it) != "" {
			r.out.Unchecked += len(r.o.Models) * r.o.Params.Repeat
			return r.stopAt(ctx, items)
		}
		for i, m := range r.o.Models {
			req := r.request(m, it)
			out, in := provider.OutputCap(req), -1
			// The repeats are counted a lookup batch at a time, in flat
			// memory however many are asked for.
			for from := 0; from < r.o.Params.Repeat; from += lookupBatch {
				if err := ctx.Err(); err != nil {
					return err
				}
				keys := make([]string, min(lookupBatch, r.o.Params.Repeat-from))
				for n := range keys {
					keys[n] = r.keyOf(m, req, from+n)
				}
				cached := map[string]store.EvalResult{}
				if r.o.Store != nil {
					var err error
					if cached, err = r.o.Store.EvalResults(ctx, keys); err != nil {
						return err
					}
				}
				for _, k := range keys {
					answer, ok := cached[k]
					if ok {
						est[i].Cached++
					} else {
						est[i].Requests++
						if in < 0 {
							in = m.InputTokens(r.o.Tokenizer.Count, req) // the same for every repeat
						}
						est[i].InputTokens += in
						est[i].MaxOutputTokens += out
					}
					if judged != nil {
						unknownAnswer = 0
						if !ok {
							unknownAnswer = out
						}
						// Only the judge calls are of interest: an assertion
						// that cannot be checked fails the real run alike.
						if _, err := r.o.Scorer.ScoreAnswer(ctx, it, storedAnswer(answer)); err != nil && ctx.Err() != nil {
							return ctx.Err()
						}
					}
				}
			}
		}
		return r.stopAt(ctx, items)
	})
	if err != nil && !errors.Is(err, errLimit) {
		return nil, err
	}
	for i, m := range r.o.Models {
		est[i].CostUSD = costOf(m, est[i])
	}
	if judged != nil {
		judged.CostUSD = costOf(*r.o.Judge, *judged)
		est = append(est, *judged)
	}
	r.out.Items, r.out.Skipped, r.out.Estimate = items, skipped, est
	if err := r.noItems(); err != nil {
		return r.out, err
	}
	if items > 0 && r.out.Unchecked == items*len(r.o.Models)*r.o.Params.Repeat {
		return r.out, ErrNothingToCheck
	}
	return r.out, nil
}
