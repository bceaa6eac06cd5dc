package gitobjects

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sha256Repo makes a repository with `git init --object-format=sha256` and
// commits to it, a file changing a little in each so that packs hold
// deltas; packOptions pack what is there (nil: nothing packed), and two
// more commits stay loose.
func sha256Repo(t *testing.T, packOptions []string) string {
	t.Helper()
	dir := t.TempDir()
	gitRun(t, dir, "", "init", "-q", "--object-format=sha256")
	gitRun(t, dir, "", "config", "user.name", "Ada")
	gitRun(t, dir, "", "config", "user.email", "ada@example.com")
	lines := make([]string, 200)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of a file that changes a little in each commit", i)
	}
	commit := func(c int) {
		lines[(c*37)%len(lines)] = fmt.Sprintf("changed in commit %d", c)
		os.MkdirAll(filepath.Join(dir, "dir"), 0o755)
		os.WriteFile(filepath.Join(dir, "a.txt"), []byte(strings.Join(lines, "\n")), 0o644)
		os.WriteFile(filepath.Join(dir, "dir", fmt.Sprintf("f%d.txt", c%3)), []byte(strings.Join(lines[c:c+30], "\n")), 0o644)
		gitRun(t, dir, "", "add", "-A")
		gitRun(t, dir, "", "commit", "-q", "-m", fmt.Sprintf("commit %d", c))
	}
	for c := range 20 {
		commit(c)
		if c == 10 {
			gitRun(t, dir, "", "checkout", "-q", "-b", "side", "HEAD~3")
			os.WriteFile(filepath.Join(dir, "side.txt"), []byte("side\n"), 0o644)
			gitRun(t, dir, "", "add", "side.txt")
			gitRun(t, dir, "", "commit", "-q", "-m", "side")
			gitRun(t, dir, "", "checkout", "-q", "-")
			gitRun(t, dir, "", "merge", "-q", "--no-ff", "-m", "merge side", "side")
		}
	}
	if packOptions != nil {
		objects := gitRun(t, dir, "", "rev-list", "--objects", "--all")
		gitRun(t, dir, objects, append(append([]string{"-c", "pack.writeReverseIndex=true", "pack-objects", "-q"}, packOptions...), ".git/objects/pack/pack")...)
		gitRun(t, dir, "", "prune-packed")
		gitRun(t, dir, "", "commit-graph", "write", "--reachable")
	}
	commit(20)
	commit(21)
	return dir
}

// gitObjects reads every object of a repository through `git cat-file`.
func gitObjects(t *testing.T, dir string) map[string]Object {
	t.Helper()
	out := gitRun(t, dir, "", "cat-file", "--batch-all-objects", "--batch")
	objects := map[string]Object{}
	r := bufio.NewReader(strings.NewReader(out))
	for {
		header, err := r.ReadString('\n')
		if err == io.EOF {
			return objects
		}
		fields := strings.Fields(header)
		if err != nil || len(fields) != 3 {
			t.Fatalf("cat-file header %q: %v", header, err)
		}
		size, _ := strconv.Atoi(fields[2])
		data := make([]byte, size+1)
		if _, err := io.ReadFull(r, data); err != nil {
			t.Fatal(err)
		}
		obj := Object{Size: int64(size), Data: data[:size]}
		switch fields[1] {
		case "commit":
			obj.Type = 1
		case "tree":
			obj.Type = 2
		case "blob":
			obj.Type = 3
		case "tag":
			obj.Type = 4
		}
		objects[fields[0]] = obj
	}
}

// TestSHA256ObjectsReadAsGitReadsThem: in a SHA-256 repository every
// object, loose or packed (index v2 with 32-byte names, a reverse index,
// offset deltas or deltas naming 32-byte bases), reads as git reads it,
// and abbreviated names find it.
func TestSHA256ObjectsReadAsGitReadsThem(t *testing.T) {
	for _, tt := range []struct {
		name    string
		options []string
	}{{"loose", nil}, {"offset deltas", []string{}}, {"ref deltas", []string{"--no-delta-base-offset"}}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := sha256Repo(t, tt.options)
			db, err := OpenFormat(filepath.Join(dir, ".git", "objects"), 1<<20, SHA256Size)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if revs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.rev")); tt.options != nil && (db.PackedCount() == 0 || len(revs) == 0) {
				t.Fatalf("packed %d objects, with reverse indexes %v", db.PackedCount(), revs)
			}
			for _, p := range db.packs {
				if p.rev == nil {
					t.Errorf("%s: its reverse index, with a 32-byte trailer, was not taken", p.name)
				}
			}
			for name, want := range gitObjects(t, dir) {
				id, err := ParseID(name)
				if err != nil {
					t.Fatal(err)
				}
				got, err := db.Read(id)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got.Type != want.Type || !bytes.Equal(got.Data, want.Data) {
					t.Fatalf("%s: got a %s of %d bytes, want a %s of %d", name, got.Type, len(got.Data), want.Type, len(want.Data))
				}
				if !db.Has(id) || id.String() != name {
					t.Fatalf("%s: Has %v, String %s", name, db.Has(id), id)
				}
				found, err := db.WithPrefix(strings.ToUpper(name[:12]), 10)
				if err != nil || len(found) != 1 || found[0] != id {
					t.Fatalf("WithPrefix(%s) = %v, %v", name[:12], found, err)
				}
			}
			if _, err := db.WithPrefix(strings.Repeat("a", 65), 1); err == nil {
				t.Error("a 65-digit prefix was accepted")
			}
		})
	}
}

// TestSHA256CommitGraph: a commit-graph of hash version 2 gives each
// commit's tree and parents as git's own log does.
func TestSHA256CommitGraph(t *testing.T) {
	dir := sha256Repo(t, []string{})
	g, err := OpenCommitGraph(filepath.Join(dir, ".git", "objects"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	inGraph := 0
	for _, line := range strings.Split(strings.TrimSpace(gitRun(t, dir, "", "log", "--all", "--format=%H %T %P")), "\n") {
		fields := strings.Fields(line)
		pos, ok := g.Find(MustParseID(fields[0]))
		if !ok {
			continue // the loose commits made after the graph
		}
		inGraph++
		c, err := g.Commit(pos, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{fields[0], c.Tree.String()}
		for _, p := range c.Parents {
			h, err := g.Hash(p)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, h.String())
		}
		if line = strings.Join(fields, " "); strings.Join(got, " ") != line {
			t.Errorf("commit-graph: %s\n           git: %s", strings.Join(got, " "), line)
		}
	}
	if inGraph != int(g.Len()) || inGraph < 20 {
		t.Errorf("%d commits found in a graph of %d", inGraph, g.Len())
	}
}
