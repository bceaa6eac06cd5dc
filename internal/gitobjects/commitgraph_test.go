package gitobjects

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gittest"
)

// graphEntry is a commit as a test writes it into a commit-graph.
type graphEntry struct {
	hash, tree plumbing.Hash
	parents    []plumbing.Hash
	time       int64
	level      uint32
}

// writeGraph lays out a commit-graph layer in git's format, for tests that
// need one without git, and for the fuzzer's seeds. below are the commits
// of the layers under it, in their graph order, and bases those layers'
// checksums.
func writeGraph(entries []graphEntry, below []plumbing.Hash, bases [][]byte) []byte {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b graphEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) })
	pos := map[plumbing.Hash]uint32{}
	for i, h := range below {
		pos[h] = uint32(i)
	}
	for i, e := range entries {
		pos[e.hash] = uint32(len(below) + i)
	}
	var fanout, oids, data, edges bytes.Buffer
	for b := range 256 {
		n := 0
		for _, e := range entries {
			if int(e.hash[0]) <= b {
				n++
			}
		}
		binary.Write(&fanout, binary.BigEndian, uint32(n))
	}
	for _, e := range entries {
		oids.Write(e.hash[:])
		data.Write(e.tree[:])
		parent := func(i int) uint32 {
			if i >= len(e.parents) {
				return graphNoParent
			}
			return pos[e.parents[i]]
		}
		second := parent(1)
		if len(e.parents) > 2 {
			second = graphEdgeMarker | uint32(edges.Len()/4)
			for i := 1; i < len(e.parents); i++ {
				v := pos[e.parents[i]]
				if i == len(e.parents)-1 {
					v |= graphLastEdge
				}
				binary.Write(&edges, binary.BigEndian, v)
			}
		}
		binary.Write(&data, binary.BigEndian, []uint32{parent(0), second,
			e.level<<2 | uint32(e.time>>32)&3, uint32(e.time)})
	}
	type chunk struct {
		id   string
		data []byte
	}
	chunks := []chunk{{"OIDF", fanout.Bytes()}, {"OIDL", oids.Bytes()}, {"CDAT", data.Bytes()}}
	if edges.Len() > 0 {
		chunks = append(chunks, chunk{"EDGE", edges.Bytes()})
	}
	if len(bases) > 0 {
		chunks = append(chunks, chunk{"BASE", bytes.Join(bases, nil)})
	}
	var out bytes.Buffer
	out.WriteString("CGPH")
	out.Write([]byte{1, 1, byte(len(chunks)), byte(len(bases))})
	off := uint64(8 + (len(chunks)+1)*12)
	for _, c := range chunks {
		out.WriteString(c.id)
		binary.Write(&out, binary.BigEndian, off)
		off += uint64(len(c.data))
	}
	out.Write([]byte{0, 0, 0, 0})
	binary.Write(&out, binary.BigEndian, off)
	for _, c := range chunks {
		out.Write(c.data)
	}
	sum := sha1.Sum(out.Bytes())
	out.Write(sum[:])
	return out.Bytes()
}

func hashOf(s string) plumbing.Hash { return plumbing.Hash(sha1.Sum([]byte(s))) }

// sampleGraph is a small history with a merge and an octopus merge, as
// one layer.
func sampleGraph() ([]graphEntry, []byte) {
	root := graphEntry{hash: hashOf("root"), tree: hashOf("t0"), time: 1_000_000_000, level: 1}
	a := graphEntry{hash: hashOf("a"), tree: hashOf("t1"), parents: []plumbing.Hash{root.hash}, time: 1_000_000_100, level: 2}
	b := graphEntry{hash: hashOf("b"), tree: hashOf("t2"), parents: []plumbing.Hash{root.hash}, time: 1<<33 + 5, level: 2}
	c := graphEntry{hash: hashOf("c"), tree: hashOf("t3"), parents: []plumbing.Hash{root.hash}, time: 1_000_000_300, level: 2}
	merge := graphEntry{hash: hashOf("merge"), tree: hashOf("t4"), parents: []plumbing.Hash{a.hash, b.hash}, time: 1<<33 + 10, level: 3}
	octopus := graphEntry{hash: hashOf("octopus"), tree: hashOf("t5"), parents: []plumbing.Hash{merge.hash, c.hash, a.hash, b.hash}, time: 1<<33 + 20, level: 4}
	entries := []graphEntry{root, a, b, c, merge, octopus}
	return entries, writeGraph(entries, nil, nil)
}

