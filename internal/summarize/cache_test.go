package summarize

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
)

// withoutCached is the entries as JSON with Cached cleared: what a rerun
// must report the same as the run that paid for them.
func withoutCached(t *testing.T, entries []changelog.Entry) string {
	t.Helper()
	es := slices.Clone(entries)
	for i := range es {
		es[i].Cached = false
	}
	b, err := json.Marshal(es)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRerunMakesNoProviderCalls: a second run over the same history sends
// nothing, and reports every entry as the first did, read from the store.
func TestRerunMakesNoProviderCalls(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	first := h.mustRun(h.options("", f.Dir))
	if n := h.calls.Load(); n != 1 || first.Changelog.Stats.Summarized != 8 { // the 8 commits fit one batch
		t.Fatalf("first run: %d calls, %d summarized; want 1 call for 8", n, first.Changelog.Stats.Summarized)
	}
	second := h.mustRun(h.options("", f.Dir))
	if n := h.calls.Load(); n != 0 || second.Engine.Requests != 0 {
		t.Fatalf("second run made %d provider calls, want 0", n)
	}
	if st := second.Changelog.Stats; st.Commits != 8 || st.Cached != 8 || st.Summarized != 0 || cachedCount(second.Changelog.Entries) != 8 {
		t.Errorf("second run: %+v, %d entries cached; want all 8 cached", st, cachedCount(second.Changelog.Entries))
	}
	if got, want := withoutCached(t, second.Changelog.Entries), withoutCached(t, first.Changelog.Entries); got != want {
		t.Errorf("second run differs from the first beyond Cached\n got %s\nwant %s", got, want)
	}
}

// TestCloneSharesTheCache: a clone of a summarized repository, elsewhere on
// disk, is served from the store; an unrelated repository is not, and gets
// an id of its own.
func TestCloneSharesTheCache(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	h.mustRun(h.options("", f.Dir))
	clone := h.mustRun(h.options("", f.Clone().Dir))
	if n := h.calls.Load(); n != 0 || cachedCount(clone.Changelog.Entries) != 8 {
		t.Fatalf("clone: %d calls, %d cached; want 0 calls, 8 cached", n, cachedCount(clone.Changelog.Entries))
	}
	other := gittest.New(t)
	other.Write("a.txt", "a\n").Commit("Another project")
	res := h.mustRun(h.options("", other.Dir))
	if n := h.calls.Load(); n != 1 {
		t.Fatalf("another repository: %d calls, want 1", n)
	}
	if clone.Changelog.Entries[0].RepoID == res.Changelog.Entries[0].RepoID {
		t.Error("two unrelated repositories share a repo_id")
	}
}

// TestCloneGetsTheSameIDInAnotherDatabase: a repository's id comes from its
// history, not from what a database holds: a clone summarized into a fresh
// database gets the original's.
func TestCloneGetsTheSameIDInAnotherDatabase(t *testing.T) {
	f := gittest.NewFixture(t)
	a, b := newTestRun(t), newTestRun(t)
	ra := a.mustRun(a.options("", f.Dir))
	rb := b.mustRun(b.options("", f.Clone().Dir))
	if ida, idb := ra.Changelog.Entries[0].RepoID, rb.Changelog.Entries[0].RepoID; ida != idb || ida == "" {
		t.Errorf("a clone summarized into another database has id %q, the original %q", idb, ida)
	}
}

// TestOneRunOverTwoClonesPaysOnce: one run over a repository named twice
// and a clone of it walks the repository once and pays for each commit
// once: the clone, run after, finds the original's summaries stored.
func TestOneRunOverTwoClonesPaysOnce(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	opts := h.options("", f.Dir, f.Dir, f.Clone().Dir)
	opts.BatchSize = 1
	res := h.mustRun(opts)
	if n := h.calls.Load(); n != 8 {
		t.Fatalf("%d calls, want 8 (each commit once)", n)
	}
	if n := len(res.Changelog.Entries); n != 16 {
		t.Errorf("%d entries, want 8 for the repository (named twice) and 8 for its clone", n)
	}
	for _, c := range []string{f.Root, f.Vendor} {
		if n := strings.Count(strings.Join(commits(res.Changelog.Entries), " "), c); n != 2 {
			t.Errorf("commit %s appears %d times, want once per clone", c[:7], n)
		}
	}
	if st := res.Changelog.Stats; st.Commits != 16 || st.Cached != 8 || st.Summarized != 8 {
		t.Errorf("stats %+v, want 16 commits seen, 8 cached, 8 summarized", st)
	}
}

// TestRepoIDOverrideDoesNotLeakIntoDerivedIDs: two unrelated repositories
// once stored under one --repo-id still get ids of their own, from their
// roots, when run without it.
func TestRepoIDOverrideDoesNotLeakIntoDerivedIDs(t *testing.T) {
	h := newTestRun(t)
	x := gittest.New(t)
	x.Write("x.txt", "x\n").Commit("X")
	y := gittest.New(t)
	y.Write("y.txt", "y\n").Commit("Y")
	for _, dir := range []string{x.Dir, y.Dir} {
		opts := h.options("", dir)
		opts.RepoID = "shared"
		h.mustRun(opts)
	}
	rx := h.mustRun(h.options("", x.Dir))
	ry := h.mustRun(h.options("", y.Dir))
	if idx, idy := rx.Changelog.Entries[0].RepoID, ry.Changelog.Entries[0].RepoID; idx == idy || idx == "shared" {
		t.Errorf("unrelated repositories got ids %s and %s", idx, idy)
	}
}

// TestModelAndPathsKeySummariesApart: a summary is the model's and the
// pathspec's: another model, or the same commits under a pathspec, are
// paid for anew, and each is served on a rerun with the same ones.
func TestModelAndPathsKeySummariesApart(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	h.mustRun(h.options("", f.Dir))
	for _, model := range []string{"test:model-a", "test:model-b"} {
		opts := h.options(model, f.Dir)
		opts.BatchSize = 1
		res := h.mustRun(opts)
		if n := h.calls.Load(); n != 8 || cachedCount(res.Changelog.Entries) != 0 {
			t.Fatalf("%s: %d calls, %d served from the store; a summary by another model was served", model, n, cachedCount(res.Changelog.Entries))
		}
		if res.Changelog.Model != model {
			t.Errorf("the changelog is labelled %q, want %s", res.Changelog.Model, model)
		}
	}
	h.mustRun(h.options("test:model-a", f.Dir))
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("rerun with model-a made %d calls", n)
	}
	// The same commits under a path filter are other summaries: other text was sent.
	opts := h.options("", f.Dir)
	opts.BatchSize = 1
	opts.PathArgs, opts.WorkDir = []string{"main.go"}, f.Dir
	h.mustRun(opts)
	if n := h.calls.Load(); n != 3 {
		t.Fatalf("pathspec run: %d calls, want 3 (the commits touching main.go)", n)
	}
	h.mustRun(opts)
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("pathspec rerun made %d calls", n)
	}
}

