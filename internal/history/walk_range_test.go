package history

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/gitobjects"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gittest"
)

// dag writes commits with any parents and dates straight into a
// repository's object storage, as no work tree can: criss-cross merges,
// octopus merges, clocks that run backwards. Each commit changes one of
// three files, so that pathspecs select some commits and not others.
type dag struct {
	t     testing.TB
	repo  *gittest.Repo
	files map[plumbing.Hash]map[string]plumbing.Hash // each commit's files and their blobs
	names map[string]plumbing.Hash
	// author writes the commits from here on, Ada when unset.
	author object.Signature
}

func newDAG(t testing.TB) *dag {
	return &dag{t: t, repo: gittest.New(t), files: map[plumbing.Hash]map[string]plumbing.Hash{}, names: map[string]plumbing.Hash{}}
}

// encoder is a tree or a commit, to be stored.
type encoder interface {
	Encode(plumbing.EncodedObject) error
}

func (d *dag) store(o encoder) plumbing.Hash {
	d.t.Helper()
	enc := d.repo.Git.Storer.NewEncodedObject()
	if err := o.Encode(enc); err != nil {
		d.t.Fatal(err)
	}
	h, err := d.repo.Git.Storer.SetEncodedObject(enc)
	if err != nil {
		d.t.Fatal(err)
	}
	return h
}

// commit writes a commit named name (its message, and the content it
// gives the file it changes), dated unix seconds, over parents by name.
func (d *dag) commit(name string, unix int64, parents ...string) plumbing.Hash {
	d.t.Helper()
	files := map[string]plumbing.Hash{}
	var parentHashes []plumbing.Hash
	for i, p := range parents {
		h, ok := d.names[p]
		if !ok {
			d.t.Fatalf("no commit %q", p)
		}
		parentHashes = append(parentHashes, h)
		if i == 0 {
			for k, v := range d.files[h] {
				files[k] = v
			}
		}
	}
	blob := &plumbing.MemoryObject{}
	blob.SetType(plumbing.BlobObject)
	blob.Write([]byte(name + "\n"))
	bh, err := d.repo.Git.Storer.SetEncodedObject(blob)
	if err != nil {
		d.t.Fatal(err)
	}
	files[fmt.Sprintf("f%d", len(d.names)%3)] = bh
	tree := &object.Tree{}
	for path, h := range files {
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: path, Mode: filemode.Regular, Hash: h})
	}
	slices.SortFunc(tree.Entries, func(a, b object.TreeEntry) int { return strings.Compare(a.Name, b.Name) })
	sig := object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Unix(unix, 0).UTC()}
	author := sig
	if d.author.Name != "" || d.author.Email != "" {
		author.Name, author.Email = d.author.Name, d.author.Email
	}
	h := d.store(&object.Commit{Author: author, Committer: sig, Message: name + "\n", TreeHash: d.store(tree), ParentHashes: parentHashes})
	d.files[h] = files
	d.names[name] = h
	return h
}

// graph writes a commit-graph of every commit named so far, as `git
// commit-graph write` would after a fetch.
func (d *dag) graph() {
	d.t.Helper()
	var all []string
	for _, h := range d.names {
		all = append(all, h.String())
	}
	cmd := exec.Command("git", "-C", d.repo.Dir, "commit-graph", "write", "--stdin-commits")
	cmd.Env = gittest.GitEnv(d.t)
	cmd.Stdin = strings.NewReader(strings.Join(all, "\n") + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("git commit-graph write: %v\n%s", err, out)
	}
}

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// query is a walk and the `git rev-list` that must give the same commits.
type query struct {
	starts, hidden []string // commit names
	opts           WalkOptions
}

// gitArgs are rev-list's arguments for q: hidden commits first, as git
// lists A before B for A..B.
func (d *dag) gitArgs(q query) []string {
	var args []string
	if q.opts.FirstParent {
		args = append(args, "--first-parent")
	} else if !q.opts.IncludeMerges {
		args = append(args, "--no-merges")
	}
	if !q.opts.Since.IsZero() {
		args = append(args, fmt.Sprintf("--since=%d", q.opts.Since.Unix()))
	}
	if !q.opts.Until.IsZero() {
		args = append(args, fmt.Sprintf("--until=%d", q.opts.Until.Unix()))
	}
	if q.opts.MaxCommits > 0 {
		args = append(args, fmt.Sprintf("--max-count=%d", q.opts.MaxCommits))
	}
	if !q.opts.Paths.Empty() {
		args = append(args, "--full-history")
	}
	for _, h := range q.hidden {
		args = append(args, "^"+d.names[h].String())
	}
	for _, s := range q.starts {
		args = append(args, d.names[s].String())
	}
	if !q.opts.Paths.Empty() {
		args = append(args, "--", "f1")
	}
	return args
}

