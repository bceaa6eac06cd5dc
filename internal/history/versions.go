package history

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// Version is the release a commit first shipped in: a tag whose history
// holds it.
type Version struct {
	Tag    string
	Commit string    // the commit the tag names
	Date   time.Time // the tag's, for an annotated tag; else its commit's
}

// Versions is VersionsMatching over every tag.
func (r *Repo) Versions(ctx context.Context, commits []string) (map[string]Version, error) {
	return r.VersionsMatching(ctx, commits, nil)
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
