// Package store names what digest keeps of the work it paid for, and the
// one interface every database it keeps it in implements: a rerun, a second
// clone, a crashed run or another process on another machine never pays for
// it again. The backends live in packages of their own (sqlite, postgres),
// over one SQL core (sqlstore).
package store

import (
	"context"
	"errors"
	"iter"
	"time"
)

// ErrUnreachable is what every error of a database server that cannot be
// reached, or was lost mid-run, matches with errors.Is. Every later call
// fails the same way until it is back, so a caller cleaning up after such
// an error (dropping an empty run, reading back what was stored) can leave
// the cleanup's own failure unsaid instead of repeating the first.
var ErrUnreachable = errors.New("the database server cannot be reached")

// Store is an open digest database. Every method is safe for concurrent
// use, by goroutines and by processes sharing the database: results are
// written in one transaction each, the first stored for a key wins (a
// complete summary replaces a partial one), and claims are taken
// atomically against the database's own clock.
type Store interface {
	// Path says where the database is, fit to print: a file's path, or a
	// server's URL without its password.
	Path() string
	Close() error

	SummaryStore
	EvalStore
	FactorStore
	ClaimStore
	RateStore
	BatchStore
	ForgeStore
}

// The role interfaces below are the slices of a Store each consumer takes,
// so that a package says in its signatures which part of the database it
// touches (a lease holder, claims; a shared limit, rates).

// SummaryStore is the slice of a Store that keeps the summaries of commits
// and the repositories they are of: what summarize reads before it pays, and
// writes as each summary lands.
type SummaryStore interface {
	// SaveRepository records a repository, refreshing where it was seen.
	SaveRepository(ctx context.Context, r Repository) error
	// RepositoriesOf lists the repositories holding a stored commit.
	RepositoriesOf(ctx context.Context, commit string) ([]Repository, error)
	// Summaries returns the stored summaries among commits for one model,
	// prompt version and scope, keyed by commit hash.
	Summaries(ctx context.Context, repoID, model, promptVersion, scope string, commits []string) (map[string]Summary, error)
	// SaveSummary commits one summary and its commit together.
	SaveSummary(ctx context.Context, c Commit, sum Summary) error
}

// EvalStore is the slice of a Store that keeps paid answers, eval runs and
// their results: what eval writes as answers land, and its reports read
// back.
type EvalStore interface {
	// EvalResults returns the stored answers among keys.
	EvalResults(ctx context.Context, keys []string) (map[string]EvalResult, error)
	// SaveEvalResult stores a paid answer and its payloads.
	SaveEvalResult(ctx context.Context, r EvalResult) error
	// StartRun, FinishRun and DropRunIfEmpty keep the record of eval runs.
	StartRun(ctx context.Context, r EvalRun) error
	FinishRun(ctx context.Context, id string, at time.Time, judge *RunJudge) error
	DropRunIfEmpty(ctx context.Context, id string) error
	// SaveRunResults records how answers scored within a run.
	SaveRunResults(ctx context.Context, rrs []RunResult) error
	// SaveEval stores paid answers and run rows and gives back the leases
	// they answer, all in one transaction (see EvalWrite).
	SaveEval(ctx context.Context, w EvalWrite) error
	// Runs lists the runs, newest first; Run finds one by id or a unique
	// prefix of it.
	Runs(ctx context.Context) ([]EvalRun, error)
	Run(ctx context.Context, id string) (EvalRun, bool, error)
	// PruneRuns removes the runs p selects and their result rows; never
	// an answer, a payload or a summary (see RunPrune).
	PruneRuns(ctx context.Context, p RunPrune) (Pruned, error)
	// RunRows streams a run's results; RunTotals, LatencyAt and PairCounts
	// aggregate them in the database, never loading them.
	RunRows(ctx context.Context, runID string, models []string, withBodies bool) iter.Seq2[RunRow, error]
	RunTotals(ctx context.Context, runID, model string) (ModelTotals, error)
	LatencyAt(ctx context.Context, runID, model string, i int) (float64, error)
	PairCounts(ctx context.Context, runID, a, b string) (aOnly, bOnly, both, neither int, err error)
}

// FactorStore is the slice of a Store that keeps what is learned of each
// model's tokenizer against digest's.
type FactorStore interface {
	// TokenFactor returns what is learned of how many tokens a model's
	// tokenizer counts for one of digest's; ok is false when nothing is.
	TokenFactor(ctx context.Context, model string) (f TokenFactor, ok bool, err error)
	// SaveTokenFactor folds f into what is stored for f.Model: the mean of
	// both, weighted by their samples, over at most MaxFactorSamples, so
	// that a tokenizer that changes is learned again.
	SaveTokenFactor(ctx context.Context, f TokenFactor) error
}

