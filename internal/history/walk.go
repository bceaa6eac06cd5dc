package history

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// WalkOptions selects commits the way `git log` does.
type WalkOptions struct {
	// Revs are revisions as `git rev-list` reads them (REV, ^REV, A..B,
	// A...B, X^!, X^@...), HEAD when empty; ignored with All.
	Revs []string
	// Now is the time relative reflog dates count back from (zero: now).
	Now           time.Time
	All           bool // HEAD and every branch, tag and remote branch
	Since, Until  time.Time
	MaxCommits    int
	IncludeMerges bool
	// FirstParent follows only the first parent of each selected commit,
	// as `git rev-list --first-parent` does: a branch's own line of
	// history, where each merge stands for what it brought in. The merges
	// on that line are selected whatever IncludeMerges says, each diffed
	// against its first parent. As in git (without
	// --exclude-first-parent-only), the A of A..B still hides every
	// ancestor of A, through all parents.
	FirstParent bool
	Paths       Pathspec
}

// Walk calls fn for each selected commit, the commits `git rev-list
// --no-merges` (with --full-history for pathspecs; with --first-parent for
// FirstParent) selects, in its order: newest committer date first. It stops
// at the first error fn returns. A commit whose first parent lies beyond a
// shallow clone's boundary comes with Boundary set, a merge too (not
// selected, and not counted by MaxCommits): the caller says what cannot be
// known past it.
//
// Without hidden commits (no A of A..B) commits are handed on as the walk
// reaches them. With them, the walk is git's limit_list: one date-ordered
// queue holds both sides, the hidden side's marks spread to the parents
// read, and the walk ends once nothing wanted is queued and five more
// commits (git's slop for clock skew) passed the last one selected, or
// sooner when commit-graph levels prove walking on changes nothing. A..B so
// costs what the range costs, not what the history behind A does, and
// selects what git selects, even where skew past the slop makes git keep a
// commit A reaches. The selection is then handed on.
func (r *Repo) Walk(ctx context.Context, opts WalkOptions, fn func(Commit) error) error {
	starts, hidden, _, err := r.resolve(opts)
	if err != nil {
		return err
	}
	return r.walk(ctx, starts, hidden, opts, fn)
}

// walk selects the commits reachable from starts but not from hidden.
func (r *Repo) walk(ctx context.Context, starts, hidden []gitobjects.ID, opts WalkOptions, fn func(Commit) error) error {
	w := &walker{r: r, opts: opts, fn: fn, g: newCommitNodes(r)}
	w.q = newCommitQueue(w.g)
	if err := w.queueStarts(starts, hidden); err != nil {
		return err
	}
	if len(hidden) == 0 {
		return w.stream(ctx)
	}
	return w.limited(ctx)
}

type walker struct {
	r       *Repo
	opts    WalkOptions
	fn      func(Commit) error
	g       *commitNodes
	q       *commitQueue
	emitted int
	stack   []nodeID
}

// queueStarts queues the commits given, as git's prepare_revision_walk
// does: the hidden ones first (git lists A before B in A..B, and merge
// bases first in A...B), each once, then sorted by date, ties kept in that
// order. A hidden commit's parents are marked at once.
func (w *walker) queueStarts(starts, hidden []gitobjects.ID) error {
	var list []nodeID
	add := func(h gitobjects.ID, uninteresting bool) error {
		id := w.g.node(h)
		if err := w.g.parse(id); err != nil {
			return err
		}
		n := &w.g.nodes[id]
		if n.flags&nodeMissing != 0 {
			return nil // beyond a shallow clone's boundary
		}
		if uninteresting {
			w.q.markUninteresting(id)
			w.stack = w.q.markParentsUninteresting(id, w.stack)
			n = &w.g.nodes[id]
			n.flags |= nodeBottom
		}
		if n.flags&nodeSeen == 0 {
			n.flags |= nodeSeen
			list = append(list, id)
		}
		return nil
	}
	for _, h := range hidden {
		if err := add(h, true); err != nil {
			return err
		}
	}
	for _, h := range starts {
		if err := add(h, false); err != nil {
			return err
		}
	}
	slices.SortStableFunc(list, func(a, b nodeID) int {
		return cmp.Compare(w.g.nodes[b].date, w.g.nodes[a].date)
	})
	for _, id := range list {
		w.q.push(id)
	}
	return nil
}

// processParents queues a commit's parents, once each, as git's
// process_parents does; those of an uninteresting commit are marked
// uninteresting, with every ancestor of theirs known so far.
func (w *walker) processParents(id nodeID) error {
	n := &w.g.nodes[id]
	if n.flags&nodeAdded != 0 {
		return nil
	}
	n.flags |= nodeAdded
	uninteresting := n.flags&nodeUninteresting != 0
	// Parsing parents grows the nodes: n is not to be read past here.
	first, count := n.first, n.count
	if w.opts.FirstParent && !uninteresting {
		if count > 1 && !w.opts.Paths.Empty() && !w.relevant(w.g.parents[first]) && w.relevant(w.g.parents[first+1]) {
			n.flags |= nodeTreesame
		}
		count = min(count, 1)
	}
	for i := range count {
		p := w.g.parents[first+i]
		if uninteresting {
			w.q.markUninteresting(p)
		}
		if err := w.g.parse(p); err != nil {
			if uninteresting {
				continue // git reads an excluded side's parents gently too
			}
			return err
		}
		pn := &w.g.nodes[p]
		if pn.flags&nodeMissing != 0 {
			continue // beyond a shallow clone's boundary
		}
		if uninteresting {
			w.stack = w.q.markParentsUninteresting(p, w.stack)
		}
		if pn.flags&nodeSeen == 0 {
			pn.flags |= nodeSeen
			w.q.push(p)
		}
	}
	return nil
}

