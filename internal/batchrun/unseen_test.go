package batchrun_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/store"
)

// keyed is w's batch API on srv under the API key given: with
// BatchAPIConfig.PerKey, each key sees only the batches it made, as an
// OpenAI project's or an Anthropic workspace's key does.
func keyed(w wire, srv *fakeprovider.Server, key string) provider.Batcher {
	if w.name == "anthropic" {
		return anthropic.New(anthropic.Options{BaseURL: srv.AnthropicBaseURL(), APIKey: key, KeyEnv: "ANTHROPIC_API_KEY", HTTPClient: srv.Client()})
	}
	return openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: key, KeyEnv: "OPENAI_API_KEY", HTTPClient: srv.Client()})
}

// logged is a slog.Logger writing into a buffer safe to read while the
// run writes.
type logged struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logged) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logged) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logged) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// TestUnseenBatchIsNotSentAgain: a run with key A leaves its batch running
// (--no-wait); a rerun with key B, of another project or workspace, gets
// 404 looking at it. The batch may still run and bill under A: it is
// recorded unknown, not failed nor collected, a warning says so with the
// key hint, each task ends with an *UnseenError, and nothing is sent
// again. `digest batches --refresh` (Refresh) with B decides the same;
// with A it sees the batch again, and a run with A collects it.
func TestUnseenBatchIsNotSentAgain(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: 400 * time.Millisecond}})
			st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
			cfg := batchrun.Config{Spec: w.spec, BaseURL: w.base(srv), Store: st,
				Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 50 * time.Millisecond}
			ts := tasks(w, 6)
			first := cfg
			first.Batcher, first.NoWait = keyed(w, srv, "key-a"), true
			if _, err := run(t, batchrun.New(first), ts); err != nil {
				t.Fatal(err)
			}
			sent := srv.Stats()

			var logs logged
			second := cfg
			second.Batcher, second.Log = keyed(w, srv, "key-b"), logs.logger()
			got, err := run(t, batchrun.New(second), ts)
			if err != nil {
				t.Fatalf("%v\n%s", err, logs.String())
			}
			for k, o := range got {
				var ue *batchrun.UnseenError
				if !errors.As(o.Err, &ue) || ue.Batch.Status != batchrun.StatusUnknown || !strings.Contains(o.Err.Error(), "HTTP 404") {
					t.Errorf("%s: %v, want an UnseenError", k, o.Err)
				}
			}
			if len(got) != len(ts) {
				t.Errorf("%d outcomes, want %d", len(got), len(ts))
			}
			after := srv.Stats()
			if after.BatchesCreated != sent.BatchesCreated || after.BatchItems != sent.BatchItems {
				t.Errorf("the rerun with another key created %d batches of %d items: it paid again", after.BatchesCreated-sent.BatchesCreated, after.BatchItems-sent.BatchItems)
			}
			for _, want := range []string{"level=WARN", "cannot be seen with this API key", "HTTP 404", "Try: the API key of the run that sent it", "--batch-retry unknown"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the warning does not say %q:\n%s", want, logs.String())
				}
			}
			if n := strings.Count(logs.String(), "cannot be seen"); n != 1 {
				t.Errorf("%d warnings for one batch, want 1:\n%s", n, logs.String())
			}
			open, err := st.Batches(context.Background(), true)
			if err != nil || len(open) != 1 || open[0].Status != batchrun.StatusUnknown || open[0].Collected || !strings.Contains(open[0].Message, "HTTP 404") {
				t.Fatalf("the batch as recorded after the rerun: %+v, %v", open, err)
			}

			// --refresh decides alike, through the same Unseen.
			rec, err := batchrun.Refresh(context.Background(), st, keyed(w, srv, "key-b"), open[0])
			var ue *batchrun.UnseenError
			if !errors.As(err, &ue) || rec.Status != batchrun.StatusUnknown || rec.Collected {
				t.Errorf("Refresh with another key: %+v, %v", rec, err)
			}
			time.Sleep(400 * time.Millisecond) // the fake's processing: the batch has ended under A
			if rec, err = batchrun.Refresh(context.Background(), st, keyed(w, srv, "key-a"), open[0]); err != nil || rec.Status != string(provider.BatchEnded) || rec.Collected {
				t.Errorf("Refresh with the key that sent it: %+v, %v", rec, err)
			}
			third := cfg
			third.Batcher = keyed(w, srv, "key-a")
			got, err = run(t, batchrun.New(third), ts)
			if err != nil {
				t.Fatal(err)
			}
			for k, o := range got {
				if o.Err != nil || o.Response.Text == "" {
					t.Errorf("%s with the key that sent it: %v", k, o.Err)
				}
			}
			if n := srv.Stats().BatchesCreated; n != sent.BatchesCreated {
				t.Errorf("%d batches created in all, want the %d of the first run", n, sent.BatchesCreated)
			}
			if open, _ := st.Batches(context.Background(), true); len(open) != 0 {
				t.Errorf("left open after collecting: %+v", open)
			}
		})
	}
}

