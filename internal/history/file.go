package history

import (
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// FileAt reads the file at path in the tree of the commit rev names
// (HEAD, a tag, a hash), as git show REV:PATH does: a repository's own
// settings, such as .github/release.yml. ok is false when there is no
// such commit or file, or when the blob was never fetched into a partial
// clone. A file of more than max bytes is an error naming both sizes.
func (r *Repo) FileAt(rev, path string, max int64) (data []byte, ok bool, err error) {
	commit, err := r.oneCommit(rev)
	if err != nil {
		return nil, false, nil
	}
	c, err := r.commitObject(commit)
	if err != nil {
		return nil, false, fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", r.path, commit, err)
	}
	blob, found, err := r.pathIn(c.tree, path)
	if err != nil || !found {
		return nil, false, err
	}
	obj, err := r.readObject(blob, plumbing.BlobObject, max)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s: %s:%s: %w", r.path, rev, path, err)
	}
	if obj.Data == nil && obj.Size > 0 {
		return nil, false, fmt.Errorf("%s: %s:%s is %d bytes, over the %d digest reads", r.path, rev, path, obj.Size, max)
	}
	return obj.Data, true, nil
}
