package history

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// side is one side of a changed path: absent when path is "".
type side struct {
	path string
	mode filemode.FileMode
	hash gitobjects.ID
}

// change is a path that differs between two trees.
type change struct{ from, to side }

// treeEntry is one entry of a git tree object.
type treeEntry struct {
	name string
	mode filemode.FileMode
	hash gitobjects.ID
}

func (e treeEntry) isDir() bool { return e.mode == filemode.Dir }

// sortKey orders entries as git stores and diffs them: a directory sorts as
// if its name ended in '/'.
func (e treeEntry) sortKey() string {
	if e.isDir() {
		return e.name + "/"
	}
	return e.name
}

// diffTrees lists the paths that differ between two trees (zero hash: the
// empty tree) in git's order, descending only into subtrees whose hashes
// differ. It is go-git's DiffTree without rename detection, minus the
// generic tree walkers that made it a fifth of digest's time.
func (r *Repo) diffTrees(ctx context.Context, oldTree, newTree gitobjects.ID) ([]change, error) {
	var out []change
	var walk func(prefix string, a, b gitobjects.ID) error
	walk = func(prefix string, a, b gitobjects.ID) error {
		if a == b {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		olds, err := r.tree(a)
		if err != nil {
			return err
		}
		news, err := r.tree(b)
		if err != nil {
			return err
		}
		for i, j := 0, 0; i < len(olds) || j < len(news); {
			var o, n *treeEntry
			switch {
			case j == len(news):
				o = &olds[i]
			case i == len(olds):
				n = &news[j]
			default:
				switch ko, kn := olds[i].sortKey(), news[j].sortKey(); {
				case ko < kn:
					o = &olds[i]
				case ko > kn:
					n = &news[j]
				default:
					o, n = &olds[i], &news[j]
				}
			}
			if o != nil {
				i++
			}
			if n != nil {
				j++
			}
			var oh, nh gitobjects.ID
			dir := o != nil && o.isDir() || n != nil && n.isDir()
			if o != nil {
				oh = o.hash
			}
			if n != nil {
				nh = n.hash
			}
			name := prefix
			if o != nil {
				name += o.name
			} else {
				name += n.name
			}
			if dir {
				if err := walk(name+"/", oh, nh); err != nil {
					return err
				}
				continue
			}
			if o != nil && n != nil && o.hash == n.hash && o.mode == n.mode {
				continue
			}
			var ch change
			if o != nil {
				ch.from = side{name, o.mode, o.hash}
			}
			if n != nil {
				ch.to = side{name, n.mode, n.hash}
			}
			out = append(out, ch)
		}
		return nil
	}
	return out, walk("", oldTree, newTree)
}

// tree reads and parses a tree object; the zero hash is the empty tree.
func (r *Repo) tree(h gitobjects.ID) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if entries, ok := r.trees.get(h); ok {
		return entries, nil
	}
	obj, err := r.readObject(h, plumbing.TreeObject, 0)
	if err != nil {
		return nil, err
	}
	entries, err := parseTree(obj.Data, r.hashSize)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", h, err)
	}
	r.trees.put(h, entries)
	return entries, nil
}

// parseTree reads git's tree format: "MODE NAME\0" and a hash of
// hashSize bytes (20, or 32 in a SHA-256 repository), per entry.
func parseTree(raw []byte, hashSize int) ([]treeEntry, error) {
	var entries []treeEntry
	for len(raw) > 0 {
		sp := bytes.IndexByte(raw, ' ')
		nul := bytes.IndexByte(raw, 0)
		if sp < 0 || nul < sp || len(raw) < nul+1+hashSize {
			return nil, fmt.Errorf("malformed tree entry")
		}
		mode, err := strconv.ParseUint(string(raw[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed mode %q", raw[:sp])
		}
		h := gitobjects.IDFromBytes(raw[nul+1 : nul+1+hashSize])
		entries = append(entries, treeEntry{name: string(raw[sp+1 : nul]), mode: filemode.FileMode(mode), hash: h})
		raw = raw[nul+1+hashSize:]
	}
	return entries, nil
}

// renamedChanges diffs with go-git's rename detection, for --renames: rare
// enough that its cost is acceptable, and detection is not ours to redo.
func (r *Repo) renamedChanges(ctx context.Context, oldTree, newTree gitobjects.ID) ([]change, error) {
	if err := r.CanDetectRenames(); err != nil {
		return nil, err
	}
	var objects storer.EncodedObjectStorer = objectStorer{r}
	if r.objects == nil {
		r.mu.Lock()
		defer r.mu.Unlock()
		objects = r.git.Storer
	}
	var a, b *object.Tree
	var err error
	if !oldTree.IsZero() {
		if a, err = object.GetTree(objects, oldTree.Hash()); err != nil {
			return nil, err
		}
	}
	if b, err = object.GetTree(objects, newTree.Hash()); err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(ctx, a, b, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	out := make([]change, len(changes))
	for i, ch := range changes {
		if ch.From.Name != "" {
			out[i].from = side{ch.From.Name, ch.From.TreeEntry.Mode, gitobjects.IDFromHash(ch.From.TreeEntry.Hash)}
		}
		if ch.To.Name != "" {
			out[i].to = side{ch.To.Name, ch.To.TreeEntry.Mode, gitobjects.IDFromHash(ch.To.TreeEntry.Hash)}
		}
	}
	return out, nil
}

// treeCache keeps parsed trees across the commits of a walk, where each
// commit's tree is mostly its parent's: two generations of maps, the older
// dropped when the newer holds maxTreeEntries entries.
type treeCache struct {
	mu         sync.Mutex
	young, old map[gitobjects.ID][]treeEntry
	entries    int
}

const maxTreeEntries = 50_000

func (c *treeCache) get(h gitobjects.ID) ([]treeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.young[h]; ok {
		return e, true
	}
	e, ok := c.old[h]
	if ok {
		c.keep(h, e)
	}
	return e, ok
}

func (c *treeCache) put(h gitobjects.ID, e []treeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keep(h, e)
}

func (c *treeCache) keep(h gitobjects.ID, e []treeEntry) {
	if c.young == nil || c.entries >= maxTreeEntries {
		c.old, c.young, c.entries = c.young, make(map[gitobjects.ID][]treeEntry), 0
	}
	c.young[h] = e
	c.entries += len(e)
}

// CanDetectRenames says why --renames cannot run here, or nil: go-git's
// rename detection decodes trees of SHA-1 names only.
func (r *Repo) CanDetectRenames() error {
	if r.hashSize != gitobjects.SHA1Size {
		return fmt.Errorf("--renames: %s is a SHA-256 repository, where digest cannot detect renames. Try: leave out --renames; renamed files then show as deleted and added", r.path)
	}
	return nil
}