// TestUnseenBatchWithRetryUnknownIsSentAgain: with --batch-retry unknown
// the tasks of a batch the key cannot see go out again, in a new batch,
// and are answered; the unseen batch stays open, listed as unknown, for
// the key that sent it to cancel.
func TestUnseenBatchWithRetryUnknownIsSentAgain(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	cfg := batchrun.Config{Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 50 * time.Millisecond}
	ts := tasks(w, 5)
	first := cfg
	first.Batcher, first.NoWait = keyed(w, srv, "key-a"), true
	if _, err := run(t, batchrun.New(first), ts); err != nil {
		t.Fatal(err)
	}
	srv.SetBatchProcessing(0)
	var logs logged
	second := cfg
	second.Batcher, second.Log, second.RetryUnknown = keyed(w, srv, "key-b"), logs.logger(), true
	got, err := run(t, batchrun.New(second), ts)
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range got {
		if o.Err != nil || o.Response.Text == "" {
			t.Errorf("%s with --batch-retry unknown: %v", k, o.Err)
		}
	}
	if st := srv.Stats(); st.BatchesCreated != 2 || st.BatchItems != 10 {
		t.Errorf("%d batches of %d items, want the unseen one and one sending its 5 requests again", st.BatchesCreated, st.BatchItems)
	}
	if !strings.Contains(logs.String(), "sending its requests again (--batch-retry unknown)") {
		t.Errorf("no warning that the requests go again:\n%s", logs.String())
	}
	open, err := st.Batches(context.Background(), true)
	if err != nil || len(open) != 1 || open[0].Status != batchrun.StatusUnknown {
		t.Fatalf("open batches: %+v, %v", open, err)
	}
	if err := keyed(w, srv, "key-a").Cancel(context.Background(), open[0].ProviderID); err != nil {
		t.Errorf("the key that sent it cannot cancel it: %v", err)
	}
}

// TestStrayResultLinesAnswerNothing: a batch's results that repeat a
// custom_id (with another answer) and hold one it was never sent: each
// item's answer is the one of its own first line, the stray lines answer
// nothing and are told as what they are, and nothing is sent again.
func TestStrayResultLinesAnswerNothing(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{
				Answer: func(r fakeprovider.Received) string { return "ANSWER to " + r.Messages[len(r.Messages)-1].Content },
				BatchAPI: fakeprovider.BatchAPIConfig{Tamper: func(format string, lines [][]byte) [][]byte {
					out := make([][]byte, 0, 2*len(lines)+1)
					for _, l := range lines {
						out = append(out, l, bytes.ReplaceAll(l, []byte("ANSWER"), []byte("FORGED")))
					}
					// A near miss of a custom_id that was sent.
					never := bytes.Replace(lines[0], []byte(`"custom_id":"`), []byte(`"custom_id":"x`), 1)
					return append(out, bytes.ReplaceAll(never, []byte("ANSWER"), []byte("FORGED")))
				}}})
			var logs logged
			r := batchrun.New(batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv),
				Store: openStore(t, filepath.Join(t.TempDir(), "digest.db")), Log: logs.logger(),
				Gather: 50 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 50 * time.Millisecond})
			ts := tasks(w, 8)
			got, err := run(t, r, ts)
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range ts {
				want := "ANSWER to " + tk.Request.Messages[0].Content
				if o := got[tk.Key]; o.Err != nil || o.Response.Text != want {
					t.Errorf("%s: %q, %v; want %q, its own line's answer", tk.Key, o.Response.Text, o.Err, want)
				}
			}
			stats := srv.Stats()
			if stats.BatchItems != len(ts) {
				t.Errorf("%d items sent for %d tasks: a stray line had something sent again", stats.BatchItems, len(ts))
			}
			log := logs.String()
			for _, want := range []string{
				`msg="batch results name custom_ids the batch was not sent: those lines answer nothing, and nothing is sent again for them" model=` + w.spec.String(),
				`lines=1 first=`,
				`was not in the batch`, // the near miss, named
				"batch results hold a custom_id on more than one line: each item's answer is its first line's",
				fmt.Sprintf("lines=%d", len(ts)),
			} {
				if !strings.Contains(log, want) {
					t.Errorf("the warnings do not say %q:\n%s", want, log)
				}
			}
			if strings.Contains(log, "is sent again") && !strings.Contains(log, "nothing is sent again") {
				t.Errorf("a stray line is told as an item sent again:\n%s", log)
			}
		})
	}
}

