package batchrun_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/batchrun"
	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/key"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// wire is one provider's batch API on a fake server.
type wire struct {
	name   string
	spec   provider.Spec
	client func(*fakeprovider.Server) provider.Batcher
	base   func(*fakeprovider.Server) string
}

var wires = []wire{
	{"openai", provider.Spec{Provider: "openai", Model: "gpt-4o-mini"},
		func(s *fakeprovider.Server) provider.Batcher {
			return openai.New(openai.Options{BaseURL: s.OpenAIBaseURL(), APIKey: "sk-test", KeyEnv: "OPENAI_API_KEY", HTTPClient: s.Client()})
		}, (*fakeprovider.Server).OpenAIBaseURL},
	{"anthropic", provider.Spec{Provider: "anthropic", Model: "claude-haiku-4-5"},
		func(s *fakeprovider.Server) provider.Batcher {
			return anthropic.New(anthropic.Options{BaseURL: s.AnthropicBaseURL(), APIKey: "sk-ant-test", KeyEnv: "ANTHROPIC_API_KEY", HTTPClient: s.Client()})
		}, (*fakeprovider.Server).AnthropicBaseURL},
}

func openStore(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func runner(w wire, srv *fakeprovider.Server, st store.Store, noWait bool) *batchrun.Runner {
	return batchrun.New(batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 50 * time.Millisecond, NoWait: noWait})
}

func tasks(w wire, n int) []engine.Task {
	out := make([]engine.Task, n)
	for i := range out {
		out[i] = engine.Task{Key: fmt.Sprintf("key-%d", i), Request: provider.Request{Model: w.spec.Model, MaxTokens: 40,
			Messages: []provider.Message{{Role: "user", Content: fmt.Sprintf("question %d", i)}}}}
	}
	return out
}

// uncollect marks the one batch recorded in the database at path as not
// collected, with status when it is not "", as a process that stopped
// before it could mark it left it. UpdateBatch keeps a collected batch
// collected, so the file is written behind the store's back.
func uncollect(t *testing.T, path, status string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	query := `UPDATE batches SET collected = 0`
	if status != "" {
		query += `, status = '` + status + `'`
	}
	if res, err := db.Exec(query); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d batches un-collected, want the one recorded", n)
	}
}

// run sends ts through r and returns the outcomes by key.
func run(t *testing.T, r *batchrun.Runner, ts []engine.Task) (map[string]engine.Outcome, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch := make(chan engine.Task)
	go func() {
		defer close(ch)
		for _, tk := range ts {
			ch <- tk
		}
	}()
	got := map[string]engine.Outcome{}
	err := r.Run(ctx, ch, func(o engine.Outcome) error {
		if _, dup := got[o.Task.Key]; dup {
			t.Errorf("task %s has two outcomes", o.Task.Key)
		}
		got[o.Task.Key] = o
		return nil
	})
	return got, err
}

// some picks about one item in twenty of the first 200 sent, by a hash of
// its custom ID (which ends in the item's number in the run): an item sent
// again is answered.
func some(customID string) bool {
	n, _ := strconv.Atoi(customID[strings.LastIndexByte(customID, '-')+1:])
	h := fnv.New32a()
	h.Write([]byte(customID))
	return n <= 200 && h.Sum32()%20 == 0
}

// TestEveryTaskIsAnsweredOncePaidOnce: 200 tasks, a twentieth of them
// errored by the provider, go through each provider's batch API: every
// task gets its answer, the errored ones through a second batch, and no
// item is answered twice.
func TestEveryTaskIsAnsweredOncePaidOnce(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Errored: some, Processing: 30 * time.Millisecond}})
			st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
			r := runner(w, srv, st, false)
			got, err := run(t, r, tasks(w, 200))
			if err != nil {
				t.Fatal(err)
			}
			for k, o := range got {
				if o.Err != nil || o.Response.Text == "" {
					t.Errorf("%s: %v, %q", k, o.Err, o.Response.Text)
				}
			}
			stats := srv.Stats()
			if len(got) != 200 || stats.BatchesCreated < 2 || stats.BatchItems <= 200 {
				t.Errorf("outcomes %d, batches %d, items %d: the errored items were not sent again", len(got), stats.BatchesCreated, stats.BatchItems)
			}
			if st := r.Stats(); st.Retries == 0 || st.Requests != int64(stats.BatchItems) {
				t.Errorf("runner stats %+v, fake items %d: the errored items were not sent again", st, stats.BatchItems)
			}
			if stats.BatchItemsAnswered != stats.BatchItems {
				t.Errorf("%d items sent, %d answered", stats.BatchItems, stats.BatchItemsAnswered)
			}
			open, err := st.Batches(context.Background(), true)
			if err != nil || len(open) != 0 {
				t.Errorf("batches left open: %+v, %v", open, err)
			}
		})
	}
}