// checkGraph reads every entry back from g.
func checkGraph(t *testing.T, g *CommitGraph, entries []graphEntry) {
	t.Helper()
	if int(g.Len()) != len(entries) {
		t.Fatalf("Len %d, want %d", g.Len(), len(entries))
	}
	for _, e := range entries {
		pos, ok := g.Find(IDFromHash(e.hash))
		if !ok {
			t.Fatalf("%s not found", e.hash)
		}
		if h, err := g.Hash(pos); err != nil || h != IDFromHash(e.hash) {
			t.Fatalf("Hash(%d) = %s, %v; want %s", pos, h, err, e.hash)
		}
		c, err := g.Commit(pos, nil)
		if err != nil {
			t.Fatalf("%s: %v", e.hash, err)
		}
		var parents []plumbing.Hash
		for _, p := range c.Parents {
			h, err := g.Hash(p)
			if err != nil {
				t.Fatal(err)
			}
			parents = append(parents, h.Hash())
		}
		if c.Tree != IDFromHash(e.tree) || c.Time != e.time || c.Level != e.level || !slices.Equal(parents, e.parents) {
			t.Errorf("%s: got tree %s time %d level %d parents %v\nwant tree %s time %d level %d parents %v",
				e.hash, c.Tree, c.Time, c.Level, parents, e.tree, e.time, e.level, e.parents)
		}
	}
	if _, ok := g.Find(IDFromHash(hashOf("not a commit of the graph"))); ok {
		t.Error("found a commit the graph does not hold")
	}
}

// TestCommitGraphReadsWhatWasWritten: parents (an octopus's from the edge
// list), trees, dates past 32 bits and levels, from one layer.
func TestCommitGraphReadsWhatWasWritten(t *testing.T) {
	entries, file := sampleGraph()
	g, err := ParseCommitGraph(file)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, g, entries)
}

// TestCommitGraphChain: positions count across layers, and a layer must
// name the layers below it.
func TestCommitGraphChain(t *testing.T) {
	entries, base := sampleGraph()
	g, err := ParseCommitGraph(base)
	if err != nil {
		t.Fatal(err)
	}
	var below []plumbing.Hash
	for i := range g.Len() {
		h, _ := g.Hash(i)
		below = append(below, h.Hash())
	}
	tip := graphEntry{hash: hashOf("tip"), tree: hashOf("t6"), parents: []plumbing.Hash{hashOf("octopus"), hashOf("c")}, time: 1<<33 + 30, level: 5}
	top := writeGraph([]graphEntry{tip}, below, [][]byte{trailer(base, SHA1Size)})
	chain, err := ParseCommitGraph(base, top)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, chain, append(entries, tip))

	otherBase := writeGraph(entries[:3], nil, nil)
	if _, err := ParseCommitGraph(otherBase, top); err == nil {
		t.Error("a layer was taken over a base it does not name")
	}
	if _, err := ParseCommitGraph(top); err == nil {
		t.Error("a layer with a base was taken alone")
	}
}

