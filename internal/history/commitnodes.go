package history

import (
	"bytes"
	"errors"
	"fmt"
	"math"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// nodeID names a commit the walk has met, an index into commitNodes.nodes:
// nodes hold no pointers, so the collector never scans them, however long
// the history.
type nodeID int32

// Flags of a node, after git's object flags of the same names.
const (
	nodeSeen          uint8 = 1 << iota // queued once; never again
	nodeAdded                           // its parents were processed
	nodeUninteresting                   // reachable from a hidden commit
	nodeParsed                          // parents, tree and date known
	nodeMissing                         // not in the repository (a shallow clone's edge)
	nodeQueued                          // in the queue now
	nodeBottom                          // a hidden commit given as such (git's BOTTOM)
	nodeTreesame                        // a merge a first-parent walk with a pathspec leaves out
)

type commitNode struct {
	hash gitobjects.ID
	tree gitobjects.ID
	date int64 // committer date, seconds: the walk's order
	// level is the commit-graph's topological level, 0 when the commit was
	// read from its object.
	level uint32
	seq   uint32 // queue order among equal dates: git's insertion order
	// The parents are parents[first : first+count] of commitNodes.parents.
	first int32
	count int32
	flags uint8
}

// commitNodes is the part of the commit graph a walk has met: the commits
// it processed and their parents. Parents, trees and dates come from the
// commit-graph file when it holds the commit, else from the object.
type commitNodes struct {
	r       *Repo
	ids     map[gitobjects.ID]nodeID
	nodes   []commitNode
	parents []nodeID
	// objects read to learn their parents, until the walk hands them on or
	// drops them: with no commit-graph, each commit would otherwise be read
	// twice.
	objects map[nodeID]gitobjects.Object
	// levelsTrusted is cleared when a commit the graph names could not be
	// read from it: the graph then cannot vouch for what reaches what.
	levelsTrusted bool
	posBuf        []uint32
	hashBuf       []gitobjects.ID
}

func newCommitNodes(r *Repo) *commitNodes {
	return &commitNodes{r: r, ids: map[gitobjects.ID]nodeID{}, objects: map[nodeID]gitobjects.Object{}, levelsTrusted: true}
}

// node returns the node of h, made unparsed if new.
func (g *commitNodes) node(h gitobjects.ID) nodeID {
	if id, ok := g.ids[h]; ok {
		return id
	}
	id := nodeID(len(g.nodes))
	g.nodes = append(g.nodes, commitNode{hash: h})
	g.ids[h] = id
	return id
}

func (g *commitNodes) parentsOf(id nodeID) []nodeID {
	n := &g.nodes[id]
	return g.parents[n.first : n.first+n.count]
}

// parse learns a commit's parents, tree and date. A commit not in the
// repository is marked missing, and is no error: the walk stops there.
func (g *commitNodes) parse(id nodeID) error {
	if g.nodes[id].flags&(nodeParsed|nodeMissing) != 0 {
		return nil
	}
	h := g.nodes[id].hash
	if graph := g.r.graph; graph != nil {
		if pos, ok := graph.Find(h); ok {
			if err := g.parseFromGraph(id, graph, pos); err == nil {
				return nil
			}
			g.levelsTrusted = false // damaged: read the object instead
		}
	}
	obj, err := g.r.readObject(h, plumbing.CommitObject, 0)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		g.nodes[id].flags |= nodeMissing
		return nil
	}
	if err == nil {
		err = g.parseObject(id, obj.Data)
	}
	if err != nil {
		return fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", g.r.path, h, err)
	}
	g.objects[id] = obj
	return nil
}

// parseObject learns a commit's tree, parents and date from its object.
func (g *commitNodes) parseObject(id nodeID, data []byte) error {
	tree, parents, date, err := parseCommitHeader(data, g.hashBuf[:0])
	g.hashBuf = parents
	if err != nil {
		return err
	}
	first := int32(len(g.parents))
	for _, p := range parents {
		g.parents = append(g.parents, g.node(p))
	}
	n := &g.nodes[id]
	n.tree, n.date, n.first, n.count = tree, date, first, int32(len(parents))
	n.flags |= nodeParsed
	return nil
}

// parseCommitHeader reads a commit's tree, parents (appended to parents)
// and committer date as git's parse_commit_buffer does, and only those:
// decoding the whole commit (its message, its signatures) is left for the
// commits handed on. A committer line git cannot read gives the date 0, as
// in git.
func parseCommitHeader(data []byte, parents []gitobjects.ID) (tree gitobjects.ID, _ []gitobjects.ID, date int64, err error) {
	tree, parents, rest, err := parseCommitIDs(data, parents)
	if err != nil {
		return tree, parents, 0, err
	}
	return tree, parents, commitDate(rest), nil
}

// parseCommitIDs reads the tree and parent lines that open a commit, with
// names of either object format (40 or 64 hex digits), and returns what
// follows them.
func parseCommitIDs(data []byte, parents []gitobjects.ID) (tree gitobjects.ID, _ []gitobjects.ID, rest []byte, err error) {
	line := func(prefix string) (gitobjects.ID, bool) {
		if !bytes.HasPrefix(data, []byte(prefix)) {
			return gitobjects.ID{}, false
		}
		end := bytes.IndexByte(data, '\n')
		if end < 0 {
			return gitobjects.ID{}, false
		}
		h, err := gitobjects.ParseID(string(data[len(prefix):end]))
		if err != nil {
			return gitobjects.ID{}, false
		}
		data = data[end+1:]
		return h, true
	}
	tree, ok := line("tree ")
	if !ok {
		return tree, parents, nil, errors.New("malformed commit: no tree line")
	}
	for bytes.HasPrefix(data, []byte("parent ")) {
		p, ok := line("parent ")
		if !ok {
			return tree, parents, nil, errors.New("malformed commit: bad parent line")
		}
		parents = append(parents, p)
	}
	return tree, parents, data, nil
}

