package history_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/history"
)

// newSHA256Repo builds "work", made by `git init --object-format=sha256`:
// a branch merged, a lightweight and an annotated tag, a rename and a
// deletion, packed by `git gc` with a reverse index and a
// commit-graph, then two commits left loose and outside the graph.
func newSHA256Repo(t *testing.T) *gitRepo {
	g := newGitRoot(t)
	g.run("work", "init", "-q", "--object-format=sha256", "-b", "main")
	g.commit("work", "Initial commit", "README.md", "# work\n", "docs/guide.md", "guide\n", "src/main.go", "package main\n\nfunc main() {}\n")
	g.commit("work", "util: add strings helpers", "src/util/strings.go", "package util\n\nfunc A() {}\n")
	g.run("work", "tag", "v1")
	g.commit("work", "docs: explain the guide", "docs/guide.md", "guide\nmore\n", "docs/old.txt", "old\n")
	g.run("work", "tag", "-a", "v2", "-m", "release 2")
	g.run("work", "checkout", "-q", "-b", "feature")
	g.commit("work", "util: test strings", "src/util/strings_test.go", "package util\n")
	g.run("work", "mv", "src/util/strings.go", "src/util/text.go")
	g.commit("work", "util: rename strings to text")
	g.run("work", "checkout", "-q", "main")
	g.commit("work", "readme: mention the feature", "README.md", "# work\nfeature\n")
	g.run("work", "merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
	g.run("work", "rm", "-q", "docs/old.txt")
	g.commit("work", "build: drop the old notes, run main", "src/main.go", "package main\n\nfunc main() { println() }\n")
	g.run("work", "-c", "pack.writeReverseIndex=true", "gc", "-q")
	g.run("work", "commit-graph", "write", "--reachable")
	g.commit("work", "docs: api reference", "docs/api/ref.md", "ref\n")
	g.commit("work", "src: grow main", "src/main.go", "package main\n\nfunc main() { println(1) }\n")
	return g
}

// TestSHA256RepositoryWalksAsGitRevList: a SHA-256 repository opens and
// walks as `git rev-list --no-merges` does, through refs (loose and
// packed), tags, reflogs, abbreviated hashes, the pack and its
// commit-graph, and loose objects after them.
func TestSHA256RepositoryWalksAsGitRevList(t *testing.T) {
	g := newSHA256Repo(t)
	work := g.dir("work")
	if _, err := os.Stat(filepath.Join(work, ".git", "objects", "info", "commit-graph")); err != nil {
		t.Fatalf("the fixture has no commit-graph: %v", err)
	}
	r := open(t, work)
	defer r.Close()
	if r.HashSize() != 32 {
		t.Fatalf("HashSize = %d, want 32", r.HashSize())
	}
	short := g.run("work", "rev-parse", "--short=10", "feature~1")
	full := g.run("work", "rev-parse", "v2^{}")
	for _, revs := range [][]string{
		nil, {"main"}, {"feature"}, {"v1..main"}, {"v2"}, {"main~2"}, {"main~3^2"}, {short}, {full}, {full[:50] + ".." + "main"},
		{"feature...main"}, {"HEAD@{1}"}, {"^v1", "feature"}, {":/readme"},
	} {
		want, err := g.revList(work, append(slices.Clone(revs), "--")...)
		if len(revs) == 0 {
			want, err = g.revList(work, "HEAD")
		}
		if err != nil {
			t.Fatalf("git rev-list %v: %v", revs, err)
		}
		got, err := digestWalk(r, history.WalkOptions{Revs: revs})
		if err != nil {
			t.Fatalf("walk %v: %v", revs, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("walk %v:\n got %v\nwant %v", revs, got, want)
		}
	}
	want, _ := g.revList(work, "--all")
	if got, err := digestWalk(r, history.WalkOptions{All: true}); err != nil || !slices.Equal(got, want) {
		t.Errorf("walk --all: %v\n got %v\nwant %v", err, got, want)
	}
	head, err := r.Head()
	if err != nil || head != g.run("work", "rev-parse", "HEAD") || len(head) != 64 {
		t.Errorf("Head = %q, %v; want git's 64-digit HEAD", head, err)
	}
	root, err := r.RootCommit(context.Background(), head, nil)
	if wantRoot := g.run("work", "rev-list", "--max-parents=0", "HEAD"); err != nil || root != wantRoot {
		t.Errorf("RootCommit = %q, %v; want %q", root, err, wantRoot)
	}
	// Versions peels the annotated tag and reads refs/tags from packed-refs.
	versions, err := r.Versions(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	if v := versions[g.run("work", "rev-parse", "v1")]; v.Tag != "v1" {
		t.Errorf("the v1 commit's version = %+v, want v1", v)
	}
	if v := versions[g.run("work", "rev-parse", "v2^{}")]; v.Tag != "v2" {
		t.Errorf("the v2 commit's version = %+v, want v2", v)
	}
}

// TestSHA256DiffsMatchGitShow: each commit's patch in a SHA-256 repository
// is git's, byte for byte but for the index lines digest leaves out.
func TestSHA256DiffsMatchGitShow(t *testing.T) {
	g := newSHA256Repo(t)
	work := g.dir("work")
	r := open(t, work)
	defer r.Close()
	commits, err := g.revList(work, "--all")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range commits {
		want := withoutIndexLines(gitShow(t, work, h))
		var ours strings.Builder
		for _, fd := range diffOf(t, r, h, history.DiffOptions{}).Files {
			ours.WriteString(fd.Text)
		}
		if got := ours.String(); got != want {
			t.Errorf("commit %s: patch differs from git show\n got %q\nwant %q", h[:10], got, want)
		}
	}
}

// TestSHA256BareAndLinkedWorkTree: a bare clone and a linked work tree of a
// SHA-256 repository open as git finds them.
func TestSHA256BareAndLinkedWorkTree(t *testing.T) {
	g := newSHA256Repo(t)
	g.run("", "clone", "-q", "--bare", "work", "bare.git")
	g.run("work", "worktree", "add", "-q", "../linked", "feature")
	for _, tt := range []struct{ dir, rev string }{{"bare.git", "main"}, {"linked", "HEAD"}, {"linked/src", "HEAD"}} {
		r, err := history.Open(g.dir(tt.dir))
		if err != nil {
			t.Fatalf("open %s: %v", tt.dir, err)
		}
		want, err := g.revList(g.dir(tt.dir), tt.rev)
		if err != nil {
			t.Fatal(err)
		}
		got, err := digestWalk(r, history.WalkOptions{Revs: []string{tt.rev}})
		r.Close()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s %s: %v\n got %v\nwant %v", tt.dir, tt.rev, err, got, want)
		}
	}
}

// TestSHA256RefusesRenames: go-git's rename detection reads SHA-1 trees
// only, so --renames is refused in a SHA-256 repository, by name.
func TestSHA256RefusesRenames(t *testing.T) {
	g := newSHA256Repo(t)
	r := open(t, g.dir("work"))
	defer r.Close()
	var c history.Commit
	if err := r.Walk(context.Background(), history.WalkOptions{Revs: []string{"feature"}, MaxCommits: 1}, func(x history.Commit) error {
		c = x
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Diff(context.Background(), c, history.DiffOptions{Renames: true})
	if err == nil || !strings.Contains(err.Error(), "--renames") || !strings.Contains(err.Error(), "Try:") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Diff with renames = %v, want a one-line refusal naming --renames", err)
	}
	if err := r.CanDetectRenames(); err == nil {
		t.Error("CanDetectRenames = nil in a SHA-256 repository")
	}
}