// TestRerunCollectsInsteadOfSubmitting: --no-wait leaves every task
// pending; a later run on the same store (a new process) waits for the
// batch it finds by the tasks' members instead of creating another.
func TestRerunCollectsInsteadOfSubmitting(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 300 * time.Millisecond}})
			path := filepath.Join(t.TempDir(), "digest.db")
			got, err := run(t, runner(w, srv, openStore(t, path), true), tasks(w, 30))
			if err != nil {
				t.Fatal(err)
			}
			for k, o := range got {
				if !errors.Is(o.Err, engine.ErrPending) {
					t.Fatalf("%s with --no-wait: %v, want ErrPending", k, o.Err)
				}
			}
			sent := srv.Stats().BatchesCreated // one, or more if the tasks came slower than Gather
			got, err = run(t, runner(w, srv, openStore(t, path), false), tasks(w, 30))
			if err != nil {
				t.Fatal(err)
			}
			for k, o := range got {
				if o.Err != nil || o.Response.Text == "" {
					t.Errorf("%s on the rerun: %v", k, o.Err)
				}
			}
			if n := srv.Stats().BatchesCreated; n != sent {
				t.Errorf("%d batches created, %d of them by the rerun: it paid again", n, n-sent)
			}
			// A third run finds every answer stored: nothing is sent.
			before := srv.Stats().BatchCalls
			if got, err = run(t, runner(w, srv, openStore(t, path), false), tasks(w, 30)); err != nil || len(got) != 30 {
				t.Fatal(len(got), err)
			}
			if calls := srv.Stats().BatchCalls - before; calls != 0 {
				t.Errorf("a run whose answers are stored made %d batch calls", calls)
			}
		})
	}
}

// TestLostCreationIsFoundNotDuplicated: the provider makes the batch but
// its answer is lost (a 500 after the fact). The run finds the batch among
// the provider's (OpenAI by its label, Anthropic by size and time) instead
// of creating a second one.
func TestLostCreationIsFoundNotDuplicated(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{LoseCreate: func(n int) bool { return n == 1 }}})
			got, err := run(t, runner(w, srv, openStore(t, filepath.Join(t.TempDir(), "digest.db")), false), tasks(w, 12))
			if err != nil {
				t.Fatal(err)
			}
			for k, o := range got {
				if o.Err != nil {
					t.Errorf("%s: %v", k, o.Err)
				}
			}
			// More batches holding the 12 items once would be a split, not a
			// duplicate: the items sent tell the two apart.
			if st := srv.Stats(); st.BatchesCreated != 1 || st.BatchItems != 12 {
				t.Errorf("%d batches of %d items created after a lost answer, want 1 of 12", st.BatchesCreated, st.BatchItems)
			}
		})
	}
}