// TestUnseenIsA404Or403: what a failed look means is decided in one place
// for a run's looks and for Refresh: the provider's 404 or 403 marks the
// batch unknown; any other failure, a server error, a cut connection or
// the run's own cancellation, says nothing of the batch.
func TestUnseenIsA404Or403(t *testing.T) {
	rec := store.Batch{ID: "digest-1", Model: "openai:m", ProviderID: "batch_1", Status: "in_progress", Items: 3}
	for _, c := range []struct {
		err    error
		unseen bool
	}{
		{&provider.Error{Provider: "openai", Kind: provider.Permanent, StatusCode: 404, Type: "invalid_request_error", Message: "No batch found with id 'batch_1'.", Hint: "Try: elsewhere"}, true},
		{fmt.Errorf("look: %w", &provider.Error{Provider: "anthropic", Kind: provider.Fatal, StatusCode: 403, Type: "permission_error", Message: "not yours"}), true},
		{&provider.Error{Provider: "openai", Kind: provider.Transient, StatusCode: 500, Message: "boom"}, false},
		{&provider.Error{Provider: "openai", Kind: provider.Fatal, StatusCode: 401, Message: "bad key"}, false},
		{&provider.Error{Provider: "openai", Kind: provider.Permanent, StatusCode: 400, Message: "odd"}, false},
		{context.Canceled, false},
		{errors.New("connection reset"), false},
	} {
		ue := batchrun.Unseen(rec, c.err)
		if (ue != nil) != c.unseen {
			t.Errorf("%v: Unseen = %v, want unseen %v", c.err, ue, c.unseen)
			continue
		}
		if ue == nil {
			continue
		}
		if b := ue.Batch; b.Status != batchrun.StatusUnknown || b.Collected || b.ID != rec.ID || b.ProviderID != rec.ProviderID || strings.Contains(b.Message, "Try:") {
			t.Errorf("%v: marked %+v", c.err, b)
		}
		if msg := ue.Error(); !strings.Contains(msg, "batch_1 cannot be seen with this API key") || !strings.Contains(msg, "digest batches cancel digest-1") {
			t.Errorf("%v: %s", c.err, msg)
		}
	}
}

// refusedList is a batch API whose List the key may not use (a 403).
type refusedList struct{ provider.Batcher }

func (refusedList) List(context.Context, time.Time) ([]provider.Batch, error) {
	return nil, &provider.Error{Provider: "openai", Kind: provider.Fatal, StatusCode: 403, Type: "permission_error", Message: "You have insufficient permissions for this operation."}
}

// TestCreationCutShortUnseenIsNotSentAgain: a batch whose creation was cut
// short is looked for among the provider's batches; a key refused that
// list (403) cannot tell whether it was made, so the record is marked
// unknown and nothing is sent for it.
func TestCreationCutShortUnseenIsNotSentAgain(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	ts := tasks(w, 3)
	rec := store.Batch{ID: "digest-cut-short", Model: w.spec.String(), BaseURL: key.BaseURL(w.base(srv)), Status: batchrun.StatusCreating,
		Items: len(ts), CreatedAt: time.Now().UTC()}
	var rows []store.BatchItem
	for i, tk := range ts {
		body, _ := json.Marshal(tk.Request)
		rows = append(rows, store.BatchItem{BatchID: rec.ID, CustomID: fmt.Sprintf("item-%d", i), Request: body, Members: []string{tk.Key}})
	}
	if err := st.CreateBatch(context.Background(), rec, rows); err != nil {
		t.Fatal(err)
	}
	r := batchrun.New(batchrun.Config{Batcher: refusedList{w.client(srv)}, Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond})
	got, err := run(t, r, ts)
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range got {
		var ue *batchrun.UnseenError
		if !errors.As(o.Err, &ue) || !strings.Contains(o.Err.Error(), "HTTP 403") {
			t.Errorf("%s: %v, want an UnseenError", k, o.Err)
		}
	}
	if n := srv.Stats().BatchesCreated; n != 0 {
		t.Errorf("%d batches created for work a batch of unknown fate holds", n)
	}
	if open, _ := st.Batches(context.Background(), true); len(open) != 1 || open[0].Status != batchrun.StatusUnknown {
		t.Errorf("the record after the refused list: %+v", open)
	}
}

// lagging is a batch API whose first looks at a batch answer 404, as a
// provider's may right after the batch is made.
type lagging struct {
	provider.Batcher
	mu    sync.Mutex
	looks int
}

func (l *lagging) Poll(ctx context.Context, id string) (provider.Batch, error) {
	l.mu.Lock()
	l.looks++
	n := l.looks
	l.mu.Unlock()
	if n <= 2 {
		return provider.Batch{}, &provider.Error{Provider: "openai", Kind: provider.Permanent, StatusCode: 404, Type: "invalid_request_error", Message: "No batch found with id '" + id + "'."}
	}
	return l.Batcher.Poll(ctx, id)
}

// TestOwnBatch404IsLookedAtAgain: a batch this run made with its own key
// answered 404 is not another key's: the look is tried again, and the
// answers come, from the one batch.
func TestOwnBatch404IsLookedAtAgain(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	r := batchrun.New(batchrun.Config{Batcher: &lagging{Batcher: w.client(srv)}, Spec: w.spec, BaseURL: w.base(srv),
		Store: openStore(t, filepath.Join(t.TempDir(), "digest.db")), Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 20 * time.Millisecond})
	got, err := run(t, r, tasks(w, 4))
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range got {
		if o.Err != nil || o.Response.Text == "" {
			t.Errorf("%s: %v", k, o.Err)
		}
	}
	if n := srv.Stats().BatchesCreated; n != 1 {
		t.Errorf("%d batches created, want 1", n)
	}
}
