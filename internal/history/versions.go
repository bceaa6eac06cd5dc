package history

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gitobjects"
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
	selected := make(map[gitobjects.ID]bool, len(commits))
	for _, c := range commits {
		selected[gitobjects.MustParseID(c)] = true
	}
	type tag struct {
		name   string
		commit gitobjects.ID
		when   time.Time // the commit's, to order tags
		date   time.Time
	}
	var tags []tag
	var oldest time.Time
	all, err := r.references()
	if err != nil {
		return nil, fmt.Errorf("%s: list tags: %w", r.path, err)
	}
	var refs []refEntry
	for _, ref := range all {
		if plumbing.ReferenceName(ref.name).IsTag() && ref.target == "" {
			refs = append(refs, ref)
		}
	}
	// Parents and dates come from the commit-graph or the commits' headers
	// alone: a whole history's tags walk thousands of commits.
	g := newCommitNodes(r)
	parsed := func(h gitobjects.ID) (nodeID, bool, error) {
		id := g.node(h)
		if err := g.parse(id); err != nil {
			return id, false, err
		}
		g.forget(id)
		return id, g.nodes[id].flags&nodeMissing == 0, nil
	}
	for _, c := range commits {
		id, ok, err := parsed(gitobjects.MustParseID(c))
		if err != nil {
			return nil, err
		}
		if when := time.Unix(g.nodes[id].date, 0); ok && (oldest.IsZero() || when.Before(oldest)) {
			oldest = when
		}
	}
	cutoff := oldest.Add(-versionSlop)
	for _, ref := range refs {
		commit, date, err := r.tagTarget(ref.hash)
		if err != nil {
			continue // a tag of a tree, a blob or a missing object
		}
		c, err := r.commitObject(commit)
		if err != nil {
			return nil, err
		}
		if c.meta.Committer.When.Before(cutoff) {
			continue // it releases nothing selected
		}
		if date.IsZero() {
			date = c.meta.Committer.When
		}
		tags = append(tags, tag{name: plumbing.ReferenceName(ref.name).Short(), commit: commit, when: c.meta.Committer.When, date: date})
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
	reached := map[nodeID]bool{}
	for _, t := range tags {
		v := Version{Tag: t.name, Date: t.date}
		stack := []nodeID{g.node(t.commit)}
		for len(stack) > 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			id := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if reached[id] {
				continue
			}
			reached[id] = true
			h := g.nodes[id].hash
			_, ok, err := parsed(h)
			if err != nil {
				return nil, err
			}
			if !ok || time.Unix(g.nodes[id].date, 0).Before(cutoff) {
				continue // beyond a shallow clone's edge, or older than anything selected
			}
			if selected[h] {
				out[h.String()] = v
			}
			stack = append(stack, g.parentsOf(id)...)
		}
	}
	return out, nil
}

// tagTarget peels a tag reference to its commit, with the date of the
// first annotated tag met (zero for a lightweight one).
func (r *Repo) tagTarget(id gitobjects.ID) (gitobjects.ID, time.Time, error) {
	if r.git == nil {
		return r.peel(id)
	}
	h := id.Hash()
	var date time.Time
	for range 16 {
		r.mu.Lock()
		obj, err := r.git.Object(plumbing.AnyObject, h)
		r.mu.Unlock()
		if err != nil {
			return gitobjects.ID{}, date, err
		}
		switch o := obj.(type) {
		case *object.Commit:
			return gitobjects.IDFromHash(o.Hash), date, nil
		case *object.Tag:
			if date.IsZero() {
				date = o.Tagger.When
			}
			h = o.Target
		default:
			return gitobjects.ID{}, date, fmt.Errorf("%s is a %s", h, obj.Type())
		}
	}
	return gitobjects.ID{}, date, fmt.Errorf("%s: tag chain too deep", h)
}

// RemoteURL is the fetch URL of a remote ("" when there is none).
func (r *Repo) RemoteURL(name string) string {
	if r.git == nil {
		if r.config == nil {
			return ""
		}
		for _, sub := range r.config.Section("remote").Subsections {
			if urls := sub.Options.GetAll("url"); sub.Name == name && len(urls) > 0 {
				return urls[0]
			}
		}
		return ""
	}
	cfg, err := r.git.Config()
	if err != nil {
		return ""
	}
	if rem, ok := cfg.Remotes[name]; ok && len(rem.URLs) > 0 {
		return rem.URLs[0]
	}
	return ""
}
