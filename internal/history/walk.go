package history

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// WalkOptions selects commits the way `git log` does.
type WalkOptions struct {
	Rev           string // "", "REV" or "A..B"; ignored with All
	All           bool   // HEAD and every branch, tag and remote branch
	Since, Until  time.Time
	MaxCommits    int
	IncludeMerges bool
	Paths         Pathspec
}

// Walk calls fn for each selected commit, newest first by committer date
// like `git log`. It stops at the first error fn returns.
func (r *Repo) Walk(ctx context.Context, opts WalkOptions, fn func(Commit) error) error {
	starts, hidden, err := r.resolve(opts)
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

// Resolve checks that the revisions the options name exist here, so that a
// run over several repositories can fail on a mistyped --rev before it
// pays for any of them. A repository without commits is ErrEmpty.
func (r *Repo) Resolve(opts WalkOptions) error {
	_, _, err := r.resolve(opts)
	return err
}

// resolve turns the options into commits to start from and commits whose
// ancestry is excluded (the A of A..B).
func (r *Repo) resolve(opts WalkOptions) (starts, hidden []plumbing.Hash, err error) {
	if opts.All {
		if h, err := r.head(); err == nil {
			starts = append(starts, h) // a detached HEAD is in no ref
		}
		refs, err := r.git.References()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: list references: %w", r.path, err)
		}
		err = refs.ForEach(func(ref *plumbing.Reference) error {
			name := ref.Name()
			if ref.Type() != plumbing.HashReference || !(name.IsBranch() || name.IsTag() || name.IsRemote()) {
				return nil
			}
			h, err := r.peelToCommit(ref.Hash())
			if err == nil {
				starts = append(starts, h)
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		if len(starts) == 0 {
			return nil, nil, ErrEmpty
		}
		return starts, nil, nil
	}
	if opts.Rev == "" {
		h, err := r.head()
		if err != nil {
			return nil, nil, err
		}
		return []plumbing.Hash{h}, nil, nil
	}
	from, to, isRange := strings.Cut(opts.Rev, "..")
	if !isRange {
		h, err := r.revision(opts.Rev)
		return []plumbing.Hash{h}, nil, err
	}
	if strings.HasPrefix(to, ".") {
		return nil, nil, fmt.Errorf("--rev %q: symmetric ranges (A...B) are not supported. Try: A..B", opts.Rev)
	}
	if from == "" {
		from = "HEAD"
	}
	if to == "" {
		to = "HEAD"
	}
	a, err := r.revision(from)
	if err != nil {
		return nil, nil, err
	}
	b, err := r.revision(to)
	if err != nil {
		return nil, nil, err
	}
	return []plumbing.Hash{b}, []plumbing.Hash{a}, nil
}

func (r *Repo) revision(rev string) (plumbing.Hash, error) {
	h, err := r.git.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		if rev == "HEAD" {
			if _, headErr := r.head(); errors.Is(headErr, ErrEmpty) {
				return plumbing.ZeroHash, ErrEmpty
			}
		}
		return plumbing.ZeroHash, fmt.Errorf("%s: unknown revision %q. Try: a branch, tag or commit that exists here (git branch -a)", r.path, rev)
	}
	return r.peelToCommit(*h)
}

// peelToCommit follows annotated tags down to the commit they name.
func (r *Repo) peelToCommit(h plumbing.Hash) (plumbing.Hash, error) {
	for range 16 {
		r.mu.Lock()
		obj, err := r.git.Object(plumbing.AnyObject, h)
		r.mu.Unlock()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o.Hash, nil
		case *object.Tag:
			h = o.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%s: tag chain too deep", h)
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
