package summarize

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// startHook runs fn when the run has looked commits up and is about to
// claim and send its misses.
type startHook func()

func (h startHook) Found(int)               { h() }
func (startHook) Done(int)                  {}
func (startHook) Spent(int, float64, int64) {}

// A summary another process stores, letting its lease go, after this run
// looked the cache up is read from the store: this run wins the free lease
// but must not pay for the commit again.
func TestSummaryStoredAfterTheLookupIsNotPaidAgain(t *testing.T) {
	ctx := context.Background()
	r := gittest.New(t)
	var hashes []string
	for i := range 3 {
		hashes = append(hashes, r.Write("f.txt", fmt.Sprint(i)).Commit(fmt.Sprintf("Change %d", i)))
	}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "d.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tok, err := tokenizer.New("")
	if err != nil {
		t.Fatal(err)
	}
	spec := provider.Spec{Provider: provider.Offline, Model: provider.Offline}
	opts := Options{Repos: []string{r.Dir}, RepoID: "r", Concurrency: 1, BatchSize: 1,
		Target: target.Target{Spec: spec, Provider: offline.New(tok.Count)}, Tokenizer: tok, Store: st, Lease: 200 * time.Millisecond}
	opts.Progress = startHook(func() {
		for _, h := range hashes {
			err := st.SaveSummary(ctx, store.Commit{RepoID: "r", Hash: h, Subject: "stored elsewhere"}, store.Summary{
				SummaryKey: store.SummaryKey{RepoID: "r", Commit: h, Model: spec.String(), PromptVersion: prompt.Version, Scope: opts.Walk.Paths.String()},
				Text:       "by the other process"})
			if err != nil {
				t.Error(err)
			}
		}
	})
	res, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine.Requests != 0 {
		t.Errorf("%d requests for commits another process had summarized, want 0", res.Engine.Requests)
	}
	if len(res.Changelog.Entries) != len(hashes) {
		t.Fatalf("%d entries, want %d", len(res.Changelog.Entries), len(hashes))
	}
	for _, e := range res.Changelog.Entries {
		if e.Summary != "by the other process" || !e.Cached {
			t.Errorf("commit %s: summary %q, cached %v; want the other process's, cached", e.Commit[:8], e.Summary, e.Cached)
		}
	}
}