// TestSharedRequestIsFoundByEachMember: a request holding two pieces of
// work (two commits) answered by a batch serves a rerun that asks for one
// of them alone, and its share of the tokens, with nothing sent.
func TestSharedRequestIsFoundByEachMember(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	path := filepath.Join(t.TempDir(), "digest.db")
	pair := tasks(w, 1)
	pair[0].Members = []string{"commit-a", "commit-b"}
	first, err := run(t, runner(w, srv, openStore(t, path), false), pair)
	if err != nil {
		t.Fatal(err)
	}
	alone := tasks(w, 1)
	alone[0].Key, alone[0].Members = "other-grouping", []string{"commit-b"}
	before := srv.Stats().BatchesCreated
	got, err := run(t, runner(w, srv, openStore(t, path), false), alone)
	if err != nil {
		t.Fatal(err)
	}
	o := got["other-grouping"]
	paid := first[pair[0].Key].Response
	if o.Err != nil || o.Response.Text != paid.Text || srv.Stats().BatchesCreated != before {
		t.Fatalf("commit-b alone: %v %q, batches %d -> %d", o.Err, o.Response.Text, before, srv.Stats().BatchesCreated)
	}
	if o.Response.Usage.InputTokens != paid.Usage.InputTokens/2 {
		t.Errorf("one of two members got %d input tokens of %d", o.Response.Usage.InputTokens, paid.Usage.InputTokens)
	}
}

// TestDoCallsShareABatch: verdicts asked at once, each by its own caller,
// go out together.
func TestDoCallsShareABatch(t *testing.T) {
	w := wires[1]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	r := batchrun.New(batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv),
		Store: openStore(t, filepath.Join(t.TempDir(), "digest.db")), Gather: 300 * time.Millisecond, PollMin: 10 * time.Millisecond})
	var wg sync.WaitGroup
	for _, tk := range tasks(w, 25) {
		wg.Go(func() {
			if o := r.Do(context.Background(), tk); o.Err != nil || o.Response.Text == "" {
				t.Errorf("%s: %v", tk.Key, o.Err)
			}
		})
	}
	wg.Wait()
	if n := srv.Stats().BatchesCreated; n != 1 {
		t.Errorf("25 concurrent calls made %d batches, want 1", n)
	}
}

// TestRefusedKeyStopsTheRun: a 401 on creation is the provider's message,
// stopping the run, and the batch's record is closed.
func TestRefusedKeyStopsTheRun(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: "the-right-one"})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	_, err := run(t, runner(w, srv, st, false), tasks(w, 3))
	var fe *engine.FatalError
	if !errors.As(err, &fe) || provider.KindOf(err) != provider.Fatal {
		t.Fatalf("run with a refused key: %v", err)
	}
	open, _ := st.Batches(context.Background(), true)
	if len(open) != 0 {
		t.Errorf("the refused batch's record is left open: %+v", open)
	}
}

// TestCreationCutShortIsFoundOrSentOnce: a process that recorded a batch
// and died before the provider's answer was stored leaves a "creating"
// record. A rerun finds the batch the provider made (OpenAI by its label,
// Anthropic by size and time) and waits for it; a record whose batch was
// never made is closed and its work sent once.
func TestCreationCutShortIsFoundOrSentOnce(t *testing.T) {
	for _, w := range wires {
		for _, made := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/made=%v", w.name, made), func(t *testing.T) {
				srv := fakeprovider.Start(t, fakeprovider.Config{})
				st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
				ts := tasks(w, 5)
				rec := store.Batch{ID: "digest-cut-short", Model: w.spec.String(), BaseURL: key.BaseURL(w.base(srv)), Status: batchrun.StatusCreating,
					Items: len(ts), CreatedAt: time.Now().UTC()}
				var rows []store.BatchItem
				var items []provider.BatchItem
				for i, tk := range ts {
					id := fmt.Sprintf("item-%d", i)
					body, _ := json.Marshal(tk.Request)
					rows = append(rows, store.BatchItem{BatchID: rec.ID, CustomID: id, Request: body, Members: []string{tk.Key}})
					items = append(items, provider.BatchItem{CustomID: id, Request: tk.Request})
				}
				if err := st.CreateBatch(context.Background(), rec, rows); err != nil {
					t.Fatal(err)
				}
				if made {
					if _, err := w.client(srv).Submit(context.Background(), rec.ID, items); err != nil {
						t.Fatal(err)
					}
				}
				got, err := run(t, runner(w, srv, st, false), ts)
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
				open, _ := st.Batches(context.Background(), true)
				if len(open) != 0 {
					t.Errorf("records left open: %+v", open)
				}
			})
		}
	}
}