// commitDate is git's parse_commit_date: the number after the committer's
// ">", where an author line and then a committer line follow the parents;
// 0 for anything else.
func commitDate(data []byte) int64 {
	author, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || !bytes.HasPrefix(author, []byte("author")) || !bytes.HasPrefix(rest, []byte("committer")) {
		return 0
	}
	committer, _, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return 0
	}
	_, date, ok := bytes.Cut(committer, []byte(">"))
	if !ok {
		return 0
	}
	// strtoumax: blanks, a sign, then digits; a number too large saturates.
	date = bytes.TrimLeft(date, " \t\v\f\r")
	negative := false
	if len(date) > 0 && (date[0] == '+' || date[0] == '-') {
		negative = date[0] == '-'
		date = date[1:]
	}
	var t int64
	digits := 0
	for _, c := range date {
		if c < '0' || c > '9' {
			break
		}
		digits++
		if t > (math.MaxInt64-int64(c-'0'))/10 {
			return math.MaxInt64
		}
		t = t*10 + int64(c-'0')
	}
	if negative && digits > 0 && t != 0 {
		return math.MaxInt64 // an unsigned timestamp wrapped around: far in the future
	}
	return t
}

func (g *commitNodes) parseFromGraph(id nodeID, graph *gitobjects.CommitGraph, pos uint32) error {
	c, err := graph.Commit(pos, g.posBuf)
	if err != nil {
		return err
	}
	g.posBuf = c.Parents
	first := int32(len(g.parents))
	for _, p := range c.Parents {
		ph, err := graph.Hash(p)
		if err != nil {
			g.parents = g.parents[:first]
			return err
		}
		g.parents = append(g.parents, g.node(ph))
	}
	n := &g.nodes[id]
	n.tree, n.date, n.first, n.count = c.Tree, c.Time, first, int32(len(c.Parents))
	if c.Level > 0 && c.Level < gitobjects.MaxGraphLevel {
		n.level = c.Level
	}
	n.flags |= nodeParsed
	return nil
}

// commit reads the whole commit, for its message and authors: from the
// object parse kept, or else read again.
func (g *commitNodes) commit(id nodeID) (*decodedCommit, error) {
	h := g.nodes[id].hash
	obj, ok := g.objects[id]
	if ok {
		delete(g.objects, id)
	} else {
		var err error
		if obj, err = g.r.readObject(h, plumbing.CommitObject, 0); err != nil {
			return nil, fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", g.r.path, h, err)
		}
	}
	c, err := decodeCommit(h, obj.Data)
	if err != nil {
		return nil, fmt.Errorf("%s: commit %s: %w. Try: git fsck, to see what is damaged", g.r.path, h, err)
	}
	return c, nil
}

// forget drops what parse kept of a commit the walk will not hand on.
func (g *commitNodes) forget(id nodeID) { delete(g.objects, id) }

// commitQueue orders nodes as git's walk list does: newest committer date
// first, and among equal dates in the order they were added.
type commitQueue struct {
	g     *commitNodes
	heap  nodeHeap // by less
	added uint32
	// interesting counts the queued nodes not marked uninteresting: git's
	// walk of a range ends once it is zero (everybody_uninteresting).
	interesting int
}

// newCommitQueue is an empty queue of g's nodes.
func newCommitQueue(g *commitNodes) *commitQueue {
	q := &commitQueue{g: g}
	q.heap.less = q.less
	return q
}

func (q *commitQueue) less(a, b nodeID) bool {
	na, nb := &q.g.nodes[a], &q.g.nodes[b]
	if na.date != nb.date {
		return na.date > nb.date
	}
	return na.seq < nb.seq
}

func (q *commitQueue) push(id nodeID) {
	n := &q.g.nodes[id]
	n.seq = q.added
	q.added++
	n.flags |= nodeQueued
	if n.flags&nodeUninteresting == 0 {
		q.interesting++
	}
	q.heap.push(id)
}

func (q *commitQueue) peek() nodeID { return q.heap.items[0] }

func (q *commitQueue) pop() nodeID {
	top := q.heap.pop()
	n := &q.g.nodes[top]
	n.flags &^= nodeQueued
	if n.flags&nodeUninteresting == 0 {
		q.interesting--
	}
	return top
}

// markUninteresting flags one node, keeping the queue's count right; it
// reports whether the node was interesting before.
func (q *commitQueue) markUninteresting(id nodeID) bool {
	n := &q.g.nodes[id]
	if n.flags&nodeUninteresting != 0 {
		return false
	}
	n.flags |= nodeUninteresting
	if n.flags&nodeQueued != 0 {
		q.interesting--
	}
	return true
}

// markParentsUninteresting flags every known ancestor of id, as git's
// mark_parents_uninteresting does: through the parents parsed so far,
// stopping at commits flagged already.
func (q *commitQueue) markParentsUninteresting(id nodeID, stack []nodeID) []nodeID {
	stack = append(stack[:0], q.g.parentsOf(id)...)
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if q.markUninteresting(c) {
			stack = append(stack, q.g.parentsOf(c)...)
		}
	}
	return stack
}
