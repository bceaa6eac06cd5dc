package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Version is the release a commit first shipped in: a tag pointing at one
// of the commits a run selected.
type Version struct {
	Tag  string
	Date time.Time // the tag's, for an annotated tag; else its commit's
}

// versionSlop is how far back, before the oldest selected commit, the
// search for a tag's commits goes: commits are dated by their authors'
// clocks, which can be off by a day.
const versionSlop = 24 * time.Hour

// Versions assigns each of the commits (hashes a walk gave) the oldest tag
// that releases it: tags, oldest first by their commits' dates, each claim
// the commits their history reaches that an older one did not. A tag on a
// merge the walk left out counts as well as one on a selected commit.
// Commits no tag reaches are unreleased and absent from the map.
func (r *Repo) Versions(ctx context.Context, commits []string) (map[string]Version, error) {
	selected := make(map[plumbing.Hash]bool, len(commits))
	for _, c := range commits {
		selected[plumbing.NewHash(c)] = true
	}
	type tag struct {
		name   string
		commit plumbing.Hash
		when   time.Time // the commit's, to order tags
		date   time.Time
	}
	var tags []tag
	var oldest time.Time
	r.mu.Lock()
	iter, err := r.git.Storer.IterReferences()
	var refs []*plumbing.Reference
	if err == nil {
		err = iter.ForEach(func(ref *plumbing.Reference) error {
			if ref.Name().IsTag() && ref.Type() == plumbing.HashReference {
				refs = append(refs, ref)
			}
			return nil
		})
	}
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: list tags: %w", r.path, err)
	}
	for _, c := range commits {
		if cm, err := r.commitObject(plumbing.NewHash(c)); err == nil && (oldest.IsZero() || cm.Committer.When.Before(oldest)) {
			oldest = cm.Committer.When
		}
	}
	cutoff := oldest.Add(-versionSlop)
	for _, ref := range refs {
		commit, date, err := r.tagTarget(ref.Hash())
		if err != nil {
			continue // a tag of a tree, a blob or a missing object
		}
		c, err := r.commitObject(commit)
		if err != nil {
			return nil, err
		}
		if c.Committer.When.Before(cutoff) {
			continue // it releases nothing selected
		}
		if date.IsZero() {
			date = c.Committer.When
		}
		tags = append(tags, tag{name: ref.Name().Short(), commit: commit, when: c.Committer.When, date: date})
	}
	if len(tags) == 0 {
		return nil, nil
	}
	// Oldest first; two tags of one commit: the one sorting first by name
	// (v1.0.0 before v1.0.0-final), as a person would cite it.
	slices.SortStableFunc(tags, func(a, b tag) int {
		if c := a.when.Compare(b.when); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	out := make(map[string]Version, len(commits))
	reached := map[plumbing.Hash]bool{}
	for _, t := range tags {
		v := Version{Tag: t.name, Date: t.date}
		stack := []plumbing.Hash{t.commit}
		for len(stack) > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if reached[h] {
				continue
			}
			reached[h] = true
			c, err := r.commitObject(h)
			if errors.Is(err, plumbing.ErrObjectNotFound) {
				continue // beyond a shallow clone's edge
			}
			if err != nil {
				return nil, err
			}
			if c.Committer.When.Before(cutoff) {
				continue
			}
			if selected[h] {
				out[h.String()] = v
			}
			stack = append(stack, c.ParentHashes...)
		}
	}
	return out, nil
}

// tagTarget peels a tag reference to its commit, with the date of the
// first annotated tag met (zero for a lightweight one).
func (r *Repo) tagTarget(h plumbing.Hash) (plumbing.Hash, time.Time, error) {
	var date time.Time
	for range 16 {
		r.mu.Lock()
		obj, err := r.git.Object(plumbing.AnyObject, h)
		r.mu.Unlock()
		if err != nil {
			return plumbing.ZeroHash, date, err
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o.Hash, date, nil
		case *object.Tag:
			if date.IsZero() {
				date = o.Tagger.When
			}
			h = o.Target
		default:
			return plumbing.ZeroHash, date, fmt.Errorf("%s is a %s", h, obj.Type())
		}
	}
	return plumbing.ZeroHash, date, fmt.Errorf("%s: tag chain too deep", h)
}

// RemoteURL is the fetch URL of a remote ("" when there is none).
func (r *Repo) RemoteURL(name string) string {
	cfg, err := r.git.Config()
	if err != nil {
		return ""
	}
	if rem, ok := cfg.Remotes[name]; ok && len(rem.URLs) > 0 {
		return rem.URLs[0]
	}
	return ""
}
