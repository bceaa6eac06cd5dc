package history

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/digest-cli/digest/internal/revision"
)

// Resolve checks that the revisions the options name resolve here, so that
// a run over several repositories can fail on a mistyped --rev before it
// pays for any of them, and returns what git would warn of (an ambiguous
// name, a reflog that does not go back as far as asked). A repository
// without commits is ErrEmpty.
func (r *Repo) Resolve(opts WalkOptions) (warnings []string, err error) {
	_, _, warnings, err = r.resolve(opts)
	return warnings, err
}

// resolve turns the options into commits to start from and commits whose
// ancestry is excluded (the A of A..B, the merge bases of A...B).
func (r *Repo) resolve(opts WalkOptions) (starts, hidden []gitobjects.ID, warnings []string, err error) {
	if opts.All {
		starts, err = r.allRefs()
		return starts, nil, nil, err
	}
	if len(opts.Revs) == 0 {
		h, err := r.head()
		if err != nil {
			return nil, nil, nil, err
		}
		return []gitobjects.ID{h}, nil, nil, nil
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	sel, err := revision.Resolve(&source{r: r}, opts.Revs, revision.Options{Now: now, HexDigits: 2 * r.hashSize})
	if err != nil {
		if _, headErr := r.head(); errors.Is(headErr, ErrEmpty) && onlyHead(opts.Revs) {
			return nil, nil, nil, ErrEmpty
		}
		return nil, nil, nil, fmt.Errorf("%s: %w", r.path, err)
	}
	for _, h := range sel.Include {
		starts = append(starts, gitobjects.MustParseID(h))
	}
	for _, h := range sel.Exclude {
		hidden = append(hidden, gitobjects.MustParseID(h))
	}
	return starts, hidden, sel.Warnings, nil
}

// allRefs is --all: HEAD and every branch, tag and remote branch.
func (r *Repo) allRefs() ([]gitobjects.ID, error) {
	var starts []gitobjects.ID
	if h, err := r.head(); err == nil {
		starts = append(starts, h) // a detached HEAD is in no ref
	}
	refs, err := r.references()
	if err != nil {
		return nil, fmt.Errorf("%s: list references: %w", r.path, err)
	}
	for _, ref := range refs {
		name := plumbing.ReferenceName(ref.name)
		if ref.target != "" || !(name.IsBranch() || name.IsTag() || name.IsRemote()) {
			continue
		}
		if h, err := r.peelToCommit(ref.hash); err == nil {
			starts = append(starts, h)
		}
	}
	if len(starts) == 0 {
		return nil, ErrEmpty
	}
	return starts, nil
}

// peelToCommit follows annotated tags down to the commit they name.
func (r *Repo) peelToCommit(id gitobjects.ID) (gitobjects.ID, error) {
	if r.git == nil {
		commit, _, err := r.peel(id)
		return commit, err
	}
	h := id.Hash()
	for range 16 {
		r.mu.Lock()
		obj, err := r.git.Object(plumbing.AnyObject, h)
		r.mu.Unlock()
		if err != nil {
			return gitobjects.ID{}, err
		}
		switch o := obj.(type) {
		case *object.Commit:
			return gitobjects.IDFromHash(o.Hash), nil
		case *object.Tag:
			h = o.Target
		default:
			return gitobjects.ID{}, fmt.Errorf("%s is a %s, not a commit", h, obj.Type())
		}
	}
	return gitobjects.ID{}, fmt.Errorf("%s: tag chain too deep", h)
}

// onlyHead reports whether revs name HEAD alone, which in a repository
// without commits selects nothing rather than something unknown.
func onlyHead(revs []string) bool {
	for _, rev := range revs {
		if rev != "HEAD" && rev != "@" {
			return false
		}
	}
	return true
}

// Unborn reports, when HEAD names a branch with no commit yet (after git
// checkout --orphan, or a clone whose default branch is empty), that branch
// and another that holds commits: main or master, else a local branch,
// else a tag, else a remote branch, the first by name ("" when the
// repository has none). Such a
// repository is not empty, and saying so would send its user looking for
// commits that are there.
func (r *Repo) Unborn() (branch, other string, ok bool) {
	_, name, found, err := r.resolveRef("HEAD")
	if found || err != nil {
		return "", "", false
	}
	refs, err := r.references()
	if err != nil {
		return plumbing.ReferenceName(name).Short(), "", true
	}
	slices.SortFunc(refs, func(a, b refEntry) int { return strings.Compare(a.name, b.name) })
	for _, kind := range []string{"refs/heads/main", "refs/heads/master", "refs/heads/", "refs/tags/", "refs/remotes/"} {
		for _, ref := range refs {
			if ref.target != "" || !strings.HasPrefix(ref.name, kind) || !strings.HasSuffix(kind, "/") && ref.name != kind {
				continue
			}
			if _, err := r.peelToCommit(ref.hash); err == nil {
				return plumbing.ReferenceName(name).Short(), plumbing.ReferenceName(ref.name).Short(), true
			}
		}
	}
	return plumbing.ReferenceName(name).Short(), "", true
}
