// Package gittest builds real git repositories with go-git for tests, with
// fixed authors and clocks so that commit hashes, and so golden files, are
// the same on every machine.
package gittest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Epoch is the time of a repository's first commit; each commit is an hour later.
var Epoch = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// Repo is a repository with a work tree under t.TempDir().
type Repo struct {
	t     testing.TB
	Dir   string
	Git   *git.Repository
	wt    *git.Worktree
	Clock time.Time
	// AuthorName and AuthorEmail sign the next commits; empty: Ada
	// Lovelace <ada@example.com>.
	AuthorName, AuthorEmail string
}

// New initialises an empty repository whose default branch is main.
func New(t testing.TB) *Repo {
	t.Helper()
	return NewAt(t, t.TempDir())
}

// NewAt initialises an empty repository in dir.
func NewAt(t testing.TB, dir string) *Repo {
	t.Helper()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{t: t, Dir: dir, Git: r, wt: wt, Clock: Epoch}
}

// Write creates or replaces a file in the work tree.
func (r *Repo) Write(path string, content string) *Repo {
	return r.WriteBytes(path, []byte(content))
}

// WriteBytes creates or replaces a file with raw bytes.
func (r *Repo) WriteBytes(path string, content []byte) *Repo {
	r.t.Helper()
	full := filepath.Join(r.Dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(full, content, 0o644); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Remove deletes a file from the work tree.
func (r *Repo) Remove(path string) *Repo {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.Dir, filepath.FromSlash(path))); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Move renames a file in the work tree.
func (r *Repo) Move(from, to string) *Repo {
	r.t.Helper()
	dst := filepath.Join(r.Dir, filepath.FromSlash(to))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(r.Dir, filepath.FromSlash(from)), dst); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Commit stages every change and commits it, returning the full hash.
func (r *Repo) Commit(msg string) string {
	r.t.Helper()
	return r.commit(msg, nil)
}

// Merge commits the work tree as a merge of HEAD and other.
func (r *Repo) Merge(msg, other string) string {
	r.t.Helper()
	head, err := r.Git.Head()
	if err != nil {
		r.t.Fatal(err)
	}
	return r.commit(msg, []plumbing.Hash{head.Hash(), plumbing.NewHash(other)})
}

func (r *Repo) commit(msg string, parents []plumbing.Hash) string {
	if err := r.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		r.t.Fatal(err)
	}
	sig := &object.Signature{Name: "Ada Lovelace", Email: "ada@example.com", When: r.Clock}
	if r.AuthorName != "" || r.AuthorEmail != "" {
		sig.Name, sig.Email = r.AuthorName, r.AuthorEmail
	}
	h, err := r.wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, Parents: parents, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatal(err)
	}
	r.Clock = r.Clock.Add(time.Hour)
	return h.String()
}

// Branch creates a branch at HEAD and checks it out.
func (r *Repo) Branch(name string) *Repo {
	r.t.Helper()
	if err := r.wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(name), Create: true}); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Checkout switches to an existing branch.
func (r *Repo) Checkout(name string) *Repo {
	r.t.Helper()
	if err := r.wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(name)}); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Tag puts a lightweight tag on HEAD.
func (r *Repo) Tag(name string) *Repo {
	r.t.Helper()
	head, err := r.Git.Head()
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.Git.CreateTag(name, head.Hash(), nil); err != nil {
		r.t.Fatal(err)
	}
	return r
}

// Clone clones the repository into a new directory under t.TempDir().
func (r *Repo) Clone() *Repo {
	r.t.Helper()
	dir := r.t.TempDir()
	c, err := git.PlainClone(dir, false, &git.CloneOptions{URL: r.Dir})
	if err != nil {
		r.t.Fatal(err)
	}
	wt, err := c.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	return &Repo{t: r.t, Dir: dir, Git: c, wt: wt, Clock: r.Clock}
}

// AddRemoteBranch records other as the remote-tracking branch origin/name,
// as a fetch would, for origin/main..HEAD style ranges.
func (r *Repo) AddRemoteBranch(name, hash string) *Repo {
	r.t.Helper()
	if _, err := r.Git.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{r.Dir}}); err != nil && err != git.ErrRemoteExists {
		r.t.Fatal(err)
	}
	ref := plumbing.NewHashReference(plumbing.NewRemoteReferenceName("origin", name), plumbing.NewHash(hash))
	if err := r.Git.Storer.SetReference(ref); err != nil {
		r.t.Fatal(err)
	}
	return r
}
