package summarize

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// testRun is what `digest summarize` gives Run, built of real parts: an
// SQLite file, the tokenizer, and the offline model behind a counter (and,
// when wrap is set, behind what a test puts before it).
type testRun struct {
	t     *testing.T
	db    string
	tok   *tokenizer.Tokenizer
	calls atomic.Int32
	// wrap, when set, stands between the run and the offline model.
	wrap func(next provider.Provider) provider.Provider
	// mu guards sent, the prompts of the requests that reached the model.
	mu   sync.Mutex
	sent []string
	// logs holds what the runs logged, as slog's text handler writes it.
	logs strings.Builder
}

func newTestRun(t *testing.T) *testRun {
	t.Helper()
	tok, err := tokenizer.New(tokenizer.Default)
	if err != nil {
		t.Fatal(err)
	}
	return &testRun{t: t, db: filepath.Join(t.TempDir(), "digest.db"), tok: tok}
}

// options are the command's defaults for repos, on the offline model
// under the name model ("" for offline itself).
func (h *testRun) options(model string, repos ...string) Options {
	spec := provider.Spec{Provider: provider.Offline, Model: provider.Offline}
	if model != "" {
		var err error
		if spec, err = provider.ParseSpec(model); err != nil {
			h.t.Fatal(err)
		}
	}
	var p provider.Provider = offline.New(h.tok.Count)
	counted := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		h.calls.Add(1)
		h.mu.Lock()
		h.sent = append(h.sent, req.Messages[0].Content)
		h.mu.Unlock()
		if h.wrap != nil {
			return h.wrap(p).Complete(ctx, req)
		}
		return p.Complete(ctx, req)
	})
	return Options{Repos: repos, MaxDiffTokens: 4000, Concurrency: 4, BatchSize: 8, BatchWindow: 2 * time.Second,
		Target: target.Target{Spec: spec, Provider: counted}, Tokenizer: h.tok, Log: slog.New(slog.NewTextHandler(&h.logs, nil))}
}

// run runs opts on a store opened on the test's database for the run, as
// each command opens it, and returns the result; calls and sent are reset
// first.
func (h *testRun) run(ctx context.Context, opts Options) (*Output, error) {
	h.t.Helper()
	h.calls.Store(0)
	h.mu.Lock()
	h.sent = nil
	h.mu.Unlock()
	if !opts.DryRun {
		st, err := sqlite.Open(context.Background(), h.db)
		if err != nil {
			h.t.Fatal(err)
		}
		defer st.Close()
		opts.Store = st
	}
	return Run(ctx, opts)
}

// mustRun is run for a run that must succeed.
func (h *testRun) mustRun(opts Options) *Output {
	h.t.Helper()
	res, err := h.run(context.Background(), opts)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

// store opens the test's database, for a test to read what a run stored.
func (h *testRun) store() store.Store {
	h.t.Helper()
	st, err := sqlite.Open(context.Background(), h.db)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	return st
}

// commits are the entries' hashes, in the report's order.
func commits(entries []changelog.Entry) []string {
	var hashes []string
	for _, e := range entries {
		hashes = append(hashes, e.Commit)
	}
	return hashes
}

// cachedCount counts the entries read from the store.
func cachedCount(entries []changelog.Entry) int {
	n := 0
	for _, e := range entries {
		if e.Cached {
			n++
		}
	}
	return n
}