// ClaimStore is the slice of a Store that keeps claims on work in progress,
// shared by every process on the database (internal/lease).
type ClaimStore interface {
	// Claim takes the lease on key for owner until ttl from now (the
	// database's now): it inserts the lease, or takes it over if it has
	// expired or is owner's already, and reports whether owner holds it.
	Claim(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// ClaimAll is Claim for each of keys, in one transaction.
	ClaimAll(ctx context.Context, keys []string, owner string, ttl time.Duration) (won []bool, err error)
	// Release gives up owner's lease on key, if owner still holds it.
	Release(ctx context.Context, key, owner string) error
	// LeaseOwner returns who holds the lease on key, if anyone does.
	LeaseOwner(ctx context.Context, key string) (string, bool, error)
	// TakeOver gives the lease on key to owner if from still holds it.
	TakeOver(ctx context.Context, key, from, owner string, ttl time.Duration) (bool, error)
	// Renew pushes owner's leases to ttl from now and counts them.
	Renew(ctx context.Context, owner string, ttl time.Duration) (int, error)
	// LeaseOwners lists the owners of the leases held, expired or not.
	LeaseOwners(ctx context.Context) ([]string, error)
	// DropLeases deletes owner's leases and every expired one.
	DropLeases(ctx context.Context, owner string) error
	// ReleaseAll is Release for each of keys, in one statement.
	ReleaseAll(ctx context.Context, keys []string, owner string) error
	// LeaseHolders returns who holds the leases among keys, expired or
	// not, keyed by key; a key no one holds is absent.
	LeaseHolders(ctx context.Context, keys []string) (map[string]string, error)
}

// RateStore is the slice of a Store that keeps the rate limits every process
// using one account shares (internal/sharedlimit).
type RateStore interface {
	// TakeRate charges one request to the rate limit named limiter, which
	// every process using the same account shares, in one atomic statement
	// against the database's clock. Each of the request and token limits is
	// a GCRA (a token bucket): its theoretical arrival time moves to
	// max(tat, now, the pause's end) + Cost; the charge is always kept, and
	// the request may go out after Wait, once tat - now <= Burst for both
	// and the pause is over. A limiter no one has charged yet starts full.
	TakeRate(ctx context.Context, limiter string, requests, tokens RateCharge) (RateState, error)
	// PauseRate holds every request of limiter until d from the database's
	// now, unless a pause already runs longer.
	PauseRate(ctx context.Context, limiter string, d time.Duration) error
	// LearnRate records the limits a provider told of (per its window);
	// a zero leaves that limit as it was. TakeRate reports them to all.
	LearnRate(ctx context.Context, limiter string, requests, tokens int) error
}

// BatchStore is the slice of a Store that keeps the record of batches sent
// to the providers' batch APIs (internal/batchrun).
type BatchStore interface {
	// CreateBatch records a batch about to be submitted to a provider's
	// batch API, with its items and their members, in one transaction and
	// before the provider hears of it: a process that dies while creating
	// it leaves the record a rerun finds it by. A batch id recorded before
	// is an error.
	CreateBatch(ctx context.Context, b Batch, items []BatchItem) error
	// UpdateBatch records what the provider last said of a batch (its id
	// once creation returned, status, counts, message) and whether its
	// results are all stored; UpdatedAt is set to now. A collected batch
	// is final: updating it changes nothing, so that a process that looked
	// at a batch before another collected it cannot list it as open again.
	UpdateBatch(ctx context.Context, b Batch) error
	// Batches lists the recorded batches, newest first: all of them, or,
	// with open, those whose results are not all stored (Collected false).
	Batches(ctx context.Context, open bool) ([]Batch, error)
	// BatchItems returns a batch's items with their requests and results,
	// in the order they were recorded.
	BatchItems(ctx context.Context, batchID string) ([]BatchItem, error)
	// BatchMembers returns, for each of members that an item of a batch of
	// model holds, the newest such item (by its batch's CreatedAt), without
	// its request: what a rerun asks before it sends work a batch of an
	// earlier run may have answered, or may be answering.
	BatchMembers(ctx context.Context, model string, members []string) (map[string]BatchItem, error)
	// SaveBatchResults stores the results of some of a batch's items (by
	// CustomID) in one transaction: Done, Answer and tokens, or Error. The
	// request of an item answered is dropped: the answer is what is kept.
	SaveBatchResults(ctx context.Context, batchID string, results []BatchItem) error
}

// ForgeStore is the slice of a Store that keeps the stored answers of the
// forges' APIs (internal/forgeapi).
type ForgeStore interface {
	// ForgeAnswers returns the stored answers of a forge's API (GitHub's,
	// GitLab's) among keys that have not expired, keyed by key, in one
	// query per few hundred keys: what a rerun reads before it asks the
	// forge again.
	ForgeAnswers(ctx context.Context, keys []string) (map[string][]byte, error)
	// SaveForgeAnswer stores body, what a forge said of one commit, under
	// key until ttl from the database's now, or for ever when ttl is 0. It
	// replaces what key held, except that an answer kept for ever is
	// replaced only by another kept for ever: a later "nothing known" must
	// not hide a pull request once found. A negative ttl is an error.
	SaveForgeAnswer(ctx context.Context, key string, body []byte, ttl time.Duration) error
}

// Batch is a batch of requests digest sent to a provider's batch API.
type Batch struct {
	// ID is digest's own id, given before the provider's is known; the
	// label the provider keeps, where it keeps one.
	ID string
	// Model is the spec the batch's requests are for ("openai:gpt-4o-mini")
	// and BaseURL the server, "" for the provider's own.
	Model, BaseURL string
	// ProviderID is the provider's id; "" while the batch is being created.
	ProviderID string
	// Status is "creating" until the provider answers the creation, then
	// what it last said (provider.BatchStatus: in_progress, ended, failed,
	// canceled, expired).
	Status                                string
	Items                                 int
	Succeeded, Errored, Canceled, Expired int
	// Message is the provider's reason for a failed batch.
	Message string
	// Collected is set once every result is stored: the batch is done with.
	Collected            bool
	CreatedAt, UpdatedAt time.Time
}

// BatchItem is one request of a batch, and its result once stored.
type BatchItem struct {
	BatchID  string
	CustomID string
	// Members name the work the request holds: the lease keys of the
	// summaries it asks for, or an answer's key. A rerun finds them by it.
	Members []string
	// Request is the request as sent, provider-neutral JSON; nil once the
	// item's result is stored, and from BatchMembers.
	Request []byte
	// Done is set when the result is stored: then Answer and the tokens,
	// or Error (the item errored, was canceled or expired).
	Done                      bool
	Answer                    string
	InputTokens, OutputTokens int
	// Finish is why the answer ended when not by itself ("refusal",
	// "length", "content_filter"); CacheReadTokens and CacheWriteTokens are
	// the parts of InputTokens read from and written to the prompt cache.
	Finish                            string
	CacheReadTokens, CacheWriteTokens int
	Error                             string
}

// RateCharge is what one request costs one GCRA limit: Cost is its units
// times the limit's interval per unit, and Burst how far ahead of the
// steady pace the limit lets requests go (zero for a limit not known: the
// charge then only waits out the pause and earlier charges).
type RateCharge struct {
	Cost, Burst time.Duration
}

// RateState is a limiter as TakeRate left it.
type RateState struct {
	// Wait is how long the charged request must wait before it goes out.
	Wait time.Duration
	// Paused is how much longer the limiter is paused (0: not paused).
	Paused time.Duration
	// Requests and Tokens are the limits learned by any process (0: none).
	Requests, Tokens int
}

// Repository is a history digest has seen, under its clone-independent id.
type Repository struct {
	ID         string
	RootCommit string
	Path       string // where it was last seen; informational only
}

// Commit is the metadata of a summarized commit.
type Commit struct {
	RepoID      string
	Hash        string
	AuthorName  string
	AuthorEmail string
	AuthorDate  time.Time
	CommitDate  time.Time
	Subject     string
}

// SummaryKey names one paid-for answer. Every field is part of the identity:
// a summary from another model, prompt version or path scope is another row.
type SummaryKey struct {
	RepoID        string
	Commit        string
	Model         string
	PromptVersion string
	Scope         string
}

// Summary is a commit summary with what it cost and what was sent for it.
type Summary struct {
	SummaryKey
	Text         string
	InputTokens  int
	OutputTokens int
	CostUSD      float64
	DiffTokens   int
	Truncated    bool
	SkippedFiles []string
	CreatedAt    time.Time
	// Partial is a summary written without some of the commit's blobs
	// (from a partial clone): a complete one replaces it when stored.
	Partial bool
	// ChangeType, ChangeScope and Breaking classify the change as the
	// model (or the rules, for the offline model) gave them; ChangeType is
	// "" in summaries stored before digest asked for it.
	ChangeType  string
	ChangeScope string
	Breaking    bool
}

// TokenFactor is a model's input tokens, as its provider reports them, per
// token digest's tokenizer counts in the same prompts: 1.4 for a model
// whose tokenizer counts 40% more. Samples is how many answers it is
// the mean of.
type TokenFactor struct {
	Model   string
	Factor  float64
	Samples int
}

// MaxFactorSamples bounds the weight of what is stored of a token factor.
const MaxFactorSamples = 1000

// EvalResult is a paid answer to one request.
type EvalResult struct {
	Key          string
	Model        string
	LatencyMS    float64
	InputTokens  int
	OutputTokens int
	// CacheReadTokens and CacheWriteTokens are the parts of InputTokens
	// read from and written to the provider's prompt cache.
	CacheReadTokens  int
	CacheWriteTokens int
	CostUSD          float64
	Request          []byte // the request as sent, provider-neutral JSON
	Answer           string
	// Finish is why the answer ended when not by itself: "refusal" (Answer
	// is the refusal), "length" or "content_filter" (Answer is cut); "" for
	// a whole answer, and for answers stored before digest kept it.
	Finish string
}

// EvalWrite is what a run stores together: the answers it was paid for,
// rows of how answers scored, and the leases of Owner to give back on keys
// whose answers are stored by now (in this write or an earlier one). One
// transaction holds it all, so that a process storing answers as fast as a
// provider sends them pays a commit per batch of them, not several per
// answer, and a lease is never given back before the answer it guards is
// stored: another process would pay for it again.
type EvalWrite struct {
	Answers []EvalResult
	Rows    []RunResult
	Owner   string
	Release []string
}

// EvalRun is one invocation of digest eval.
type EvalRun struct {
	ID         string
	Dataset    string
	Models     []string
	Params     map[string]any
	CreatedAt  time.Time
	FinishedAt time.Time // zero while running or when interrupted
	// Judge is what the run's grading model was paid, recorded when the
	// run finished; nil without a judge.
	Judge *RunJudge
}

// RunJudge is a grading model's share of a run: its verdicts are no
// model's results, and are paid apart.
type RunJudge struct {
	Model    string
	Verdicts int
	CostUSD  *float64 // nil when the model's price is unknown
}

// RunResult is how one answer (or failure) scored within a run.
type RunResult struct {
	RunID    string
	Model    string
	Item     string
	Line     int
	Repeat   int
	Key      string
	Pass     bool
	Score    float64
	Reasons  []string
	Expected []string
	Error    string
	Cached   bool
	// Metrics are the result's grades per named metric, in the order its
	// assertions first name them; nil when they name none (Pass and Score
	// are then the one metric, accuracy). Stored a row each, with the
	// result and in its transaction; a name given twice keeps its first.
	Metrics []MetricScore
	// Request is, for a result that ended in error, the request it would
	// have sent (provider-neutral JSON), kept for its report; an answered
	// result's request is its answer's.
	Request []byte
}

// MetricScore is a result's grade on one named metric.
type MetricScore struct {
	Name  string  `json:"name"`
	Pass  bool    `json:"pass"`
	Score float64 `json:"score"`
}

// RunRow is a run's result with what was paid for it, for reports.
type RunRow struct {
	RunResult
	Answer          string
	Finish          string // as EvalResult.Finish
	LatencyMS       float64
	InputTokens     int
	CacheReadTokens int
	OutputTokens    int
	CostUSD         float64
	Request         []byte
}

// ModelTotals sums a model's results in a run.
type ModelTotals struct {
	Items, Passed, Errors, Cached int
	InputTokens, OutputTokens     int
	CacheReadTokens               int // the part of InputTokens read from the prompt cache
	// Refused and Cut count the answered results whose answer was a
	// refusal, and those cut short (EvalResult.Finish "length" or
	// "content_filter").
	Refused, Cut int
	CostUSD      float64
	Answered     int // results with a paid answer (scored or not), whose latency counts
	// Lines and IDs count the dataset lines and the item ids among the
	// results: a dataset may give two lines one id.
	Lines, IDs int
}

// RunPrune selects the runs PruneRuns removes: a run is removed when every
// rule given selects it. Whatever the rules, a run not finished (still
// running, or interrupted) is kept until UnfinishedBefore, since another
// process may still be writing it.
type RunPrune struct {
	// Keep is how many of each dataset's newest runs are kept whatever
	// their age; negative: no run is kept for being among the newest.
	Keep int
	// Before, when not zero, keeps every run started since.
	Before time.Time
	// UnfinishedBefore is when a run not finished must have started to be
	// removed; zero: no such run is.
	UnfinishedBefore time.Time
	// DryRun counts what would be removed, and removes nothing.
	DryRun bool
}

// Pruned is what PruneRuns removed, or would have.
type Pruned struct {
	// IDs are the runs removed, newest first; Results their result rows.
	IDs     []string
	Results int
	// Kept counts the runs left; Unfinished those among them the rules
	// selected but that were kept as perhaps still running.
	Kept, Unfinished int
}

// Payload is a stored request or response body: in an object store
// (--payloads), named by URI, or in the database, as Body.
type Payload struct {
	// Hash is the SHA-256 of the body, in hex.
	Hash string
	// URI names the object holding the body; "" when the database does.
	URI  string
	Body []byte
}
