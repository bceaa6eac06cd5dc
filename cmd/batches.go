package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/textsafe"
)

// batchFlags are --batch-api and the flags beside it, alike on summarize
// and eval.
type batchFlags struct {
	API    bool
	NoWait bool
	Poll   time.Duration
	Retry  string
}

func (b *batchFlags) addFlags(fl *pflag.FlagSet) {
	fl.BoolVar(&b.API, "batch-api", false, "send every request through the provider's batch API (OpenAI, Anthropic): half the price, answers within 24 hours")
	fl.BoolVar(&b.NoWait, "no-wait", false, "with --batch-api: submit the batches and exit 0; the same command again collects the answers")
	fl.DurationVar(&b.Poll, "batch-poll", batchrun.DefaultPollMin, "with --batch-api: the first wait between looks at a batch; each look waits half as long again, up to 5m")
	fl.StringVar(&b.Retry, "batch-retry", "next", "with --batch-api: send what a batch left unanswered in the next batch (next) or at once, at the full price (sync); add unknown (next,unknown) to send again, too, the requests of a batch this API key cannot see (HTTP 404 or 403), which may still run and bill under the key that sent it")
}

// retryWords reads --batch-retry: next or sync, where unanswered items
// go, and unknown, whether the requests of a batch the key cannot see go
// too; "unknown" alone is "next,unknown".
func retryWords(v string) (sync, unknown bool, err error) {
	where := ""
	for w := range strings.SplitSeq(v, ",") {
		switch w = strings.TrimSpace(w); w {
		case "next", "sync":
			if where != "" && where != w {
				return false, false, cmdutil.UsageError("--batch-retry %q names both next and sync: unanswered items go to one. Try: --batch-retry next, or --batch-retry sync", v)
			}
			where = w
		case "unknown":
			unknown = true
		default:
			return false, false, cmdutil.UsageError("--batch-retry %q is neither next nor sync, nor unknown added to one of them (%q is not a word it takes). Try: --batch-retry next, or --batch-retry next,unknown", v, w)
		}
	}
	return where == "sync", unknown, nil
}

// mode checks the flags and returns what they ask for.
func (b batchFlags) mode() (batchrun.Mode, error) {
	if !b.API {
		if b.NoWait {
			return batchrun.Mode{}, cmdutil.UsageError("--no-wait is for batch runs. Try: --batch-api --no-wait")
		}
		return batchrun.Mode{}, nil
	}
	sync, unknown, err := retryWords(b.Retry)
	if err != nil {
		return batchrun.Mode{}, err
	}
	if b.Poll <= 0 {
		return batchrun.Mode{}, cmdutil.UsageError("--batch-poll must be positive, got %s. Try: --batch-poll 5s", b.Poll)
	}
	return batchrun.Mode{On: true, NoWait: b.NoWait, Poll: b.Poll, SyncRetry: sync, RetryUnknown: unknown}, nil
}

// noBatchAPI is the error for a model whose provider has no batch API.
func noBatchAPI(spec provider.Spec) error {
	return cmdutil.UsageError("%s has no batch API: --batch-api is for openai: and anthropic: models. Try: without --batch-api", spec)
}

// batcherOf is the batch API of a model's client, once it is checked to
// answer: a server without batch endpoints is refused before anything is
// sent.
func batcherOf(ctx context.Context, p provider.Provider, spec provider.Spec, baseURL string) (provider.Batcher, error) {
	b, ok := p.(provider.Batcher)
	if !ok {
		return nil, noBatchAPI(spec)
	}
	if err := batchrun.Check(ctx, b, spec, textsafe.URL(baseURL)); err != nil {
		return nil, err
	}
	return b, nil
}

// showBatches is what a batch run tells of its batches at each look: a
// line in the log (a CI job waiting an hour must not look hung) and the
// progress bar's note on a terminal.
func showBatches(o runDeps, bar *iostreams.Progress) func(store.Batch) {
	return func(b store.Batch) {
		done := b.Succeeded + b.Errored + b.Canceled + b.Expired
		line := fmt.Sprintf("batch %s %s: %s, %d of %d done", b.Model, b.ProviderID, b.Status, done, b.Items)
		if b.Errored+b.Canceled+b.Expired > 0 {
			line += fmt.Sprintf(" (%d unanswered, sent again)", b.Errored+b.Canceled+b.Expired)
		}
		bar.Note(line)
		o.Infof("digest: %s, %s old", line, time.Since(b.CreatedAt).Round(time.Second))
	}
}

// pendingNote is the line a --no-wait run ends with.
func pendingNote(n int, what string) string {
	return fmt.Sprintf("digest: %d %s wait in the providers' batches; run the same command again to collect them (digest batches lists them)", n, what)
}