// TestBatchRefusedAsAWholeStopsTheRun: a batch the provider fails as a
// whole (an input file that does not validate) stops the run with the
// provider's message, and its record is closed. The file is spoilt on its
// way to the fake, as a proxy between digest and OpenAI could.
func TestBatchRefusedAsAWholeStopsTheRun(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	target, _ := url.Parse(srv.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = srv.Client().Transport
	spoil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/files") {
			body, _ := io.ReadAll(r.Body)
			body = bytes.ReplaceAll(body, []byte(`"method":"POST"`), []byte(`"method":"PUT"`))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	defer spoil.Close()
	w := wires[0]
	client := openai.New(openai.Options{BaseURL: spoil.URL + "/v1", APIKey: "sk-test", KeyEnv: "OPENAI_API_KEY"})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	r := batchrun.New(batchrun.Config{Batcher: client, Spec: w.spec, BaseURL: spoil.URL + "/v1", Store: st,
		Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond})
	_, err := run(t, r, tasks(w, 3))
	var fe *engine.FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "failed") || !strings.Contains(err.Error(), "method must be POST") {
		t.Fatalf("a batch failed as a whole: %v", err)
	}
	open, _ := st.Batches(context.Background(), true)
	if len(open) != 0 {
		t.Errorf("the failed batch's record is left open: %+v", open)
	}
}

// TestRunsOneAfterAnother: summarize runs one dispatch per repository on
// one runner, cancelling each's context once it returns; the next Run
// must not be stranded by the loop the first one started.
func TestRunsOneAfterAnother(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	r := runner(w, srv, openStore(t, filepath.Join(t.TempDir(), "digest.db")), false)
	all := tasks(w, 20)
	for i := range 4 {
		ctx, cancel := context.WithCancel(context.Background())
		ch := make(chan engine.Task, 5)
		for _, tk := range all[i*5 : i*5+5] {
			ch <- tk
		}
		close(ch)
		done := make(chan error, 1)
		n := 0
		go func() { done <- r.Run(ctx, ch, func(engine.Outcome) error { n++; return nil }) }()
		select {
		case err := <-done:
			if err != nil || n != 5 {
				t.Fatalf("run %d: %v, %d outcomes", i, err, n)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d is stranded", i)
		}
		cancel()
	}
}

// TestManyDosOneAfterAnother: a caller that asks one thing at a time
// (the highlights, a judge) starts and ends the serving loop each time;
// none of its calls may be stranded between the two.
func TestManyDosOneAfterAnother(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	ts := tasks(w, 20)
	if _, err := run(t, runner(w, srv, st, false), ts); err != nil {
		t.Fatal(err)
	}
	r := runner(w, srv, st, false)
	// Answers stored: each call is served at once, the loop started and
	// ended around it as fast as it can go.
	for i := range 3000 {
		done := make(chan engine.Outcome, 1)
		go func() { done <- r.Do(context.Background(), ts[i%len(ts)]) }()
		select {
		case o := <-done:
			if o.Err != nil {
				t.Fatalf("call %d: %v", i, o.Err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d is stranded", i)
		}
	}
}

// TestTwoProcessesWaitingOnOneBatch: two runs on one store wait for the
// same batch, each for its own tasks; whichever collects it second finds
// the results stored and pays nothing again.
func TestTwoProcessesWaitingOnOneBatch(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 300 * time.Millisecond}})
	path := filepath.Join(t.TempDir(), "digest.db")
	ts := tasks(w, 30)
	if _, err := run(t, runner(w, srv, openStore(t, path), true), ts); err != nil {
		t.Fatal(err)
	}
	sent := srv.Stats().BatchesCreated
	var wg sync.WaitGroup
	for _, part := range [][]engine.Task{ts[:15], ts[15:]} {
		wg.Go(func() {
			got, err := run(t, runner(w, srv, openStore(t, path), false), part)
			if err != nil || len(got) != 15 {
				t.Errorf("%d outcomes, %v", len(got), err)
			}
			for k, o := range got {
				if o.Err != nil || o.Response.Text == "" {
					t.Errorf("%s: %v", k, o.Err)
				}
			}
		})
	}
	wg.Wait()
	if n := srv.Stats().BatchesCreated; n != sent {
		t.Errorf("%d batches created after the two waited, want %d: one paid again", n, sent)
	}
}

