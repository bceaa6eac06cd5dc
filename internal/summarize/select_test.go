package summarize

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/digest-cli/digest/internal/gittest"
)

// TestRevOnARepositoryWithUnbornHEAD: with HEAD on a branch with no commits
// yet (after `git checkout --orphan`), --rev main summarizes main; without
// --rev the repository is empty, and Empty names the orphan branch and a
// branch that holds commits, for the command to suggest.
func TestRevOnARepositoryWithUnbornHEAD(t *testing.T) {
	f := gittest.NewFixture(t)
	if err := f.Git.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/orphan")); err != nil {
		t.Fatal(err)
	}
	h := newTestRun(t)
	opts := h.options("", f.Dir)
	opts.Walk.Revs = []string{"main"}
	if res := h.mustRun(opts); len(res.Changelog.Entries) != 8 || len(res.Empty) != 0 {
		t.Errorf("--rev main with an unborn HEAD: %d entries, empty %v; want main's 8", len(res.Changelog.Entries), res.Empty)
	}
	res := h.mustRun(h.options("", f.Dir))
	if len(res.Changelog.Entries) != 0 || len(res.Empty) != 1 || res.Empty[0].Branch != "orphan" || res.Empty[0].Other != "main" {
		t.Errorf("without --rev: %d entries, empty %+v; want none, and orphan empty with main holding commits", len(res.Changelog.Entries), res.Empty)
	}
}

// TestEmptyRepositoryIsNothingToDo: a repository with no commit at all is
// empty, with no other branch to name, and the run succeeds.
func TestEmptyRepositoryIsNothingToDo(t *testing.T) {
	r := gittest.New(t)
	h := newTestRun(t)
	res := h.mustRun(h.options("", r.Dir))
	if len(res.Empty) != 1 || res.Empty[0].Other != "" || len(res.Changelog.Entries) != 0 || h.calls.Load() != 0 {
		t.Errorf("empty %+v, %d entries, %d calls; want the repository empty, nothing sent", res.Empty, len(res.Changelog.Entries), h.calls.Load())
	}
}

// TestPathspecsAreTakenFromTheDirectoryDigestRunsIn: pathspecs, git's magic
// included (exclude, icase, glob, literal, top), select the commits git
// selects, compared with git rev-list; given from a subdirectory they are
// relative to it, as git takes them ("." is that directory, ".." its
// parent, ":/" the root); from outside the work tree, to the root.
func TestPathspecsAreTakenFromTheDirectoryDigestRunsIn(t *testing.T) {
	r := gittest.New(t)
	r.Write("top.txt", "1\n").Commit("Top")
	r.Write("site/content/a.md", "a\n").Commit("Content a")
	r.Write("site/layout/b.html", "b\n").Commit("Layout b")
	r.Write("docs/c.md", "c\n").Commit("Docs c")
	r.Write("site/content/a.md", "a2\n").Write("top.txt", "2\n").Commit("Content and top")
	sub := filepath.Join(r.Dir, "site")
	gitLog := func(dir string, paths ...string) []string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"rev-list", "--no-merges", "--full-history", "HEAD", "--"}, paths...)...)
		cmd.Dir, cmd.Env = dir, gittest.GitEnv(t)
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("git rev-list: %v", err)
		}
		return strings.Fields(string(out))
	}
	h := newTestRun(t)
	digestLog := func(workDir string, paths ...string) []string {
		t.Helper()
		opts := h.options("", r.Dir)
		opts.PathArgs, opts.WorkDir = paths, workDir
		return commits(h.mustRun(opts).Changelog.Entries)
	}
	// From the root: git's magic, alone and combined.
	for _, paths := range [][]string{{":!docs"}, {":^*.md"}, {":(exclude)site"}, {"site", ":!site/layout"}, {":(icase)TOP.TXT"},
		{":(icase,exclude)SITE"}, {":(glob)site/**/*.md"}, {":(glob)*.md"}, {":(glob)**/*.html"}, {":(literal)site/content/a.md"},
		{":(literal)*.md"}, {".", ":!top.txt"}, {":/!docs"}, {"*.md", ":(exclude)docs"}} {
		if got, want := digestLog(r.Dir, paths...), gitLog(r.Dir, paths...); !slices.Equal(got, want) {
			t.Errorf("-- %v: digest %d commits %v, git %d %v", paths, len(got), got, len(want), want)
		}
	}
	for _, paths := range [][]string{{"."}, {"content"}, {"layout", "content"}, {"../docs"}, {":/top.txt"}, {":(top)docs"}, {"*.md"}, {"content/a.md"},
		{":!content"}, {".", ":!layout"}} {
		if got, want := digestLog(sub, paths...), gitLog(sub, paths...); !slices.Equal(got, want) {
			t.Errorf("in site/, -- %v: digest %d commits %v, git %d %v", paths, len(got), got, len(want), want)
		}
	}
	// From outside the work tree they are the root's, like git -C REPO.
	outside := t.TempDir()
	if got, want := digestLog(outside, "site/content"), gitLog(r.Dir, "site/content"); !slices.Equal(got, want) {
		t.Errorf("from outside, -- site/content: digest %v, git %v", got, want)
	}
	opts := h.options("", r.Dir)
	opts.PathArgs, opts.WorkDir = []string{"../elsewhere"}, outside
	if _, err := h.run(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "is outside the repository") {
		t.Errorf("-- ../elsewhere from outside: %v, want an error saying it is outside the repository", err)
	}
}

// TestRevRepeats: Walk.Revs are rev-list's arguments, one per --rev, and an
// ambiguous name is used as git uses it, with a warning.
func TestRevRepeats(t *testing.T) {
	f := gittest.NewFixture(t)
	h := newTestRun(t)
	opts := h.options("", f.Dir)
	opts.Walk.Revs = []string{"feature", "^" + f.Deps}
	if got, want := commits(h.mustRun(opts).Changelog.Entries), []string{f.Rename, f.Logo}; !slices.Equal(got, want) {
		t.Errorf("--rev feature --rev ^DEPS gave %v, want %v", got, want)
	}
	f.Tag("feature") // a tag named like the branch: git uses the tag, and warns
	opts = h.options("", f.Dir)
	opts.Walk.Revs, opts.DryRun = []string{"feature"}, true
	h.mustRun(opts)
	if !strings.Contains(h.logs.String(), `refname 'feature' is ambiguous`) {
		t.Errorf("no warning that feature is ambiguous in the log:\n%s", h.logs.String())
	}
}