func (d *dag) revList(q query) []string {
	d.t.Helper()
	args := d.gitArgs(q)
	cmd := exec.Command("git", append([]string{"-C", d.repo.Dir, "rev-list"}, args...)...)
	cmd.Env = gittest.GitEnv(d.t)
	out, err := cmd.Output()
	if err != nil {
		d.t.Fatalf("git rev-list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// walk runs q: as --rev A..B when it is one, through Walk as digest
// summarize does, else with its commits as resolve would give them.
func (d *dag) walk(r *Repo, q query) []string {
	d.t.Helper()
	var got []string
	collect := func(c Commit) error {
		got = append(got, c.Hash)
		return nil
	}
	if len(q.starts) == 1 && len(q.hidden) == 1 {
		opts := q.opts
		opts.Revs = []string{d.names[q.hidden[0]].String() + ".." + d.names[q.starts[0]].String()}
		if err := r.Walk(context.Background(), opts, collect); err != nil {
			d.t.Fatal(err)
		}
		return got
	}
	var starts, hidden []gitobjects.ID
	for _, s := range q.starts {
		starts = append(starts, gitobjects.IDFromHash(d.names[s]))
	}
	for _, h := range q.hidden {
		hidden = append(hidden, gitobjects.IDFromHash(d.names[h]))
	}
	if err := r.walk(context.Background(), starts, hidden, q.opts, collect); err != nil {
		d.t.Fatal(err)
	}
	return got
}

// name turns hashes back into commit names, for messages.
func (d *dag) name(hashes []string) string {
	byHash := map[string]string{}
	for n, h := range d.names {
		byHash[h.String()] = n
	}
	var out []string
	for _, h := range hashes {
		out = append(out, byHash[h])
	}
	return strings.Join(out, " ")
}

// sameAsGit checks each query, with the options' variants, against git,
// read from objects and then again through a commit-graph.
func (d *dag) sameAsGit(t *testing.T, queries []query) {
	t.Helper()
	paths, err := ParsePathspec([]string{"f1"})
	if err != nil {
		t.Fatal(err)
	}
	var all []query
	for _, q := range queries {
		all = append(all, q)
		merges, limited, pathspec := q, q, q
		merges.opts.IncludeMerges = true
		limited.opts.MaxCommits = 3
		pathspec.opts.Paths = paths
		all = append(all, merges, limited, pathspec)
	}
	for _, withGraph := range []bool{false, true} {
		if withGraph {
			d.graph()
		}
		r := openRepo(t, d.repo.Dir)
		if (r.graph != nil) != withGraph {
			t.Fatalf("commit-graph in use: %v, want %v", r.graph != nil, withGraph)
		}
		for _, q := range all {
			want := d.revList(q)
			if got := d.walk(r, q); !slices.Equal(got, want) {
				t.Errorf("graph %v, git rev-list %v:\n got %s\nwant %s", withGraph, d.gitArgs(q), d.name(got), d.name(want))
			}
		}
		r.Close()
	}
}

func openRepo(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const hour = 3600

// TestRangeWalkMatchesGitRevList: ranges over branches, merges, criss-cross
// merges, a B that A does not reach, several hidden and several starting
// commits, and clocks skewed within git's slop, select the commits `git
// rev-list` selects, in its order.
func TestRangeWalkMatchesGitRevList(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("m1", at+1*hour, "root")
	d.commit("t1", at+2*hour, "m1") // topic branch from m1
	d.commit("m2", at+3*hour, "m1")
	d.commit("t2", at+4*hour, "t1")
	d.commit("m3", at+5*hour, "m2", "t2") // topic merged
	d.commit("s1", at+6*hour, "m2")       // side branch, never merged into main
	d.commit("m4", at+7*hour, "m3")
	// Criss-cross: x and y each merge the other's parent.
	d.commit("x0", at+8*hour, "m4")
	d.commit("y0", at+8*hour, "m4") // the same second as x0
	d.commit("x1", at+9*hour, "x0", "y0")
	d.commit("y1", at+9*hour, "y0", "x0")
	d.commit("x2", at+10*hour, "x1", "y1")
	d.commit("y2", at+11*hour, "y1", "x1")
	d.commit("octo", at+12*hour, "x2", "y2", "s1")
	// Skewed: a commit dated before its parents, on both sides of a range.
	d.commit("k1", at+10*hour, "octo")
	d.commit("k2", at+13*hour, "k1")
	d.commit("k3", at+9*hour, "k2")
	d.commit("head", at+14*hour, "k3")
	queries := []query{
		{starts: []string{"head"}, hidden: []string{"m4"}},
		{starts: []string{"m3"}, hidden: []string{"m1"}},
		{starts: []string{"s1"}, hidden: []string{"m3"}},   // A does not reach B
		{starts: []string{"m3"}, hidden: []string{"s1"}},   // nor B A
		{starts: []string{"m1"}, hidden: []string{"head"}}, // B behind A: nothing
		{starts: []string{"x2"}, hidden: []string{"y2"}},   // criss-cross
		{starts: []string{"y2"}, hidden: []string{"x2"}},
		{starts: []string{"x2", "y2"}, hidden: []string{"x1", "y1"}}, // A...B: merge bases hidden
		{starts: []string{"octo"}, hidden: []string{"t2", "s1", "x0"}},
		{starts: []string{"head", "s1"}, hidden: []string{"m2"}},
		{starts: []string{"head"}, hidden: []string{"k1"}}, // across the skew
		{starts: []string{"k3"}, hidden: []string{"k2"}},
		{starts: []string{"head"}, hidden: []string{"head"}},
		{starts: []string{"head"}, hidden: []string{"x0"}, opts: WalkOptions{Since: time.Unix(at+9*hour, 0), Until: time.Unix(at+13*hour, 0)}},
		{starts: []string{"head"}, hidden: []string{"m1"}, opts: WalkOptions{Since: time.Unix(at+6*hour, 0)}},
		{starts: []string{"head"}, opts: WalkOptions{Since: time.Unix(at+9*hour, 0)}},
		{starts: []string{"head", "s1"}},
	}
	d.sameAsGit(t, queries)
}

// TestRangeWalkKeepsGitsSlop: past its slop git stops walking, and shows a
// commit the excluded side does reach, through commits whose dates lie
// older than it. That is git's answer, and digest gives it too.
func TestRangeWalkKeepsGitsSlop(t *testing.T) {
	needGit(t)
	// Git walks five commits past the last one selected (its slop), and
	// marks through the parents they name: six skewed commits still lead
	// it to x, seven do not.
	for _, skewed := range []int{3, 6, 7, 9} {
		t.Run(fmt.Sprint(skewed), func(t *testing.T) {
			d := newDAG(t)
			at := int64(1_700_000_000)
			d.commit("x", at+100*hour)
			prev := "x"
			for i := range skewed {
				name := fmt.Sprintf("c%d", i)
				d.commit(name, at+int64(50-i)*hour, prev)
				prev = name
			}
			d.commit("a", at+200*hour, prev)
			d.commit("b", at+300*hour, "x")
			q := query{starts: []string{"b"}, hidden: []string{"a"}}
			want := d.revList(q)
			if inGit := len(want) == 2; inGit != (skewed > slop+1) {
				t.Fatalf("git rev-list gave %s; this test expects x left in past %d skewed commits only", d.name(want), slop+1)
			}
			d.sameAsGit(t, []query{q})
		})
	}
}

// TestRangeWalkRandomHistories compares random histories (merges of up to
// four parents, tied and skewed dates) and ranges with git.
func TestRangeWalkRandomHistories(t *testing.T) {
	needGit(t)
	seeds := uint64(4)
	if n, err := strconv.Atoi(os.Getenv("DIGEST_TEST_SEEDS")); err == nil {
		seeds = uint64(n)
	}
	for seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			d, names, at := randomDAG(t, rng, randomHistory{commits: 60, firstMerge: 5, mergeOneIn: 4, reach: 12, clockOneIn: 8, behind: 4})
			pick := func(n int) []string {
				var out []string
				for range n {
					out = append(out, names[rng.IntN(len(names))])
				}
				return out
			}
			var queries []query
			for range 12 {
				queries = append(queries, query{starts: pick(1 + rng.IntN(2)), hidden: pick(1 + rng.IntN(3))})
			}
			queries = append(queries, query{starts: pick(1), hidden: pick(1), opts: WalkOptions{Since: time.Unix(at-20*hour, 0)}},
				query{starts: pick(2)}, query{starts: pick(1), opts: WalkOptions{Since: time.Unix(at-20*hour, 0)}})
			d.sameAsGit(t, queries)
		})
	}
}

// TestRangeWalkReadsNoFurtherThanGit: HEAD~3..HEAD over a long history
// reads a few commits, as git does, not every commit the excluded side
// reaches. A damaged commit far back proves it: git never reads it, and
// the walk must not either.
func TestRangeWalkReadsNoFurtherThanGit(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("c0", at)
	for i := 1; i < 200; i++ {
		d.commit(fmt.Sprintf("c%d", i), at+int64(i)*hour, fmt.Sprintf("c%d", i-1))
	}
	// Loose, so its file can be damaged alone.
	damaged := d.names["c10"].String()
	path := filepath.Join(d.repo.Dir, ".git", "objects", damaged[:2], damaged[2:])
	var garbage bytes.Buffer
	zw := zlib.NewWriter(&garbage)
	zw.Write([]byte("commit 5\x00junk!"))
	zw.Close()
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, garbage.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	q := query{starts: []string{"c199"}, hidden: []string{"c196"}}
	want := d.revList(q)
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	if got := d.walk(r, q); !slices.Equal(got, want) {
		t.Fatalf("got %s, want %s", d.name(got), d.name(want))
	}
	g := newCommitNodes(r)
	w := &walker{r: r, g: g, q: newCommitQueue(g), fn: func(Commit) error { return nil }}
	if err := w.queueStarts([]gitobjects.ID{gitobjects.IDFromHash(d.names["c199"])}, []gitobjects.ID{gitobjects.IDFromHash(d.names["c196"])}); err != nil {
		t.Fatal(err)
	}
	if err := w.limited(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(g.nodes); n > 12 {
		t.Errorf("the walk met %d commits for a range of 3", n)
	}
}

// TestCommitGraphStaleOrDamaged: commits written after the commit-graph
// are read from their objects, and a damaged commit-graph is not used;
// the walk is git's either way.
func TestCommitGraphStaleOrDamaged(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("a", at+hour, "root")
	d.commit("b", at+2*hour, "root")
	d.commit("m", at+3*hour, "a", "b")
	d.graph()
	d.commit("c", at+4*hour, "m")
	d.commit("e", at+5*hour, "c", "b")
	queries := []query{{starts: []string{"e"}, hidden: []string{"a"}}, {starts: []string{"e"}, hidden: []string{"c"}}, {starts: []string{"e"}}}
	r := openRepo(t, d.repo.Dir)
	if r.graph == nil {
		t.Fatal("the commit-graph was not opened")
	}
	for _, q := range queries {
		if got, want := d.walk(r, q), d.revList(q); !slices.Equal(got, want) {
			t.Errorf("stale graph, %v: got %s, want %s", d.gitArgs(q), d.name(got), d.name(want))
		}
	}
	r.Close()

	file := filepath.Join(d.repo.Dir, ".git", "objects", "info", "commit-graph")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(file, 0o644)
	if err := os.WriteFile(file, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	r = openRepo(t, d.repo.Dir)
	defer r.Close()
	if r.graph != nil {
		t.Error("a truncated commit-graph was used")
	}
	for _, q := range queries {
		if got, want := d.walk(r, q), d.revList(q); !slices.Equal(got, want) {
			t.Errorf("damaged graph, %v: got %s, want %s", d.gitArgs(q), d.name(got), d.name(want))
		}
	}
}

// TestCommitDateAsGitReadsIt: the walk orders by the committer date as
// git's parse_commit_date reads it, 0 when it cannot.
func TestCommitDateAsGitReadsIt(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
	}{
		{"author A <a> 1 +0000\ncommitter C <c> 1700000000 +0100\n\nmsg", 1700000000},
		{"author A <a> 1 +0000\ncommitter C <c>  +42 +0100\n", 42},
		{"author A <a> 1 +0000\ncommitter C <c> x +0100\n", 0},
		{"author A <a> 1 +0000\ncommitter C no email 5\n", 0},
		{"author A <a> 1 +0000\ncommitter C <c> 5", 0}, // no end of line
		{"committer C <c> 5\n", 0},                     // no author line first
		{"author A <a> 1 +0000\ncommitter C <c> 99999999999999999999999 +0000\n", 1<<63 - 1},
	} {
		if got := commitDate([]byte(tt.in)); got != tt.want {
			t.Errorf("commitDate(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func (d *dag) git(args ...string) {
	d.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", d.repo.Dir}, args...)...)
	cmd.Env = gittest.GitEnv(d.t)
	cmd.Stdin = strings.NewReader("") // never an inherited standard input
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestRootCommitFromCommitGraph: the first-parent walk to the root reads
// the commit-graph, not the commits: with a commit on the way damaged, it
// still finds the root, and without the graph reports the damage.
func TestRootCommitFromCommitGraph(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("root", at)
	d.commit("side", at+hour)
	prev := "root"
	for i := range 20 {
		name := fmt.Sprintf("c%d", i)
		if i == 10 {
			d.commit(name, at+int64(i+2)*hour, prev, "side") // a second root, not first-parent
		} else {
			d.commit(name, at+int64(i+2)*hour, prev)
		}
		prev = name
	}
	d.graph()
	damaged := d.names["c5"].String()
	path := filepath.Join(d.repo.Dir, ".git", "objects", damaged[:2], damaged[2:])
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, []byte("not zlib"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := openRepo(t, d.repo.Dir)
	root, err := r.RootCommit(context.Background(), d.names["c19"].String(), nil)
	if err != nil || root != d.names["root"].String() {
		t.Errorf("with the commit-graph: root %s, %v; want %s", root, err, d.names["root"])
	}
	r.Close()
	os.Remove(filepath.Join(d.repo.Dir, ".git", "objects", "info", "commit-graph"))
	r = openRepo(t, d.repo.Dir)
	defer r.Close()
	if _, err := r.RootCommit(context.Background(), d.names["c19"].String(), nil); err == nil {
		t.Error("without the commit-graph the damaged commit was not read")
	}
}

// TestRevisionsReadThroughGitobjects: go-git resolves revisions such as
// HEAD~2 with its objects read by gitobjects, which mapped the pack index
// when the repository was opened. go-git's own storage would load the
// index again at its first read, here gone from the disk by then.
func TestRevisionsReadThroughGitobjects(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	at := int64(1_700_000_000)
	d.commit("c0", at)
	for i := 1; i < 6; i++ {
		d.commit(fmt.Sprintf("c%d", i), at+int64(i)*hour, fmt.Sprintf("c%d", i-1))
	}
	if err := d.repo.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", d.names["c5"])); err != nil {
		t.Fatal(err)
	}
	d.git("repack", "-a", "-d", "-q")
	r := openRepo(t, d.repo.Dir)
	defer r.Close()
	idx, _ := filepath.Glob(filepath.Join(d.repo.Dir, ".git", "objects", "pack", "*.idx"))
	if len(idx) != 1 {
		t.Fatalf("packs: %v", idx)
	}
	if err := os.Remove(idx[0]); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := r.Walk(context.Background(), WalkOptions{Revs: []string{"HEAD~2..HEAD"}}, func(c Commit) error {
		got = append(got, c.Hash)
		return nil
	})
	if want := []string{d.names["c5"].String(), d.names["c4"].String()}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("HEAD~2..HEAD: %s, %v; want c5 c4", d.name(got), err)
	}
}

// BenchmarkWalkRange walks the last few commits of a long history, as
// `digest summarize --rev HEAD~3..HEAD` does, read from objects and from a
// commit-graph. DIGEST_BENCH_GITGIT names a clone of git.git to walk
// instead of a made-up history of 5,000 commits.
func BenchmarkWalkRange(b *testing.B) {
	dir := os.Getenv("DIGEST_BENCH_GITGIT")
	if dir == "" {
		needGit(b)
		d := newDAG(b)
		at := int64(1_700_000_000)
		d.commit("c0", at)
		for i := 1; i < 5000; i++ {
			parents := []string{fmt.Sprintf("c%d", i-1)}
			if i%10 == 0 && i > 20 {
				parents = append(parents, fmt.Sprintf("c%d", i-15)) // a topic branch merged
			}
			d.commit(fmt.Sprintf("c%d", i), at+int64(i)*hour, parents...)
		}
		if err := d.repo.Git.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", d.names["c4999"])); err != nil {
			b.Fatal(err)
		}
		d.git("repack", "-a", "-d", "-q")
		dir = d.repo.Dir
		graphless := b.TempDir()
		d.git("clone", "-q", "--bare", "--no-local", dir, graphless)
		d.git("commit-graph", "write", "--reachable")
		b.Run("objects", func(b *testing.B) { benchWalk(b, graphless) })
		b.Run("commit-graph", func(b *testing.B) { benchWalk(b, dir) })
		return
	}
	benchWalk(b, dir)
}

func benchWalk(b *testing.B, dir string) {
	for _, rev := range []string{"HEAD~3..HEAD", "HEAD~50..HEAD"} {
		b.Run(rev, func(b *testing.B) {
			r := openRepo(b, dir)
			defer r.Close()
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				err := r.Walk(context.Background(), WalkOptions{Revs: []string{rev}}, func(Commit) error { n++; return nil })
				if err != nil || n == 0 {
					b.Fatalf("%d commits, %v", n, err)
				}
			}
		})
	}
}

// TestCommitGraphNotReadWhereGitWouldNot: not with core.commitGraph=false,
// nor in a shallow clone, whose boundary commits' parents the graph would
// still name.
func TestCommitGraphNotReadWhereGitWouldNot(t *testing.T) {
	needGit(t)
	d := newDAG(t)
	d.commit("root", 1_700_000_000)
	d.commit("a", 1_700_000_000+hour, "root")
	d.graph()
	r := openRepo(t, d.repo.Dir)
	if r.graph == nil {
		t.Fatal("the commit-graph was not opened")
	}
	r.Close()
	d.git("config", "core.commitGraph", "false")
	r = openRepo(t, d.repo.Dir)
	if r.graph != nil {
		t.Error("read with core.commitGraph=false")
	}
	r.Close()
	d.git("config", "core.commitGraph", "true")
	if err := os.WriteFile(filepath.Join(d.repo.Dir, ".git", "shallow"), []byte(d.names["a"].String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = openRepo(t, d.repo.Dir)
	defer r.Close()
	if r.graph != nil {
		t.Error("read in a shallow clone")
	}
}

// randomHistory shapes randomDAG's history.
type randomHistory struct {
	commits    int
	firstMerge int // the first commit that may be a merge
	mergeOneIn int // a commit is a merge (of 2 or 3 parents) one time in this many
	reach      int // how far back a parent may be
	clockOneIn int // one commit in this many shares the second before; one more goes back
	behind     int // hours at most a clock goes back
}

// randomDAG builds a history of h.commits named c0, c1, ... (returned in
// that order, with the last one's date): merges of two or three recent
// parents, and commits dated the same second as the one before or by a
// clock behind.
func randomDAG(t *testing.T, rng *rand.Rand, h randomHistory) (d *dag, names []string, last int64) {
	d = newDAG(t)
	at := int64(1_700_000_000)
	for i := range h.commits {
		name := fmt.Sprintf("c%d", i)
		var parents []string
		if i > 0 {
			n := 1
			if i >= h.firstMerge && rng.IntN(h.mergeOneIn) == 0 {
				n = 2 + rng.IntN(3)/2
			}
			for range n {
				p := names[max(0, i-1-rng.IntN(min(i, h.reach)))]
				if !slices.Contains(parents, p) {
					parents = append(parents, p)
				}
			}
		}
		switch rng.IntN(h.clockOneIn) {
		case 0: // the same second as the commit before
		case 1:
			at -= int64(rng.IntN(h.behind)) * hour // a clock behind
		default:
			at += hour
		}
		d.commit(name, at, parents...)
		names = append(names, name)
	}
	return d, names, at
}