// TestPendingWorkIsNotSentAgain: a task left pending (--no-wait) and
// asked for again by the same runner waits for the same item.
func TestPendingWorkIsNotSentAgain(t *testing.T) {
	w := wires[1]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Minute}})
	r := runner(w, srv, openStore(t, filepath.Join(t.TempDir(), "digest.db")), true)
	ts := tasks(w, 3)
	for range 3 {
		got, err := run(t, r, ts)
		if err != nil || len(got) != 3 || !errors.Is(got[ts[0].Key].Err, engine.ErrPending) {
			t.Fatalf("%v %v", got, err)
		}
	}
	if n := srv.Stats().BatchesCreated; n != 1 {
		t.Errorf("the same pending work asked 3 times made %d batches", n)
	}
}

// TestBatchStoredButNotMarkedIsMarked: a process that stored every result
// of a batch and died before marking it collected leaves it listed as
// running; the run that serves its answers marks it.
func TestBatchStoredButNotMarkedIsMarked(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	path := filepath.Join(t.TempDir(), "digest.db")
	st := openStore(t, path)
	ts := tasks(w, 4)
	if _, err := run(t, runner(w, srv, st, false), ts); err != nil {
		t.Fatal(err)
	}
	uncollect(t, path, "") // as the dead process left it
	calls := srv.Stats().BatchCalls
	got, err := run(t, runner(w, srv, st, false), ts)
	if err != nil || len(got) != 4 || srv.Stats().BatchCalls != calls {
		t.Fatalf("%d outcomes, %v, %d batch calls", len(got), err, srv.Stats().BatchCalls-calls)
	}
	if open, _ := st.Batches(context.Background(), true); len(open) != 0 {
		t.Errorf("still listed as running: %+v", open)
	}
}

// TestQueueFullIsWaitedOut: the account's batch queue (OpenAI's enqueued
// tokens, Anthropic's requests in processing) has room for a quarter of
// the run. The batch it refuses ran nothing and costs nothing: its tasks
// go again in smaller batches, one after another as the queue drains, and
// every task is answered once.
func TestQueueFullIsWaitedOut(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			// 60 prompts of 3 tokens each, as the fake counts them.
			srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{
				Processing: 30 * time.Millisecond, QueueTokens: 50, QueueRequests: 16}})
			st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
			var logs bytes.Buffer
			r := batchrun.New(batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
				Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 50 * time.Millisecond,
				Tokens: srv.Estimate, Log: slog.New(slog.NewTextHandler(&logs, nil))})
			got, err := run(t, r, tasks(w, 60))
			if err != nil {
				t.Fatalf("%v\n%s", err, logs.String())
			}
			for k, o := range got {
				if o.Err != nil || o.Response.Text == "" {
					t.Errorf("%s: %v, %q", k, o.Err, o.Response.Text)
				}
			}
			stats := srv.Stats()
			if len(got) != 60 || stats.BatchesRefused == 0 || stats.BatchItems != 60 || stats.BatchItemsAnswered != 60 {
				t.Errorf("%d outcomes; fake: %d refused, %d items sent, %d answered", len(got), stats.BatchesRefused, stats.BatchItems, stats.BatchItemsAnswered)
			}
			// Once the room is learned the queue refuses little: a refusal
			// halves the batch until it fits (60 -> 30 -> 15), and a batch
			// that ends doubles it again, which the queue may refuse once.
			if stats.BatchesRefused > 5 {
				t.Errorf("%d batches refused: the room was not learned", stats.BatchesRefused)
			}
			if !strings.Contains(logs.String(), "the account's batch queue has no room") {
				t.Errorf("no warning of the full queue:\n%s", logs.String())
			}
			if open, err := st.Batches(context.Background(), true); err != nil || len(open) != 0 {
				t.Errorf("open batches left: %v %v", open, err)
			}
		})
	}
}

