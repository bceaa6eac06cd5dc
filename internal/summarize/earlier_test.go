package summarize

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/offline"
	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
	"github.com/digest-cli/digest/internal/target"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// TestSummaryOfAnEarlierPromptIsServed: commits summarized under an
// earlier prompt version (before digest asked for the kind of change)
// are served from those summaries, not paid for again; only the commit
// never summarized is sent.
func TestSummaryOfAnEarlierPromptIsServed(t *testing.T) {
	if len(prompt.Earlier) == 0 {
		t.Skip("no earlier prompt version")
	}
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
		Target: target.Target{Spec: spec, Provider: offline.New(tok.Count)}, Tokenizer: tok, Store: st}
	if err := st.SaveRepository(ctx, store.Repository{ID: "r", RootCommit: hashes[0], Path: r.Dir}); err != nil {
		t.Fatal(err)
	}
	for _, h := range hashes[:2] {
		err := st.SaveSummary(ctx, store.Commit{RepoID: "r", Hash: h, Subject: "old"}, store.Summary{
			SummaryKey: store.SummaryKey{RepoID: "r", Commit: h, Model: spec.String(), PromptVersion: prompt.Earlier[0], Scope: opts.Walk.Paths.String()},
			Text:       "summarized under " + prompt.Earlier[0]})
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Engine.Requests != 1 {
		t.Errorf("%d requests, want 1: only the commit never summarized", res.Engine.Requests)
	}
	served := 0
	for _, e := range res.Changelog.Entries {
		if e.Summary == "summarized under "+prompt.Earlier[0] && e.Cached {
			served++
		}
	}
	if served != 2 || len(res.Changelog.Entries) != 3 {
		t.Errorf("%d of %d entries served from the earlier prompt's summaries, want 2 of 3", served, len(res.Changelog.Entries))
	}
}