// TestCommitGraphRejectsDamage: damaged files are errors, at parse or at
// the lookup that meets the damage, never a panic or a wrong answer.
func TestCommitGraphRejectsDamage(t *testing.T) {
	_, file := sampleGraph()
	chunkOffset := func(f []byte, id string) int {
		for i := 8; i+12 <= len(f); i += 12 {
			if string(f[i:i+4]) == id {
				return int(binary.BigEndian.Uint64(f[i+4:]))
			}
		}
		t.Fatalf("no chunk %s", id)
		return 0
	}
	damage := map[string]func([]byte) []byte{
		"truncated":      func(f []byte) []byte { return f[:len(f)/2] },
		"empty":          func([]byte) []byte { return nil },
		"signature":      func(f []byte) []byte { f[0] = 'X'; return f },
		"version":        func(f []byte) []byte { f[4] = 2; return f },
		"SHA-256":        func(f []byte) []byte { f[5] = 2; return f },
		"claims a base":  func(f []byte) []byte { f[7] = 1; return f },
		"chunk past end": func(f []byte) []byte { binary.BigEndian.PutUint64(f[8+4:], uint64(len(f))); return f },
		"fanout falls": func(f []byte) []byte {
			binary.BigEndian.PutUint32(f[chunkOffset(f, "OIDF")+100*4:], 1000)
			return f
		},
	}
	for name, damage := range damage {
		if _, err := ParseCommitGraph(damage(bytes.Clone(file))); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	// Past its layer's end, a parent is damage to report at the lookup.
	f := bytes.Clone(file)
	binary.BigEndian.PutUint32(f[chunkOffset(f, "CDAT")+SHA1Size:], 6)
	g, err := ParseCommitGraph(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Commit(0, nil); !errors.Is(err, errBadGraph) {
		t.Errorf("parent out of range: %v", err)
	}
	if _, err := g.Commit(g.Len(), nil); err == nil {
		t.Error("a position past the end was read")
	}
}

// commitsWithParents writes commits whose parents are given, an octopus
// among them, the way `git merge` would not make in a test: with go-git's
// object storage.
func commitsWithParents(t *testing.T, r *gittest.Repo, n int) []plumbing.Hash {
	t.Helper()
	var commits []plumbing.Hash
	tree := &object.Tree{}
	enc := r.Git.Storer.NewEncodedObject()
	if err := tree.Encode(enc); err != nil {
		t.Fatal(err)
	}
	empty, err := r.Git.Storer.SetEncodedObject(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var parents []plumbing.Hash
		switch {
		case i == 0:
		case i%7 == 6 && i >= 4:
			parents = []plumbing.Hash{commits[i-1], commits[i-2], commits[i-3], commits[i-4]}
		case i%3 == 2:
			parents = []plumbing.Hash{commits[i-1], commits[i-2]}
		default:
			parents = []plumbing.Hash{commits[i-1]}
		}
		when := gittest.Epoch.Add(time.Duration(i) * time.Hour)
		if i%5 == 4 {
			when = when.Add(-30 * time.Hour) // skewed: a commit-graph keeps dates as they are
		}
		sig := object.Signature{Name: "Ada", Email: "ada@example.com", When: when}
		c := &object.Commit{Author: sig, Committer: sig, Message: fmt.Sprintf("commit %d\n", i), TreeHash: empty, ParentHashes: parents}
		enc := r.Git.Storer.NewEncodedObject()
		if err := c.Encode(enc); err != nil {
			t.Fatal(err)
		}
		h, err := r.Git.Storer.SetEncodedObject(enc)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
	}
	ref := plumbing.NewHashReference("refs/heads/main", commits[len(commits)-1])
	if err := r.Git.Storer.SetReference(ref); err != nil {
		t.Fatal(err)
	}
	return commits
}

// checkAgainstObjects compares what the graph holds of each commit with
// the commit object itself.
func checkAgainstObjects(t *testing.T, r *gittest.Repo, g *CommitGraph, commits []plumbing.Hash) {
	t.Helper()
	levels := map[plumbing.Hash]uint32{}
	for _, h := range commits {
		want, err := object.GetCommit(r.Git.Storer, h)
		if err != nil {
			t.Fatal(err)
		}
		pos, ok := g.Find(IDFromHash(h))
		if !ok {
			t.Fatalf("%s is not in the graph", h)
		}
		c, err := g.Commit(pos, nil)
		if err != nil {
			t.Fatal(err)
		}
		var parents []plumbing.Hash
		level := uint32(1)
		for _, p := range c.Parents {
			ph, err := g.Hash(p)
			if err != nil {
				t.Fatal(err)
			}
			parents = append(parents, ph.Hash())
			level = max(level, levels[ph.Hash()]+1)
		}
		levels[h] = c.Level
		if c.Tree != IDFromHash(want.TreeHash) || c.Time != want.Committer.When.Unix() || !slices.Equal(parents, want.ParentHashes) || c.Level != level {
			t.Errorf("%s: graph has tree %s time %d parents %v level %d; the commit has tree %s time %d parents %v (level %d)",
				h, c.Tree, c.Time, parents, c.Level, want.TreeHash, want.Committer.When.Unix(), want.ParentHashes, level)
		}
	}
}

// TestCommitGraphReadsGitsFiles reads what git writes: one file, then a
// chain of two layers after more commits.
func TestCommitGraphReadsGitsFiles(t *testing.T) {
	needGit(t)
	r := gittest.New(t)
	commits := commitsWithParents(t, r, 30)
	objects := filepath.Join(r.Dir, ".git", "objects")
	if _, err := OpenCommitGraph(objects); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no commit-graph yet: %v", err)
	}
	gitRun(t, r.Dir, "", "commit-graph", "write", "--reachable")
	g, err := OpenCommitGraph(objects)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstObjects(t, r, g, commits)
	g.Close()

	// Split: the first layer, then the commits after it on a second.
	os.Remove(filepath.Join(objects, "info", "commit-graph"))
	gitRun(t, r.Dir, "", "commit-graph", "write", "--reachable", "--split=no-merge")
	all := commitsWithParents(t, r, 45) // the same 30, and 15 after them
	gitRun(t, r.Dir, "", "commit-graph", "write", "--reachable", "--split=no-merge")
	chain, err := os.ReadFile(filepath.Join(objects, "info", "commit-graphs", "commit-graph-chain"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(chain))); n != 2 {
		t.Fatalf("git wrote a chain of %d layers, want 2", n)
	}
	g, err = OpenCommitGraph(objects)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if len(g.layers) != 2 {
		t.Fatalf("read %d layers", len(g.layers))
	}
	checkAgainstObjects(t, r, g, all)
}
