package history

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WalkOptions selects commits the way `git log` does.
type WalkOptions struct {
	// Revs are revisions as `git rev-list` reads them (REV, ^REV, A..B,
	// A...B, X^!, X^@...), HEAD when empty; ignored with All.
	Revs []string
	// Now is the time relative reflog dates count back from (zero: now).
	Now           time.Time
	All           bool // HEAD and every branch, tag and remote branch
	Since, Until  time.Time
	MaxCommits    int
	IncludeMerges bool
	Paths         Pathspec
}

// Walk calls fn for each selected commit, newest first by committer date
// like `git log`. It stops at the first error fn returns.
func (r *Repo) Walk(ctx context.Context, opts WalkOptions, fn func(Commit) error) error {
	starts, hidden, _, err := r.resolve(opts)
	if err != nil {
		return err
	}
	excluded, err := r.ancestors(ctx, hidden)
	if err != nil {
		return err
	}
	q := &commitQueue{}
	// The tree of each commit read, zero for those missing: a commit's diff
	// needs its parent's tree, read here already.
	seen := make(map[plumbing.Hash]plumbing.Hash)
	push := func(h plumbing.Hash) error {
		if _, ok := seen[h]; ok || excluded[h] {
			return nil
		}
		seen[h] = plumbing.ZeroHash
		c, err := r.commitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return nil // beyond a shallow clone's boundary
		}
		if err != nil {
			return fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", r.path, h, err)
		}
		seen[h] = c.TreeHash
		heap.Push(q, queued{c, len(seen)})
		return nil
	}
	for _, h := range starts {
		if err := push(h); err != nil {
			return err
		}
	}
	emitted := 0
	for q.Len() > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := heap.Pop(q).(queued).Commit
		// The queue pops newest first, so once the newest left is older than
		// --since nothing older can qualify (git makes the same bet).
		if !opts.Since.IsZero() && c.Committer.When.Before(opts.Since) {
			break
		}
		for _, p := range c.ParentHashes {
			if err := push(p); err != nil {
				return err
			}
		}
		if !opts.Until.IsZero() && c.Committer.When.After(opts.Until) {
			continue
		}
		if c.NumParents() > 1 && !opts.IncludeMerges {
			continue
		}
		commit := newCommit(c)
		if len(c.ParentHashes) > 0 {
			commit.parentTree = seen[c.ParentHashes[0]]
		}
		if !opts.Paths.Empty() {
			touches, err := r.touches(ctx, commit, opts.Paths)
			if err != nil {
				return err
			}
			if !touches {
				continue
			}
		}
		// A parent read above is here; one not read was excluded or is missing.
		if len(c.ParentHashes) > 0 && commit.parentTree.IsZero() {
			if ok, err := r.hasCommit(c.ParentHashes[0]); !ok && err == nil {
				commit.Boundary = true
			}
		}
		if err := fn(commit); err != nil {
			return err
		}
		emitted++
		if opts.MaxCommits > 0 && emitted >= opts.MaxCommits {
			break
		}
	}
	return nil
}

// ancestors returns every commit reachable from hidden, the set A..B leaves out.
func (r *Repo) ancestors(ctx context.Context, hidden []plumbing.Hash) (map[plumbing.Hash]bool, error) {
	set := make(map[plumbing.Hash]bool)
	if len(hidden) == 0 {
		return set, nil
	}
	stack := append([]plumbing.Hash(nil), hidden...)
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if set[h] {
			continue
		}
		set[h] = true
		c, err := r.commitObject(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", r.path, h, err)
		}
		stack = append(stack, c.ParentHashes...)
	}
	return set, nil
}

// touches reports whether c changes a path the pathspec selects, compared
// with its first parent, as `git log -- PATH` decides.
func (r *Repo) touches(ctx context.Context, c Commit, paths Pathspec) (bool, error) {
	changes, err := r.changes(ctx, c, false)
	if err != nil {
		return false, err
	}
	for _, ch := range changes {
		if paths.Match(ch.from.path) || paths.Match(ch.to.path) {
			return true, nil
		}
	}
	return false, nil
}

type queued struct {
	*object.Commit
	order int // discovery order breaks ties between equal dates, keeping output stable
}

// commitQueue orders commits newest first by committer date.
type commitQueue []queued

func (q commitQueue) Len() int { return len(q) }
func (q commitQueue) Less(i, j int) bool {
	ti, tj := q[i].Committer.When, q[j].Committer.When
	if ti.Equal(tj) {
		return q[i].order < q[j].order
	}
	return ti.After(tj)
}
func (q commitQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *commitQueue) Push(x any)   { *q = append(*q, x.(queued)) }
func (q *commitQueue) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
