package history

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

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
