package summarize

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// sha256Fixture builds a repository with `git init --object-format=sha256`
// in a directory named hello: a branch merged, a tag, a pack and a
// commit-graph from `git gc`, then a commit left loose.
func sha256Fixture(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "hello")
	env := append(gittest.GitEnv(t), "GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com")
	clock := 1_772_000_000
	git := func(args ...string) string {
		t.Helper()
		clock += 3600
		date := "GIT_AUTHOR_DATE=@" + strconv.Itoa(clock) + " +0000"
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(slices.Clone(env), date, "GIT_COMMITTER"+strings.TrimPrefix(date, "GIT_AUTHOR"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(msg, path, content string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", msg)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "--object-format=sha256", "-b", "main")
	commit("Add the greeting", "main.go", "package main\n\nfunc main() { println(\"hello\") }\n")
	commit("docs: say what hello does", "README.md", "# hello\n\nSays hello.\n")
	git("tag", "-a", "v0.1.0", "-m", "first release")
	git("checkout", "-q", "-b", "feature")
	commit("feat: greet by name", "greet.go", "package main\n\nfunc greet(name string) string { return \"hello \" + name }\n")
	git("checkout", "-q", "main")
	commit("fix: end the greeting with a newline", "main.go", "package main\n\nfunc main() { println(\"hello\\n\") }\n")
	git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
	git("gc", "-q")
	git("commit-graph", "write", "--reachable")
	commit("docs: mention greet", "README.md", "# hello\n\nSays hello, by name too.\n")
	return dir
}

// TestSHA256RepositoryIsSummarized: a SHA-256 repository is summarized end
// to end, as a SHA-1 one is: a dry run, a real run whose entries are the
// commits git rev-list selects, and a rerun from the store without a call;
// rename detection, which go-git cannot do there, is refused up front.
func TestSHA256RepositoryIsSummarized(t *testing.T) {
	dir := sha256Fixture(t)
	cmd := exec.Command("git", "-C", dir, "rev-list", "--no-merges", "HEAD")
	cmd.Env = gittest.GitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	if len(want) != 5 || len(want[0]) != 64 {
		t.Fatalf("the fixture's commits: %v", want)
	}
	h := newTestRun(t)
	opts := h.options("", dir)
	opts.DryRun = true
	if dry := h.mustRun(opts); h.calls.Load() != 0 || dry.Estimate.Commits != 5 {
		t.Fatalf("dry run: %d calls, %+v; want 5 commits counted, none sent", h.calls.Load(), dry.Estimate)
	}
	first := h.mustRun(h.options("", dir))
	if h.calls.Load() == 0 {
		t.Fatal("first run: no calls")
	}
	for _, e := range first.Changelog.Entries {
		if strings.Contains(e.Summary, "=== end") || e.Summary == "" {
			t.Errorf("commit %s: summary %q, want one of its own, not the prompt's framing", e.Commit, e.Summary)
		}
	}
	got := commits(first.Changelog.Entries)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("entries for %v, want %v", got, want)
	}
	second := h.mustRun(h.options("", dir))
	if n := h.calls.Load(); n != 0 || cachedCount(second.Changelog.Entries) != 5 {
		t.Fatalf("rerun: %d calls, %d cached; want 0 and 5", n, cachedCount(second.Changelog.Entries))
	}
	if got, want := withoutCached(t, second.Changelog.Entries), withoutCached(t, first.Changelog.Entries); got != want {
		t.Errorf("the rerun differs from the first run beyond Cached\n got %s\nwant %s", got, want)
	}
	opts = h.options("", dir)
	opts.Renames = true
	if _, err := h.run(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "SHA-256") || strings.Contains(err.Error(), "\n") || h.calls.Load() != 0 {
		t.Errorf("--renames on a SHA-256 repository: %v, %d calls; want a one-line error naming SHA-256 before any call", err, h.calls.Load())
	}
}