// TestBigDiffIsCutToTheBudget: a diff over --max-diff-tokens is cut to
// close under it, with a note naming what was cut, and its entry is marked
// truncated.
func TestBigDiffIsCutToTheBudget(t *testing.T) {
	f := gittest.NewFixture(t)
	for _, limit := range []int{4000, 300} {
		h := newTestRun(t)
		opts := h.options("", f.Dir)
		opts.Walk.Revs, opts.Walk.MaxCommits = []string{f.BigTable}, 1
		opts.MaxDiffTokens = limit
		res := h.mustRun(opts)
		if len(h.sent) != 1 || len(res.Changelog.Entries) != 1 {
			t.Fatalf("limit %d: %d requests, %d entries; want 1", limit, len(h.sent), len(res.Changelog.Entries))
		}
		if !res.Changelog.Entries[0].Truncated {
			t.Errorf("limit %d: the entry is not marked truncated", limit)
		}
		_, diff, _ := strings.Cut(h.sent[0], "--- diff ---\n")
		diff, _, _ = strings.Cut(diff, "=== end ")
		if n := h.tok.Count(diff); n > limit || n < limit*9/10 {
			t.Errorf("limit %d: the diff sent counts %d tokens, want at most %d and close to it", limit, n, limit)
		}
		if !strings.Contains(diff, "[digest: diff cut to ") || !strings.Contains(diff, "cut: table.go (partly)]") {
			t.Errorf("limit %d: no note on what was cut:\n%s", limit, diff[max(0, len(diff)-300):])
		}
	}
}

// TestBloblessCloneDoesNotPoisonTheCache: a partial clone (git clone
// --filter=blob:none, as CI checkouts often are) lacks the blobs of past
// commits. Its summaries say so, with one warning naming the promisor
// remote and none per object; they serve the partial clone again, but a
// complete clone sharing the cache summarizes those commits anew and its
// summaries replace them, for the partial clone too.
func TestBloblessCloneDoesNotPoisonTheCache(t *testing.T) {
	f := gittest.NewFixture(t)
	env := gittest.GitEnv(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	git("-C", f.Dir, "config", "uploadpack.allowFilter", "true")
	partial := filepath.Join(t.TempDir(), "partial.git")
	git("clone", "-q", "--bare", "--filter=blob:none", "file://"+f.Dir, partial)
	missing := func(entries []changelog.Entry) int {
		n := 0
		for _, e := range entries {
			for _, s := range e.SkippedFiles {
				if s.Reason == history.SkipMissing {
					n++
				}
			}
		}
		return n
	}
	h := newTestRun(t)
	opts := h.options("", partial)
	opts.BatchSize = 1
	res := h.mustRun(opts)
	if missing(res.Changelog.Entries) == 0 {
		t.Fatal("no file listed as a missing object in a blobless clone")
	}
	if n := strings.Count(h.logs.String(), `partial clone (promisor remote \"origin\")`); n != 1 {
		t.Errorf("%d warnings naming the promisor remote, want 1:\n%s", n, h.logs.String())
	}
	if strings.Contains(h.logs.String(), "could not read part of a commit") {
		t.Errorf("a warning per missing object in a partial clone:\n%s", h.logs.String())
	}
	partialCalls := h.calls.Load()
	if h.mustRun(opts); h.calls.Load() != 0 {
		t.Errorf("partial clone again: %d calls, want its own summaries served", h.calls.Load())
	}
	complete := h.options("", f.Dir)
	complete.BatchSize = 1
	if res := h.mustRun(complete); missing(res.Changelog.Entries) != 0 {
		t.Fatal("complete clone: a missing object served from the cache")
	}
	if n := h.calls.Load(); n == 0 || n > partialCalls {
		t.Errorf("complete clone made %d calls, want one per commit summarized partially (at most %d)", n, partialCalls)
	}
	if res := h.mustRun(opts); h.calls.Load() != 0 || missing(res.Changelog.Entries) != 0 {
		t.Errorf("partial clone after the complete one: %d calls, %d missing objects; want the complete summaries", h.calls.Load(), missing(res.Changelog.Entries))
	}
}