// TestQueueFullWithNoWaitEndsPending: with --no-wait, tasks the queue has
// no room for end pending, and the same command again sends them.
func TestQueueFullWithNoWaitEndsPending(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{QueueTokens: 20}})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	cfg := batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 20 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 50 * time.Millisecond, Tokens: srv.Estimate, NoWait: true}
	got, err := run(t, batchrun.New(cfg), tasks(w, 12))
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range got {
		if !errors.Is(o.Err, engine.ErrPending) {
			t.Errorf("%s: %v, want pending", k, o.Err)
		}
	}
	cfg.NoWait = false
	if got, err = run(t, batchrun.New(cfg), tasks(w, 12)); err != nil || len(got) != 12 {
		t.Fatalf("rerun: %d outcomes, %v", len(got), err)
	}
	for k, o := range got {
		if o.Err != nil {
			t.Errorf("rerun %s: %v", k, o.Err)
		}
	}
	if stats := srv.Stats(); stats.BatchItemsAnswered != 12 || stats.BatchItems != 12 {
		t.Errorf("fake: %d items sent, %d answered, want 12 each", stats.BatchItems, stats.BatchItemsAnswered)
	}
}

// TestQueueFullForALoneRequestStops: a request the queue refuses alone,
// with nothing of the run's queued, is refused again and again; the run
// stops with the provider's message instead of waiting for ever.
func TestQueueFullForALoneRequestStops(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{QueueTokens: 1}})
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	r := batchrun.New(batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 5 * time.Millisecond, PollMin: time.Millisecond, PollMax: 5 * time.Millisecond, Tokens: srv.Estimate})
	_, err := run(t, r, tasks(w, 1))
	var fe *engine.FatalError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "refused 8 batches in a row") || !strings.Contains(err.Error(), "Enqueued token limit reached") ||
		!strings.Contains(err.Error(), "Try: ") {
		t.Fatalf("err = %v, want the run stopped with the provider's message", err)
	}
	if stats := srv.Stats(); stats.BatchesRefused != 8 || stats.BatchItemsAnswered != 0 {
		t.Errorf("fake: %d refused, %d answered", stats.BatchesRefused, stats.BatchItemsAnswered)
	}
}

// TestQueueRoomGrowsBackOnceOthersDrain: another process's batch fills
// the account's queue when the run starts, so the run's batches are
// refused down to a request or two. Once that batch is gone, the room the
// run learned grows back with each of its batches that ends: the rest of
// the run goes in growing batches, not a request or two at a time.
func TestQueueRoomGrowsBackOnceOthersDrain(t *testing.T) {
	w := wires[0]
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 50 * time.Millisecond, QueueTokens: 60}})
	// 19 prompts of 3 tokens: 57 of the queue's 60, until it is canceled.
	var other []provider.BatchItem
	for i, tk := range tasks(w, 19) {
		other = append(other, provider.BatchItem{CustomID: fmt.Sprintf("other-%d", i), Request: tk.Request})
	}
	client := w.client(srv)
	srv.SetBatchProcessing(time.Hour)
	foreign, err := client.Submit(context.Background(), "another process", other)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetBatchProcessing(50 * time.Millisecond)
	st := openStore(t, filepath.Join(t.TempDir(), "digest.db"))
	r := batchrun.New(batchrun.Config{Batcher: w.client(srv), Spec: w.spec, BaseURL: w.base(srv), Store: st,
		Gather: 5 * time.Millisecond, PollMin: 10 * time.Millisecond, PollMax: 20 * time.Millisecond, Tokens: srv.Estimate})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// 60 -> 30 -> 15 -> 7 -> 3 -> 1 requests: five refusals.
		for deadline := time.Now().Add(10 * time.Second); srv.Stats().BatchesRefused < 5 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if err := client.Cancel(context.Background(), foreign.ID); err != nil {
			t.Error(err)
		}
	}()
	got, err := run(t, r, tasks(w, 60))
	<-done
	if err != nil || len(got) != 60 {
		t.Fatalf("%d outcomes, %v", len(got), err)
	}
	stats := srv.Stats()
	if accepted := stats.BatchesCreated - stats.BatchesRefused - 1; accepted > 20 || stats.BatchItems != 19+60 {
		t.Errorf("the run's 60 requests went in %d batches (%d refused), %d items sent: the room did not grow back",
			accepted, stats.BatchesRefused, stats.BatchItems-19)
	}
}