// BatchesOptions are the batches command's flags.
type BatchesOptions struct {
	runDeps
	All     bool
	Refresh bool
	Format  string
	Cancel  string // the batch to cancel, "" to list
}

// NewBatchesCmd builds `digest batches` and `digest batches cancel`.
func NewBatchesCmd(f *cmdutil.Factory, runF func(context.Context, *BatchesOptions) error) *cobra.Command {
	o := &BatchesOptions{runDeps: newRunDeps(f)}
	run := func(ctx context.Context) error {
		if runF != nil {
			return runF(ctx, o)
		}
		return runBatches(ctx, o)
	}
	cmd := &cobra.Command{
		Use:   "batches",
		Short: "List the batches sent with --batch-api, or cancel one",
		Long: `List the batches digest sent through the providers' batch APIs: digest's id, the
provider's, the model, the state the provider last reported, the items answered or
not, and how old each is. By default only the batches whose results are not all
collected yet; --all lists every one. A batch is collected by running the command
that sent it again.

The state shown is what the provider said at the last look digest took;
--refresh asks each provider now (with the API keys a run would use) and
records the answer, to tell whether the command that sent a batch has
anything to collect yet. A batch the API key cannot see (HTTP 404 or 403:
the key is of another OpenAI project or Anthropic workspace than the one
that sent it) is unknown: it may still run, and bill, under the key that
sent it, and a run does not send its requests again unless told to with
--batch-retry unknown. Cancel it with the key that sent it.

Exit status: 0 listed; 1 the database cannot be read, or --refresh could not
ask a provider of a batch (the others are listed as asked); 2 bad usage.`,
		Example: cmdutil.Example("digest batches", "digest batches --refresh", "digest batches --all --format json", "digest batches cancel msgbatch_013Zva2CMHLNnXjNJJKqJ2EF"),
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return run(cmd.Context()) },
	}
	cmd.Flags().BoolVar(&o.All, "all", false, "list collected batches too")
	cmd.Flags().BoolVar(&o.Refresh, "refresh", false, "ask each provider where its uncollected batches stand before listing them")
	cmd.Flags().StringVarP(&o.Format, "format", "f", "table", "output: table or json")
	cmdutil.DocumentEnv(cmd.Flags())
	cancel := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a batch: the provider stops it and answers what it already has",
		Long: `Ask the provider to cancel a batch, named by digest's id or the provider's. The
provider ends it within minutes; what it answered before is kept and collected by
the command that sent it, and what it had not is sent again by that command. Use
the API key of the run that sent it: another project's or workspace's key gets
the provider's 404, as does a look at it (the batch is then listed as unknown).

Exit status: 0 cancel asked for; 1 the provider refused; 2 no such batch, or bad usage.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Cancel = args[0]
			return run(cmd.Context())
		},
	}
	cmd.AddCommand(cancel)
	return cmd
}

func runBatches(ctx context.Context, o *BatchesOptions) error {
	if o.Format != "table" && o.Format != "json" {
		return cmdutil.UsageError("--format %q is neither table nor json. Try: --format json", o.Format)
	}
	st, err := o.OpenExisting(ctx, o.Refresh || o.Cancel != "")
	if err != nil {
		return err
	}
	defer st.Close()
	batches, err := st.Batches(ctx, !o.All && o.Cancel == "")
	if err != nil {
		return err
	}
	if o.Cancel != "" {
		return cancelBatch(ctx, o, st, batches)
	}
	var refreshErr error
	if o.Refresh {
		refreshErr = refreshBatches(ctx, o, st, batches)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := listBatches(o, batches); err != nil {
		return err
	}
	return refreshErr
}

func listBatches(o *BatchesOptions, batches []store.Batch) error {
	if o.Format == "json" {
		return writeBatchesJSON(o.IO.Out, batches)
	}
	if len(batches) == 0 {
		o.Infof("digest: no batches waiting to be collected (--all lists every one)")
		return nil
	}
	tw := tabwriter.NewWriter(o.IO.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPROVIDER ID\tMODEL\tSTATUS\tITEMS\tANSWERED\tUNANSWERED\tAGE\tCOLLECTED")
	for _, b := range batches {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%v\n", b.ID, textsafe.Line(b.ProviderID), textsafe.Line(b.Model), textsafe.Line(b.Status),
			b.Items, b.Succeeded, b.Errored+b.Canceled+b.Expired, age(time.Since(b.CreatedAt)), b.Collected)
	}
	return tw.Flush()
}

// refreshBatches asks the provider of each uncollected batch where it
// stands, updating batches in place and in the store. A batch the key
// cannot see (a 404 or 403, decided by batchrun.Unseen as a run's look
// decides it) is recorded unknown; one whose provider cannot be asked
// keeps its last state. Either is named in a warning, and the error
// returned counts them.
func refreshBatches(ctx context.Context, o *BatchesOptions, st store.Store, batches []store.Batch) error {
	batchers := map[string]provider.Batcher{} // by model and server
	failed := 0
	for i, rec := range batches {
		if rec.Collected || rec.ProviderID == "" {
			continue
		}
		b, err := batcherFor(o, rec, batchers)
		if err == nil {
			batches[i], err = batchrun.Refresh(ctx, st, b, rec)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed++
			var ue *batchrun.UnseenError
			if errors.As(err, &ue) {
				o.Logger().Warn("could not ask the provider where a batch stands: this API key cannot see it, so it shows as unknown",
					"batch", rec.ID, "provider_id", rec.ProviderID, "model", rec.Model, "error", err)
				continue
			}
			o.Logger().Warn("could not ask the provider where a batch stands; it shows the state last seen",
				"batch", rec.ID, "provider_id", rec.ProviderID, "model", rec.Model, "error", err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of the batches listed could not be refreshed; they show the state last seen, or unknown where the API key cannot see them. Try: the API key of the run that sent them", failed)
	}
	return nil
}

// batcherFor is the batch API a recorded batch was sent through, built
// once per model and server.
func batcherFor(o *BatchesOptions, rec store.Batch, made map[string]provider.Batcher) (provider.Batcher, error) {
	id := rec.Model + " " + rec.BaseURL
	if b, ok := made[id]; ok {
		return b, nil
	}
	spec, err := provider.ParseSpec(rec.Model)
	if err != nil {
		return nil, err
	}
	p, err := o.Provider(spec, cmdutil.ProviderOptions{BaseURL: rec.BaseURL, Concurrency: 1})
	if err != nil {
		return nil, err
	}
	b, ok := p.(provider.Batcher)
	if !ok {
		return nil, noBatchAPI(spec)
	}
	made[id] = b
	return b, nil
}

func age(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return d.Round(time.Second).String()
}

func writeBatchesJSON(w io.Writer, batches []store.Batch) error {
	type row struct {
		ID         string    `json:"id"`
		ProviderID string    `json:"provider_id"`
		Model      string    `json:"model"`
		BaseURL    string    `json:"base_url,omitempty"`
		Status     string    `json:"status"`
		Items      int       `json:"items"`
		Succeeded  int       `json:"succeeded"`
		Errored    int       `json:"errored"`
		Canceled   int       `json:"canceled"`
		Expired    int       `json:"expired"`
		Message    string    `json:"message,omitempty"`
		Collected  bool      `json:"collected"`
		CreatedAt  time.Time `json:"created_at"`
		UpdatedAt  time.Time `json:"updated_at"`
	}
	rows := make([]row, len(batches))
	for i, b := range batches {
		rows[i] = row{b.ID, b.ProviderID, b.Model, b.BaseURL, b.Status, b.Items, b.Succeeded, b.Errored, b.Canceled, b.Expired,
			b.Message, b.Collected, b.CreatedAt, b.UpdatedAt}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// cancelBatch asks the provider of the batch named id to cancel it.
func cancelBatch(ctx context.Context, o *BatchesOptions, st store.Store, batches []store.Batch) error {
	var found *store.Batch
	for i, b := range batches {
		if b.ID == o.Cancel || b.ProviderID == o.Cancel {
			found = &batches[i]
			break
		}
	}
	if found == nil {
		return cmdutil.UsageError("no batch %q in %s. Try: digest batches --all, and an ID it lists", textsafe.Line(o.Cancel), st.Path())
	}
	if found.Collected {
		return cmdutil.UsageError("batch %s is collected: it has ended and its results are stored. Nothing to cancel", found.ID)
	}
	if found.ProviderID == "" {
		return cmdutil.UsageError("batch %s was being created when its run stopped; the provider has not named it. Try: run the command that sent it again, which finds it", found.ID)
	}
	b, err := batcherFor(o, *found, map[string]provider.Batcher{})
	if err != nil {
		return err
	}
	if err := b.Cancel(ctx, found.ProviderID); err != nil {
		return fmt.Errorf("cancel batch %s (%s): %w", found.ID, found.ProviderID, err)
	}
	o.Infof("digest: asked %s to cancel batch %s (%s); run the command that sent it again to collect what it answered and send the rest again",
		strings.SplitN(found.Model, ":", 2)[0], found.ID, found.ProviderID)
	return nil
}
