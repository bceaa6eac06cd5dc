package summarize

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/provider"
)

// TestProviderFailureKeepsTheRest: a commit the provider refuses is a
// failure of its own; the others are summarized and reported, and the next
// run retries only the failed one.
func TestProviderFailureKeepsTheRest(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if strings.Contains(req.Messages[0].Content, f.Logo) {
				return provider.Response{}, &provider.Error{Provider: "test", Kind: provider.Permanent, StatusCode: 400, Message: "upstream said no"}
			}
			return next.Complete(ctx, req)
		})
	}
	opts := h.options("", f.Dir)
	opts.BatchSize = 1
	res := h.mustRun(opts)
	if got := commits(res.Changelog.Entries); len(got) != 7 || slices.Contains(got, f.Logo) {
		t.Errorf("the report holds %d commits, want the 7 summarized", len(got))
	}
	if len(res.Failures) != 1 || res.Failures[0].Commit != f.Logo || !strings.Contains(res.Failures[0].Err.Error(), "HTTP 400: upstream said no") {
		t.Errorf("failures %+v, want the logo commit's, with the provider's error", res.Failures)
	}
	if st := res.Changelog.Stats; st.Failed != 1 || st.Summarized != 7 {
		t.Errorf("stats %+v, want 7 summarized, 1 failed", st)
	}
	h.wrap = nil
	if res := h.mustRun(opts); h.calls.Load() != 1 || len(res.Failures) != 0 {
		t.Errorf("rerun: %d calls, failures %v; want only the failed commit retried", h.calls.Load(), res.Failures)
	}
}

