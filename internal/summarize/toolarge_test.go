package summarize

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// A batch that the model's token limit, learned from the first answer's
// headers, could never admit is not failed: each of its commits is sent
// alone, and fits.
func TestBatchTooLargeForALearnedLimitIsSentCommitByCommit(t *testing.T) {
	ctx := context.Background()
	r := gittest.New(t)
	for i := range 6 {
		var body strings.Builder
		for line := range 120 {
			fmt.Fprintf(&body, "entry %d of file %d: a line with a few distinct words\n", line, i)
		}
		r.Write(fmt.Sprintf("f%d.txt", i), body.String()).Commit(fmt.Sprintf("Add file %d", i))
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
	off := offline.New(tok.Count)
	// The first answer says the model allows 4,000 tokens a window: a batch
	// of three of these commits needs more, one alone far less.
	const learnedTPM = 4000
	var mu sync.Mutex
	var perRequest []int
	model := provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
		mu.Lock()
		perRequest = append(perRequest, strings.Count(req.Messages[0].Content, "=== commit "))
		mu.Unlock()
		resp, err := off.Complete(ctx, req)
		l := provider.NoLimits()
		l.TokensLimit = learnedTPM
		resp.Limits = &l
		return resp, err
	})
	opts := Options{Repos: []string{r.Dir}, RepoID: "r", Concurrency: 1, BatchSize: 3, BatchWindow: time.Second, BatchTokens: 32_000,
		MaxDiffTokens: 4000, Tokenizer: tok, Store: st, Target: target.Target{Spec: provider.Spec{Provider: "openai", Model: "custom"},
			Provider: model, Limits: engine.Limits{Window: 50 * time.Millisecond}}}
	res, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failures) > 0 || res.Changelog.Stats.Summarized != 6 {
		t.Fatalf("%d summarized, failures %v", res.Changelog.Stats.Summarized, res.Failures)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(perRequest) != "[3 1 1 1]" {
		t.Errorf("commits per request %v, want a batch of 3, then the next batch's 3 alone", perRequest)
	}
}