// relevant is git's relevant_commit: not hidden, or hidden as given.
func (w *walker) relevant(id nodeID) bool {
	return w.g.nodes[id].flags&(nodeUninteresting|nodeBottom) != nodeUninteresting
}

// stream walks without hidden commits, handing each commit on as it is
// reached, as git does when nothing limits the walk.
func (w *walker) stream(ctx context.Context) error {
	for len(w.q.heap.items) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := w.q.pop()
		// The queue pops newest first, so once the newest left is older than
		// --since nothing older can qualify (git makes the same bet).
		if !w.opts.Since.IsZero() && w.before(id, w.opts.Since) {
			break
		}
		if err := w.processParents(id); err != nil {
			return err
		}
		if !w.opts.Until.IsZero() && w.after(id, w.opts.Until) {
			w.g.forget(id)
			continue
		}
		done, err := w.emit(ctx, id)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// slop is how many uninteresting commits older than the last interesting
// one git walks on for, once nothing interesting is queued, in case clock
// skew hides an interesting one behind them (revision.c's SLOP).
const slop = 5

// limited walks a range as git's limit_list does, then hands on what it
// selected in the order it was reached.
func (w *walker) limited(ctx context.Context) error {
	left := slop
	last := int64(math.MaxInt64) // the date of the last commit selected
	var selected []nodeID
	lowest := uint32(math.MaxUint32) // the lowest level selected from the graph
	for len(w.q.heap.items) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := w.q.pop()
		w.g.forget(id) // read again if selected: a long range must not hold every message
		if !w.opts.Since.IsZero() && w.before(id, w.opts.Since) {
			w.q.markUninteresting(id)
		}
		if err := w.processParents(id); err != nil {
			return err
		}
		n := &w.g.nodes[id]
		if n.flags&nodeUninteresting != 0 {
			w.stack = w.q.markParentsUninteresting(id, w.stack)
			if left = w.stillInteresting(last, left); left == 0 || w.settled(lowest) {
				break
			}
			continue
		}
		if !w.opts.Until.IsZero() && w.after(id, w.opts.Until) {
			continue
		}
		last = n.date
		selected = append(selected, id)
		if n.level > 0 {
			lowest = min(lowest, n.level)
		}
	}
	for _, id := range selected {
		// Marked after it was selected: reached from a hidden commit after all.
		if w.g.nodes[id].flags&nodeUninteresting != 0 {
			continue
		}
		done, err := w.emit(ctx, id)
		if err != nil || done {
			return err
		}
	}
	return nil
}

// stillInteresting is git's still_interesting: the slop left after an
// uninteresting commit, 0 to stop.
func (w *walker) stillInteresting(last int64, left int) int {
	if len(w.q.heap.items) == 0 {
		return 0
	}
	if last <= w.g.nodes[w.q.peek()].date || w.q.interesting > 0 {
		return slop
	}
	return left - 1
}

// settled reports, once only uninteresting commits are queued, whether
// walking on could still mark a selected commit: a commit can reach only
// commits of a lower topological level, so if no queued commit is above
// the lowest selected, none can. Where git walks on (its slop, or a date
// not yet passed) it would change nothing, and the result is git's. It
// takes commit-graph levels for every queued commit; a selected commit
// the graph lacks is newer than it, unreachable from commits it holds.
func (w *walker) settled(lowest uint32) bool {
	if w.q.interesting > 0 || !w.g.levelsTrusted {
		return false
	}
	for _, id := range w.q.heap.items {
		if level := w.g.nodes[id].level; level == 0 || level > lowest {
			return false
		}
	}
	return true
}

func (w *walker) before(id nodeID, t time.Time) bool {
	return time.Unix(w.g.nodes[id].date, 0).Before(t)
}

func (w *walker) after(id nodeID, t time.Time) bool {
	return time.Unix(w.g.nodes[id].date, 0).After(t)
}

// emit hands on a selected commit unless the options leave it out, and
// reports whether --max-count is reached.
func (w *walker) emit(ctx context.Context, id nodeID) (done bool, err error) {
	n := &w.g.nodes[id]
	// A parent not here is beyond a shallow clone's boundary.
	boundary := n.count > 0 && w.g.nodes[w.g.parents[n.first]].flags&nodeMissing != 0
	skippedMerge := n.count > 1 && !w.opts.IncludeMerges && !w.opts.FirstParent
	// A merge whose first parent is hidden and whose second is not git
	// holds unchanged as far as a pathspec goes, when it follows first
	// parents: try_to_simplify_commit compares it with its first parent
	// only, yet counts the second among the relevant ones.
	treesame := n.flags&nodeTreesame != 0
	if skippedMerge && !boundary || treesame {
		w.g.forget(id)
		return false, nil
	}
	c, err := w.g.commit(id)
	if err != nil {
		return false, err
	}
	commit := newCommit(c)
	if n.count > 0 {
		commit.parentTree = w.g.nodes[w.g.parents[n.first]].tree
		commit.Boundary = boundary
	}
	if skippedMerge {
		// A merge at the edge (HEAD of a pull request checked out with
		// fetch-depth: 1) is handed on, flagged, never counted: left out
		// as every merge is, it would leave an empty changelog and no word
		// of why nothing lay past it.
		return false, w.fn(commit)
	}
	if !w.opts.Paths.Empty() {
		touches, err := w.r.touches(ctx, commit, w.opts.Paths)
		if err != nil || !touches {
			return false, err
		}
	}
	if err := w.fn(commit); err != nil {
		return false, err
	}
	w.emitted++
	return w.opts.MaxCommits > 0 && w.emitted >= w.opts.MaxCommits, nil
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
