package history

import (
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// decodedCommit is a commit read whole, in either object format.
type decodedCommit struct {
	hash    gitobjects.ID
	tree    gitobjects.ID
	parents []gitobjects.ID
	// meta holds the authors, their dates and the message; its hashes are
	// not set, since go-git's hashes hold SHA-1 names only.
	meta *object.Commit
}

// sha1TreeLine stands in for a commit's own tree and parent lines when
// go-git decodes the rest: go-git refuses any name but 40 hex digits, and
// the names are read by parseCommitIDs already.
var sha1TreeLine = []byte("tree " + plumbing.ZeroHash.String() + "\n")

// decodeCommit reads a commit's names itself and leaves its signatures and
// message to go-git's decoder, which knows their irregular forms (missing
// e-mail addresses, odd time zones, signed commits' continuation lines).
// One path for both object formats: a SHA-1 commit decodes as go-git
// alone decoded it.
func decodeCommit(h gitobjects.ID, data []byte) (*decodedCommit, error) {
	tree, parents, rest, err := parseCommitIDs(data, nil)
	if err != nil {
		return nil, err
	}
	body := make([]byte, 0, len(sha1TreeLine)+len(rest))
	body = append(append(body, sha1TreeLine...), rest...)
	meta := &object.Commit{}
	obj := gitobjects.Object{Type: plumbing.CommitObject, Size: int64(len(body)), Data: body}
	if err := meta.Decode(&knownObject{hash: h.Hash(), Object: obj}); err != nil {
		return nil, err
	}
	meta.TreeHash, meta.ParentHashes = plumbing.ZeroHash, nil
	return &decodedCommit{hash: h, tree: tree, parents: parents, meta: meta}, nil
}