// TestMissingObjectWarnsAndSummarizesTheRest: a blob missing from the
// repository (a partial clone, a damaged copy) leaves its file out of the
// commit's diff, listed as a missing object, with a warning naming it; the
// commit and the others are summarized.
func TestMissingObjectWarnsAndSummarizesTheRest(t *testing.T) {
	f := gittest.NewFixture(t)
	out, err := exec.Command("git", "-C", f.Dir, "rev-parse", f.BigTable+":table.go").Output()
	if err != nil {
		t.Skipf("git is needed to find the blob: %v", err)
	}
	blob := strings.TrimSpace(string(out))
	if err := os.Remove(filepath.Join(f.Dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	h := newTestRun(t)
	res := h.mustRun(h.options("", f.Dir))
	if len(res.Changelog.Entries) != 8 {
		t.Fatalf("%d entries, want all 8 commits", len(res.Changelog.Entries))
	}
	for _, e := range res.Changelog.Entries {
		if e.Commit == f.BigTable && !slices.Contains(e.SkippedFiles, changelog.SkippedFile{Path: "table.go", Reason: history.SkipMissing}) {
			t.Errorf("the table commit skips %v, want table.go as a missing object", e.SkippedFiles)
		}
	}
	if logs := h.logs.String(); !strings.Contains(logs, "could not read part of a commit") || !strings.Contains(logs, blob) {
		t.Errorf("no warning naming the missing object:\n%s", logs)
	}
}

// TestDamagedCommitKeepsWhatWasWalked: a commit object that cannot be read
// stops the walk, with an error naming it, but the commits walked before it
// are summarized and stored. (The repository is named by RepoID: its root,
// which names it otherwise, lies beyond the damage.)
func TestDamagedCommitKeepsWhatWasWalked(t *testing.T) {
	f := gittest.NewFixture(t)
	out, err := exec.Command("git", "-C", f.Dir, "rev-list", "HEAD").Output()
	if err != nil {
		t.Skipf("git is needed to list the commits: %v", err)
	}
	damaged := strings.Fields(string(out))[3] // read as the parent of the third, before the third is handed on
	if err := os.WriteFile(filepath.Join(f.Dir, ".git", "objects", damaged[:2], damaged[2:]), []byte("not zlib"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newTestRun(t)
	opts := h.options("", f.Dir)
	opts.BatchSize, opts.RepoID = 1, "damaged"
	res, err := h.run(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), damaged) || !strings.Contains(err.Error(), "Try: git fsck") {
		t.Fatalf("error %v, want one naming %s", err, damaged[:8])
	}
	if n := h.calls.Load(); n != 2 || res == nil || res.Changelog.Stats.Summarized != 2 {
		t.Errorf("%d requests, want 2: one for each commit walked before the damaged one, stored", n)
	}
	// They were stored: a rerun, stopped at the same commit, pays for none.
	if res, err := h.run(context.Background(), opts); err == nil || h.calls.Load() != 0 || res.Changelog.Stats.Cached != 2 {
		t.Errorf("rerun: %v, %d calls, %d cached; want the same error, 0 calls, 2 cached", err, h.calls.Load(), res.Changelog.Stats.Cached)
	}
}

// TestOneUnusableRepositoryDoesNotStopTheOthers: a run over several
// repositories sets aside, before anything is paid for, one that lacks the
// revision, a path that is not a repository and a file, each with why, and
// summarizes the others. With one repository, its error is the run's.
func TestOneUnusableRepositoryDoesNotStopTheOthers(t *testing.T) {
	f := gittest.NewFixture(t)
	other := gittest.New(t)
	other.Write("a.txt", "a\n").Commit("Unrelated history")
	notRepo := t.TempDir()
	file := filepath.Join(f.Dir, "README.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newTestRun(t)
	opts := h.options("", other.Dir, f.Dir, notRepo, file)
	opts.Walk.Revs = []string{f.Root}
	res := h.mustRun(opts)
	if got := commits(res.Changelog.Entries); !slices.Equal(got, []string{f.Root}) {
		t.Errorf("entries %v, want the usable repository's one commit", got)
	}
	why := map[string]string{other.Dir: "unknown revision", notRepo: "not a git repository", file: "is a file, not a repository"}
	if len(res.Unusable) != len(why) {
		t.Errorf("%d set aside, want %d: %+v", len(res.Unusable), len(why), res.Unusable)
	}
	for _, u := range res.Unusable {
		if want, ok := why[u.Path]; !ok || !strings.Contains(u.Err.Error(), want) {
			t.Errorf("%s set aside with %v, want %q", u.Path, u.Err, want)
		}
	}
	if _, err := h.run(context.Background(), h.options("", file)); err == nil || !strings.Contains(err.Error(), "is a file, not a repository") {
		t.Errorf("one repository, a file: %v", err)
	}
}

// TestShallowCloneAtAMergeSaysWhy: actions/checkout's default fetch-depth:
// 1 on a pull request checks out a merge whose parents the clone lacks.
// Nothing is summarized or sent, in a run or a dry run, and a warning names
// the merge at the edge and what to fetch.
func TestShallowCloneAtAMergeSaysWhy(t *testing.T) {
	src := gittest.New(t)
	src.Write("a.txt", "a\n").Commit("Start")
	feature := src.Branch("feature").Write("b.txt", "b\n").Commit("feat: add b")
	src.Checkout("main").Write("c.txt", "c\n").Commit("fix: add c")
	merge := src.Merge("Merge pull request #7 from feature", feature)
	dir := src.ShallowClone(1)
	h := newTestRun(t)
	for _, dry := range []bool{false, true} {
		h.logs.Reset()
		opts := h.options("", dir)
		opts.RepoID, opts.DryRun = "acme/pr", dry
		res := h.mustRun(opts)
		if len(res.Changelog.Entries) != 0 || h.calls.Load() != 0 {
			t.Errorf("dry run %v: %d entries, %d calls; want nothing summarized", dry, len(res.Changelog.Entries), h.calls.Load())
		}
		if logs := h.logs.String(); !strings.Contains(logs, "commit="+merge) || !strings.Contains(logs, "edge of a shallow clone") || !strings.Contains(logs, "Try: git fetch --deepen") {
			t.Errorf("dry run %v: no warning naming the merge at the edge:\n%s", dry, logs)
		}
	}
}
