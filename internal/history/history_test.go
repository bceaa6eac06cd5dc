package history_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/tokenizer"
)

func open(t *testing.T, dir string) *history.Repo {
	t.Helper()
	r, err := history.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func walk(t *testing.T, r *history.Repo, opts history.WalkOptions) []string {
	t.Helper()
	var got []string
	if err := r.Walk(context.Background(), opts, func(c history.Commit) error {
		got = append(got, c.Hash)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWalkLikeGitLog(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	noMerges := []string{f.Vendor, f.BigTable, f.Latin1, f.Rename, f.Logo, f.Deps, f.Greet, f.Root}
	tests := []struct {
		name string
		opts history.WalkOptions
		want []string
	}{
		{"default skips merges", history.WalkOptions{}, noMerges},
		{"include merges", history.WalkOptions{IncludeMerges: true},
			[]string{f.Vendor, f.BigTable, f.Merge, f.Latin1, f.Rename, f.Logo, f.Deps, f.Greet, f.Root}},
		{"max commits", history.WalkOptions{MaxCommits: 2}, []string{f.Vendor, f.BigTable}},
		{"range", history.WalkOptions{Revs: []string{f.Logo + "..HEAD"}}, []string{f.Vendor, f.BigTable, f.Latin1, f.Rename}},
		{"range to a branch", history.WalkOptions{Revs: []string{f.Deps + "..feature"}}, []string{f.Rename, f.Logo}},
		{"single revision", history.WalkOptions{Revs: []string{"feature"}}, []string{f.Rename, f.Logo, f.Deps, f.Greet, f.Root}},
		{"since", history.WalkOptions{Since: gittest.Epoch.Add(5 * time.Hour)}, []string{f.Vendor, f.BigTable, f.Latin1}},
		{"until", history.WalkOptions{Until: gittest.Epoch.Add(90 * time.Minute)}, []string{f.Greet, f.Root}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := walk(t, r, tt.opts); !slices.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestWalkPathspec(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"docs"}, []string{f.Rename}},
		{[]string{"README.md"}, []string{f.Rename, f.Root}},
		{[]string{"*.go"}, []string{f.Vendor, f.BigTable, f.Greet, f.Root}},
		{[]string{"vendor/", "go.sum"}, []string{f.Vendor, f.Deps}},
	} {
		p, err := history.ParsePathspec(tt.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := walk(t, r, history.WalkOptions{Paths: p}); !slices.Equal(got, tt.want) {
			t.Errorf("%v: got %v, want %v", tt.args, got, tt.want)
		}
	}
	if _, err := history.ParsePathspec([]string{"../outside"}); err == nil {
		t.Error("a path outside the repository was accepted")
	}
}

func TestWalkAllFindsUnmergedBranches(t *testing.T) {
	f := gittest.NewFixture(t)
	side := f.Branch("side").Write("side.txt", "side\n").Commit("Side work")
	f.Checkout("main")
	r := open(t, f.Dir)
	if got := walk(t, r, history.WalkOptions{}); slices.Contains(got, side) {
		t.Fatal("the default walk reached an unmerged branch")
	}
	got := walk(t, r, history.WalkOptions{All: true})
	if !slices.Contains(got, side) || !slices.Contains(got, f.Vendor) || len(got) != 9 {
		t.Fatalf("--all walked %d commits %v, want the 8 on main plus %s", len(got), got, side)
	}
}

func TestRemoteTrackingRange(t *testing.T) {
	f := gittest.NewFixture(t)
	f.AddRemoteBranch("main", f.BigTable)
	got := walk(t, open(t, f.Dir), history.WalkOptions{Revs: []string{"origin/main..HEAD"}})
	if !slices.Equal(got, []string{f.Vendor}) {
		t.Fatalf("origin/main..HEAD = %v, want [%s]", got, f.Vendor)
	}
}

func TestWalkErrors(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	err := r.Walk(context.Background(), history.WalkOptions{Revs: []string{"no-such-branch"}}, func(history.Commit) error { return nil })
	if err == nil || !strings.Contains(err.Error(), `unknown revision "no-such-branch"`) {
		t.Errorf("unknown revision: %v", err)
	}
	empty := gittest.New(t)
	er := open(t, empty.Dir)
	if _, err := er.Head(); !errors.Is(err, history.ErrEmpty) {
		t.Errorf("empty repository Head: %v, want ErrEmpty", err)
	}
	if err := er.Walk(context.Background(), history.WalkOptions{}, nil); !errors.Is(err, history.ErrEmpty) {
		t.Errorf("empty repository Walk: %v, want ErrEmpty", err)
	}
	if _, err := history.Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a git repository") {
		t.Errorf("plain directory: %v", err)
	}
}

// TestOpenWhatIsNotADirectory: a file in a work tree points to its
// repository; a file elsewhere, or a named pipe, points to none, where the
// error once named the file's directory as "the directory of its repository".
func TestOpenWhatIsNotADirectory(t *testing.T) {
	f := gittest.NewFixture(t)
	elsewhere := t.TempDir()
	plain := filepath.Join(elsewhere, "notes.txt")
	if err := os.WriteFile(plain, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inTree := filepath.Join(f.Dir, "notes.txt")
	if err := os.WriteFile(inTree, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(elsewhere, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for path, want := range map[string]string{
		inTree: "notes.txt is a file, not a repository. Try: the directory of its repository (" + f.Dir + "), and the file as a pathspec after --",
		plain:  "notes.txt is a file, not a repository, and " + elsewhere + " is in no git repository. Try: a path to a git repository",
		fifo:   "pipe is a named pipe, not a repository, and " + elsewhere + " is in no git repository. Try: a path to a git repository",
	} {
		_, err := history.Open(path)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("Open(%s): %v, want an error ending %q", path, err, want)
		}
	}
}

// TestUnbornNamesTheBranchAndOneWithCommits: a HEAD on an orphan branch is
// told apart from an empty repository, with a branch (else a tag, else a
// remote branch) that holds commits.
func TestUnbornNamesTheBranchAndOneWithCommits(t *testing.T) {
	unbornOn := func(r *gittest.Repo, branch string) *history.Repo {
		t.Helper()
		if err := r.Git.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(branch))); err != nil {
			t.Fatal(err)
		}
		return open(t, r.Dir)
	}
	r := gittest.New(t)
	first := r.Write("a.txt", "a\n").Commit("Start")
	r.Tag("v1").AddRemoteBranch("main", first)
	r.Branch("feature").Checkout("main")
	if branch, other, ok := unbornOn(r, "gh-pages").Unborn(); !ok || branch != "gh-pages" || other != "main" {
		t.Errorf("orphan gh-pages beside main: Unborn() = %q, %q, %v; want gh-pages, main, true", branch, other, ok)
	}
	for _, step := range []struct{ branch, want string }{{"main", "feature"}, {"feature", "v1"}} {
		branch, want := step.branch, step.want
		if err := r.Git.Storer.RemoveReference(plumbing.NewBranchReferenceName(branch)); err != nil {
			t.Fatal(err)
		}
		if _, other, _ := unbornOn(r, "gh-pages").Unborn(); other != want {
			t.Errorf("without %s: other %q, want %s", branch, other, want)
		}
	}
	if _, _, ok := open(t, gittest.NewFixture(t).Dir).Unborn(); ok {
		t.Error("a HEAD with commits is reported unborn")
	}
	if branch, other, ok := open(t, gittest.New(t).Dir).Unborn(); !ok || branch != "main" || other != "" {
		t.Errorf("empty repository: Unborn() = %q, %q, %v; want main, \"\", true", branch, other, ok)
	}
}

// TestMergeAtAShallowEdgeIsHandedOnAsABoundary: cloned with --depth 1 at a
// merge, as actions/checkout checks out a pull request, the walk once handed
// on nothing at all, and the caller could not say why.
func TestMergeAtAShallowEdgeIsHandedOnAsABoundary(t *testing.T) {
	src := gittest.New(t)
	src.Write("a.txt", "a\n").Commit("Start")
	feature := src.Branch("feature").Write("b.txt", "b\n").Commit("Add b")
	src.Checkout("main").Write("c.txt", "c\n").Commit("Add c")
	merge := src.Merge("Merge feature", feature)
	dir := src.ShallowClone(1)
	for _, opts := range []history.WalkOptions{{}, {MaxCommits: 1}, {IncludeMerges: true}} {
		var got []history.Commit
		if err := open(t, dir).Walk(context.Background(), opts, func(c history.Commit) error {
			got = append(got, c)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Hash != merge || !got[0].Boundary {
			t.Errorf("%+v: walked %+v, want the merge %s alone, as a boundary", opts, got, merge)
		}
	}
	// In a full clone a merge is left out, as git rev-list --no-merges
	// leaves it.
	if got := walk(t, open(t, src.Dir), history.WalkOptions{MaxCommits: 1}); len(got) != 1 || got[0] == merge {
		t.Errorf("full clone: %v, want the newest commit that is not a merge", got)
	}
}

func TestOpenFromSubdirectory(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir+"/docs")
	if r.Path() != f.Dir {
		t.Errorf("Path() = %s, want the work tree %s", r.Path(), f.Dir)
	}
}

// TestNameOfAGitDirectory: a repository opened by its .git directory, as
// git -C repo/.git reads it, is named by the directory holding it; its name
// was once "" (a jsonl "repo" of "" and a Markdown heading "## ").
func TestNameOfAGitDirectory(t *testing.T) {
	api := filepath.Join(t.TempDir(), "api")
	gittest.NewAt(t, api).Write("a.txt", "a\n").Commit("Start")
	for path, want := range map[string]string{
		api:                              "api",
		filepath.Join(api, ".git"):       "api",
		filepath.Join(api, ".git") + "/": "api",
		filepath.Join(api, "sub", ".."):  "api",
	} {
		if got := open(t, path).Name(); got != want {
			t.Errorf("Open(%q).Name() = %q, want %q", path, got, want)
		}
	}
	bare := filepath.Join(t.TempDir(), "web.git")
	clone := exec.Command("git", "clone", "-q", "--bare", api, bare)
	clone.Env = gittest.GitEnv(t)
	if out, err := clone.CombinedOutput(); err != nil {
		t.Skipf("git clone --bare: %v: %s", err, out)
	}
	if got := open(t, bare).Name(); got != "web" {
		t.Errorf("bare web.git: Name() = %q, want web", got)
	}
}

func TestRootCommitIsSharedByClones(t *testing.T) {
	f := gittest.NewFixture(t)
	clone := f.Clone()
	head, _ := open(t, f.Dir).Head()
	a, err := open(t, f.Dir).RootCommit(context.Background(), head, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := open(t, clone.Dir).RootCommit(context.Background(), head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a != f.Root || b != f.Root {
		t.Errorf("roots %s and %s, want %s", a, b, f.Root)
	}
	asked := 0
	known, err := open(t, f.Dir).RootCommit(context.Background(), head, func(h string) (string, bool, error) {
		asked++
		return "cached-root", h == f.BigTable, nil
	})
	if err != nil || known != "cached-root" || asked != 2 {
		t.Errorf("known commit: root %q after %d questions, err %v; want cached-root after 2", known, asked, err)
	}
}

func diffOf(t *testing.T, r *history.Repo, hash string, opts history.DiffOptions) history.Diff {
	t.Helper()
	var c history.Commit
	if err := r.Walk(context.Background(), history.WalkOptions{Revs: []string{hash}, MaxCommits: 1, IncludeMerges: true}, func(x history.Commit) error {
		c = x
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	d, err := r.Diff(context.Background(), c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDiffUnifiedFormat(t *testing.T) {
	f := gittest.NewFixture(t)
	d := diffOf(t, open(t, f.Dir), f.Greet, history.DiffOptions{})
	if len(d.Files) != 2 {
		t.Fatalf("got %d files, want 2", len(d.Files))
	}
	want := `diff --git a/main.go b/main.go
--- a/main.go
+++ b/main.go
@@ -1,5 +1,9 @@
 package main
 
 func main() {
-	println("hello")
+	println(greet("world"))
+}
+
+func greet(name string) string {
+	return "hello " + name
 }
`
	if got := d.Files[0].Text; got != want {
		t.Errorf("main.go diff:\n%s\nwant:\n%s", got, want)
	}
	if fd := d.Files[1]; fd.Status != 'A' || fd.Path != "main_test.go" || fd.Added != 9 || fd.Removed != 0 ||
		!strings.HasPrefix(fd.Text, "diff --git a/main_test.go b/main_test.go\nnew file mode 100644\n--- /dev/null\n+++ b/main_test.go\n@@ -0,0 +1,9 @@\n") {
		t.Errorf("added file: %+v", fd)
	}
}

func TestDiffFunctionContext(t *testing.T) {
	r := gittest.New(t)
	var body strings.Builder
	body.WriteString("package p\n\nfunc Long() {\n")
	for range 20 {
		body.WriteString("\tstep()\n")
	}
	body.WriteString("}\n")
	r.Write("p.go", body.String()).Commit("one")
	h := r.Write("p.go", strings.Replace(body.String(), "\tstep()\n}\n", "\tstep()\n\tdone()\n}\n", 1)).Commit("two")
	d := diffOf(t, open(t, r.Dir), h, history.DiffOptions{})
	if !strings.Contains(d.Files[0].Text, "@@ -21,4 +21,5 @@ func Long() {\n") {
		t.Errorf("hunk header lacks the function:\n%s", d.Files[0].Text)
	}
}

func TestDiffSkipsAndRenames(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	opts := history.DiffOptions{SkipPath: tokenizer.SkipPath}

	if d := diffOf(t, r, f.Logo, opts); d.Files[0].Skip != history.SkipBinary || d.Files[0].Text != "" {
		t.Errorf("binary file: %+v", d.Files[0])
	}
	d := diffOf(t, r, f.Deps, opts)
	if d.Files[0].Path != "go.mod" || d.Files[0].Skip != "" || d.Files[1].Path != "go.sum" || d.Files[1].Skip != tokenizer.Lockfile {
		t.Errorf("lockfile: %+v", d.Files)
	}
	if d := diffOf(t, r, f.Vendor, opts); d.Files[1].Skip != tokenizer.Vendored {
		t.Errorf("vendored file: %+v", d.Files)
	}

	plain := diffOf(t, r, f.Rename, opts)
	if len(plain.Files) != 2 || plain.Files[0].Status != 'D' && plain.Files[1].Status != 'D' {
		t.Errorf("without --renames a rename is a deletion and an addition: %+v", plain.Files)
	}
	renamed := diffOf(t, r, f.Rename, history.DiffOptions{Renames: true})
	if len(renamed.Files) != 1 || renamed.Files[0].Status != 'R' || renamed.Files[0].OldPath != "README.md" ||
		!strings.Contains(renamed.Files[0].Text, "rename from README.md\nrename to docs/README.md\n") {
		t.Errorf("with --renames: %+v", renamed.Files)
	}

	latin := diffOf(t, r, f.Latin1, opts)
	if !strings.Contains(latin.Files[0].Text, "+Ren\uFFFD\n+Jos\uFFFD\n") {
		t.Errorf("non-UTF-8 text is not shown as replacement characters:\n%q", latin.Files[0].Text)
	}

	paths, _ := history.ParsePathspec([]string{"main.go"})
	if d := diffOf(t, r, f.Vendor, history.DiffOptions{Paths: paths}); len(d.Files) != 1 || d.Files[0].Path != "main.go" {
		t.Errorf("pathspec did not limit the diff: %+v", d.Files)
	}
}

func TestDiffSkipsGeneratedAndLargeFiles(t *testing.T) {
	r := gittest.New(t)
	h := r.Write("api.go", "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage api\n").
		Write("big.txt", strings.Repeat("x", 2048)+"\n").
		Commit("generated and large")
	d := diffOf(t, open(t, r.Dir), h, history.DiffOptions{MaxFileBytes: 1024})
	if d.Files[0].Skip != history.SkipGenerated || d.Files[1].Skip != history.SkipLarge {
		t.Errorf("got %+v", d.Files)
	}
}

// TestDiffMatchesGit checks every non-merge text commit of the fixture
// against `git show`: the same patch, byte for byte, but for git's "index"
// lines (object names digest does not print).
func TestDiffMatchesGit(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	for _, h := range []string{f.Root, f.Greet, f.Deps, f.Rename, f.Latin1, f.BigTable, f.Vendor} {
		want := withoutIndexLines(gitShow(t, f.Dir, h))
		var ours strings.Builder
		for _, fd := range diffOf(t, r, h, history.DiffOptions{}).Files {
			ours.WriteString(fd.Text)
		}
		if got := ours.String(); got != want {
			t.Errorf("commit %s: patch differs from git show\n got %q\nwant %q", h[:7], got, want)
		}
	}
}

func withoutIndexLines(patch string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(patch, "\n") {
		if !strings.HasPrefix(l, "index ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestWalkOrderMatchesGitLog compares the walk with `git log` on a history
// whose dates are skewed and tied, where order is decided by the queue.
func TestWalkOrderMatchesGitLog(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := gittest.New(t)
	r.Write("a", "1\n").Commit("one")
	r.Clock = r.Clock.Add(-3 * time.Hour) // a commit dated before its parent
	r.Write("a", "2\n").Commit("skewed")
	r.Branch("side")
	tie := r.Clock
	r.Write("b", "1\n").Commit("side one")
	r.Clock = tie
	r.Write("b", "2\n").Commit("side two, same second")
	side := r.Write("b", "3\n").Commit("side three")
	r.Checkout("main")
	r.Clock = tie
	r.Write("c", "1\n").Commit("main, same second as the side")
	r.Write("b", "3\n").Merge("merge side", side)
	r.Write("d", "1\n").Commit("after the merge")
	repo := open(t, r.Dir)
	for _, tt := range []struct {
		args []string
		opts history.WalkOptions
	}{
		{[]string{"--no-merges"}, history.WalkOptions{}},
		{nil, history.WalkOptions{IncludeMerges: true}},
		{[]string{"--no-merges", "--all"}, history.WalkOptions{All: true}},
	} {
		cmd := exec.Command("git", append([]string{"-C", r.Dir, "log", "--format=%H"}, tt.args...)...)
		cmd.Env = gittest.GitEnv(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Fields(string(out))
		if got := walk(t, repo, tt.opts); !slices.Equal(got, want) {
			t.Errorf("git log %v:\n got %v\nwant %v", tt.args, got, want)
		}
	}
}

func TestWalkAllIncludesDetachedHEAD(t *testing.T) {
	f := gittest.NewFixture(t)
	detached := f.Write("d.txt", "d\n").Commit("On no branch")
	// Leave HEAD on the new commit and move main back, as `git checkout --detach` then a commit would.
	if err := f.Git.Storer.SetReference(plumbing.NewHashReference(plumbing.HEAD, plumbing.NewHash(detached))); err != nil {
		t.Fatal(err)
	}
	if err := f.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", plumbing.NewHash(f.Vendor))); err != nil {
		t.Fatal(err)
	}
	if got := walk(t, open(t, f.Dir), history.WalkOptions{All: true}); !slices.Contains(got, detached) {
		t.Errorf("--all missed the detached HEAD %s", detached[:7])
	}
}

func TestPathspecLikeGit(t *testing.T) {
	for _, tt := range []struct {
		spec  string
		path  string
		match bool
	}{
		{"docs", "docs/a.md", true},
		{"docs", "docsx/a.md", false},
		{"docs/", "docs/a/b.md", true},
		{"*.go", "internal/x/y.go", true},
		{"x?ab", "x/ab", true}, // git's ? matches a slash too
		{"a/[bc].txt", "a/c.txt", true},
		{"a/[!bc].txt", "a/c.txt", false},
	} {
		p, err := history.ParsePathspec([]string{tt.spec})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(tt.path); got != tt.match {
			t.Errorf("%q matches %q: %v, want %v", tt.spec, tt.path, got, tt.match)
		}
	}
	for _, bad := range []string{"..", "../x", "/etc", "a/[b"} {
		if _, err := history.ParsePathspec([]string{bad}); err == nil {
			t.Errorf("pathspec %q accepted", bad)
		}
	}
}

// gitShow is `git show --no-renames --format=` of a commit, or a skip when
// git is not installed.
func gitShow(t *testing.T, dir, hash string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", "-C", dir, "show", "--no-renames", "--no-color", "--format=", hash)
	cmd.Env = gittest.GitEnv(t) // the patch must be git's default, whatever the user set
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// fileHeaders lists a patch's "diff --git" lines in order.
func fileHeaders(patch string) []string {
	var out []string
	for _, l := range strings.Split(patch, "\n") {
		if strings.HasPrefix(l, "diff --git ") {
			out = append(out, l)
		}
	}
	return out
}

// TestDiffMatchesGitOnTreeShapes diffs the tree shapes where a tree walk
// can go wrong: files beside a directory whose name they extend (git sorts
// "a-b" and "a.go" before "a/"), a path that is a file, then a directory,
// then a file again, deep additions and deletions, CRLF text and a last
// line without a newline. Files must come in git's order with git's lines.
func TestDiffMatchesGitOnTreeShapes(t *testing.T) {
	r := gittest.New(t)
	var hashes []string
	hashes = append(hashes, r.Write("a.go", "package a\n").Write("a/x.go", "package x\n").Write("a-b", "1\n").
		Write("ab/deep/er/f.txt", "one\ntwo\n").Commit("shapes"))
	hashes = append(hashes, r.Write("a.go", "package a\n\nvar A = 1\n").Write("a/x.go", "package x\n\nvar X = 2\n").
		Write("a-b", "2\n").Remove("ab/deep/er/f.txt").Write("ab/deep/g.txt", "g\r\nh\r\n").Commit("edit each"))
	// gittest stages with go-git, which cannot turn a file into a directory
	// in one commit: the path is emptied first.
	hashes = append(hashes, r.Remove("a-b").Write("tail.txt", "no newline").Commit("drop a-b"))
	hashes = append(hashes, r.Write("a-b/inner", "now a directory\n").Write("a/y.go", "package x\n").Commit("a-b as a directory"))
	hashes = append(hashes, r.Remove("a-b/inner").Remove("a-b").Write("tail.txt", "no newline\nnow one\n").Commit("drop the directory"))
	hashes = append(hashes, r.Write("a-b", "a file again\n").Remove("a.go").Commit("a-b as a file"))
	repo := open(t, r.Dir)
	for _, h := range hashes {
		want := gitShow(t, r.Dir, h)
		var ours strings.Builder
		for _, fd := range diffOf(t, repo, h, history.DiffOptions{}).Files {
			ours.WriteString(fd.Text)
		}
		if got, want := fileHeaders(ours.String()), fileHeaders(want); !slices.Equal(got, want) {
			t.Errorf("commit %s: files in another order or set than git's\n got %q\nwant %q", h[:7], got, want)
		}
		if got, want := ours.String(), withoutIndexLines(want); got != want {
			t.Errorf("commit %s: patch differs from git show\n got %q\nwant %q", h[:7], got, want)
		}
	}
}

// TestDiffCountsMatchGitNumstat compares every file's added and removed
// counts with `git diff --numstat`, on edits where a line diff has choices.
func TestDiffCountsMatchGitNumstat(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := gittest.New(t)
	base := strings.Repeat("same line\n", 30) + "x\n" + strings.Repeat("}\n", 10) + "end\n"
	r.Write("moves.txt", base).Write("grow.txt", "a\nb\nc\n").Commit("base")
	h := r.Write("moves.txt", "x\n"+strings.Repeat("same line\n", 28)+"new\n"+strings.Repeat("}\n", 12)+"end\n").
		Write("grow.txt", "a\nb\nb\nc\nc\n").Commit("reorder and repeat")
	cmd := exec.Command("git", "-C", r.Dir, "diff", "--numstat", "--no-renames", h+"~1", h)
	cmd.Env = gittest.GitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		want[f[2]] = f[0] + " " + f[1]
	}
	for _, fd := range diffOf(t, open(t, r.Dir), h, history.DiffOptions{}).Files {
		if got := fmt.Sprintf("%d %d", fd.Added, fd.Removed); got != want[fd.Path] {
			t.Errorf("%s: +- %s, git --numstat %s", fd.Path, got, want[fd.Path])
		}
	}
}

// TestDiffStopsBuildingTextPastTheBound: once the files kept hold
// MaxTextBytes, later files have no text but the same counts.
func TestDiffStopsBuildingTextPastTheBound(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	full := diffOf(t, r, f.Vendor, history.DiffOptions{})
	bounded := diffOf(t, r, f.Vendor, history.DiffOptions{MaxTextBytes: 1})
	if len(full.Files) != 2 || len(bounded.Files) != 2 {
		t.Fatalf("files: %d and %d, want 2", len(full.Files), len(bounded.Files))
	}
	if bounded.Files[0].Text != full.Files[0].Text || bounded.Files[0].TextOmitted {
		t.Errorf("the first file, within the bound, lost its text: %+v", bounded.Files[0])
	}
	second := bounded.Files[1]
	if second.Text != "" || !second.TextOmitted || second.Added != full.Files[1].Added || second.Removed != full.Files[1].Removed {
		t.Errorf("past the bound: %+v, want no text, TextOmitted and the counts of %+v", second, full.Files[1])
	}
}

// TestDiffConcurrently: Diff is safe for concurrent use and gives each
// caller what a lone caller gets (run under -race).
func TestDiffConcurrently(t *testing.T) {
	f := gittest.NewFixture(t)
	r := open(t, f.Dir)
	hashes := []string{f.Root, f.Greet, f.Deps, f.Logo, f.Rename, f.Latin1, f.BigTable, f.Vendor}
	want := make([]history.Diff, len(hashes))
	for i, h := range hashes {
		want[i] = diffOf(t, open(t, f.Dir), h, history.DiffOptions{SkipPath: tokenizer.SkipPath})
	}
	var commits []history.Commit
	if err := r.Walk(context.Background(), history.WalkOptions{}, func(c history.Commit) error {
		commits = append(commits, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	byHash := map[string]history.Commit{}
	for _, c := range commits {
		byHash[c.Hash] = c
	}
	var wg sync.WaitGroup
	for round := range 4 {
		for i, h := range hashes {
			wg.Go(func() {
				d, err := r.Diff(context.Background(), byHash[h], history.DiffOptions{SkipPath: tokenizer.SkipPath})
				if err != nil {
					t.Error(err)
					return
				}
				if !reflect.DeepEqual(d, want[i]) {
					t.Errorf("round %d, commit %s: concurrent diff differs from a lone one", round, h[:7])
				}
			})
		}
	}
	wg.Wait()
}

// TestSubmoduleChangesAreInGitsFormat: a submodule added, moved to another
// commit and removed is shown as git shows it, with its ---, +++ and @@
// lines around "Subproject commit HASH".
func TestSubmoduleChangesAreInGitsFormat(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	env := append(gittest.GitEnv(t), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "base")
	var hashes []string
	for i, sub := range []string{strings.Repeat("1", 40), strings.Repeat("2", 40), ""} {
		if sub == "" {
			git("rm", "-q", "--cached", "lib")
		} else {
			git("update-index", "--add", "--cacheinfo", "160000,"+sub+",lib")
		}
		git("commit", "-q", "-m", fmt.Sprint("submodule ", i))
		hashes = append(hashes, git("rev-parse", "HEAD"))
	}
	repo := open(t, dir)
	for _, h := range hashes {
		var ours strings.Builder
		for _, fd := range diffOf(t, repo, h, history.DiffOptions{}).Files {
			ours.WriteString(fd.Text)
		}
		if got, want := ours.String(), withoutIndexLines(gitShow(t, dir, h)); got != want {
			t.Errorf("commit %s: patch differs from git show\n got %q\nwant %q", h[:7], got, want)
		}
	}
}

// TestCommitInAnotherEncodingIsReadAsGitLogShowsIt: a commit whose
// "encoding" header names ISO-8859-1 has its message and author in that
// encoding; git log shows them in UTF-8, and so does digest (it showed
// U+FFFD for each accented letter).
func TestCommitInAnotherEncodingIsReadAsGitLogShowsIt(t *testing.T) {
	src := gittest.New(t)
	base, err := src.Git.CommitObject(plumbing.NewHash(src.Write("a.txt", "a\n").Commit("Start")))
	if err != nil {
		t.Fatal(err)
	}
	sig := object.Signature{Name: "Jos\xe9 P\xe9rez", Email: "jose@example.com", When: src.Clock}
	c := &object.Commit{Author: sig, Committer: sig, Message: "Caf\xe9 au lait\n\nD\xe9tails.\n", TreeHash: base.TreeHash,
		ParentHashes: []plumbing.Hash{base.Hash}, Encoding: "ISO-8859-1"}
	obj := src.Git.Storer.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		t.Fatal(err)
	}
	h, err := src.Git.Storer.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", h)); err != nil {
		t.Fatal(err)
	}
	var got []history.Commit
	if err := open(t, src.Dir).Walk(context.Background(), history.WalkOptions{}, func(c history.Commit) error {
		got = append(got, c)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Subject != "Café au lait" || got[0].AuthorName != "José Pérez" || got[0].Message != "Café au lait\n\nDétails." {
		t.Fatalf("read %+v", got)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	cmd := exec.Command("git", "-C", src.Dir, "log", "-1", "--format=%s|%an")
	cmd.Env = gittest.GitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := got[0].Subject + "|" + got[0].AuthorName; strings.TrimSpace(string(out)) != want {
		t.Errorf("git log shows %q, digest %q", out, want)
	}
}

// TestFileAt reads a file of a commit's tree as git show REV:PATH does,
// and says when there is none.
func TestFileAt(t *testing.T) {
	r := gittest.New(t)
	r.Write(".github/release.yml", "changelog: {}\n").Commit("first")
	r.Write(".github/release.yml", "changelog:\n  exclude:\n    labels: [skip]\n").Commit("second")
	repo, err := history.Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	for _, c := range []struct {
		rev, path, want string
		ok              bool
	}{
		{"HEAD", ".github/release.yml", "changelog:\n  exclude:\n    labels: [skip]\n", true},
		{"HEAD~1", ".github/release.yml", "changelog: {}\n", true},
		{"HEAD", ".github/release.yaml", "", false},
		{"HEAD", ".github", "", false}, // a tree, not a file
		{"no-such-branch", ".github/release.yml", "", false},
	} {
		got, ok, err := repo.FileAt(c.rev, c.path, 1<<20)
		if err != nil || ok != c.ok || string(got) != c.want {
			t.Errorf("FileAt(%s, %s) = %q, %v, %v; want %q, %v", c.rev, c.path, got, ok, err, c.want, c.ok)
		}
	}
	if _, _, err := repo.FileAt("HEAD", ".github/release.yml", 8); err == nil || !strings.Contains(err.Error(), "over the 8") {
		t.Errorf("a file over max: %v", err)
	}
}
