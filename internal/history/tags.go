package history

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/digest-cli/digest/internal/mailmap"
	"github.com/digest-cli/digest/internal/versionsort"
)

// Tag is a release: a tagged commit, named by one of its matching tags.
type Tag struct {
	Version
	// Aliases are the other matching tags of the same commit, in the
	// order Tags names them.
	Aliases []string
	// Previous is the release before this one in its own history: of the
	// releases this commit's parents reach, the latest in Tags order; ""
	// for the first. It is what a compare link starts from.
	Previous string
}

// noRank marks a commit no matching tag reaches: unreleased.
const noRank = math.MaxInt32

// tagRef is a matching tag peeled to its commit.
type tagRef struct {
	name   string
	commit gitobjects.ID
	date   time.Time // the tagger's, for an annotated tag; else zero
}

// release is a commit with matching tags: one point of the history order.
type release struct {
	node  nodeID
	names []string // naming order: names[0] names the release
	dates []time.Time
	key   string // the first of the names in version order, to order releases
	gen   int32  // 1 + the longest line of parents below it
	below []int32
	rank  int32 // position in the history order
}

// tagGraph is the history the matching tags reach, and the tags ordered
// by it: a tag whose commit another tag's history holds comes first, and
// of tags neither of which holds the other (or of one commit), the first
// in version order (git's --sort=version:refname) comes first.
type tagGraph struct {
	r        *Repo
	g        *commitNodes
	releases []release
	byRank   []int32  // releases in history order
	at       []int32  // the release on each node, -1 for none
	order    []nodeID // every commit met, parents first, older first
	// frontier holds, for the nodes asked to be kept, the releases that
	// are latest among those the node reaches: none of them reaches
	// another.
	frontier map[nodeID][]int32

	stamp    int32
	seen     []int32
	stackBuf []int32
}

// matchingTags lists the tags match keeps (every tag for nil), each
// peeled to its commit. A tag of something other than a commit is left
// out, as it releases no commit.
func (r *Repo) matchingTags(match func(string) bool) ([]tagRef, error) {
	all, err := r.references()
	if err != nil {
		return nil, fmt.Errorf("%s: list tags: %w. Try: git show-ref --tags there", r.path, err)
	}
	var tags []tagRef
	for _, ref := range all {
		name, ok := strings.CutPrefix(ref.name, "refs/tags/")
		if !ok || ref.target != "" || match != nil && !match(name) {
			continue
		}
		commit, date, err := r.tagTarget(ref.hash)
		if err != nil {
			continue // a tag of a tree, a blob or a missing object
		}
		tags = append(tags, tagRef{name: name, commit: commit, date: date})
	}
	return tags, nil
}

// compareTags orders tag names as git's --sort=version:refname does.
func compareTags(a, b string) int {
	if c := versionsort.Compare(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// namingOrder sorts the tags of one commit in version order, except that
// a "vX" comes right before a bare "X" of the same commit: both name the
// same version, and projects that tag both cite the v one.
func namingOrder(tags []tagRef) {
	slices.SortFunc(tags, func(a, b tagRef) int { return compareTags(a.name, b.name) })
	byName := make(map[string]tagRef, len(tags))
	for _, t := range tags {
		byName[t.name] = t
	}
	placed := make(map[string]bool, len(tags))
	out := make([]tagRef, 0, len(tags))
	for _, t := range tags {
		if placed[t.name] {
			continue
		}
		if v, ok := byName["v"+t.name]; ok && !placed[v.name] {
			out = append(out, v)
			placed[v.name] = true
		}
		out = append(out, t)
		placed[t.name] = true
	}
	copy(tags, out)
}

// newTagGraph reads the matching tags and the history behind them and
// behind tips, whose frontier it keeps. each, when given, is called once
// for every commit tips reach, before any other commit is read, with the
// commit's object where it was read already.
func (r *Repo) newTagGraph(ctx context.Context, match func(string) bool, tips []gitobjects.ID, each func(id nodeID, h gitobjects.ID, obj []byte) error) (*tagGraph, error) {
	tags, err := r.matchingTags(match)
	if err != nil {
		return nil, err
	}
	if r.tagNodes == nil {
		r.tagNodes = newCommitNodes(r)
	}
	t := &tagGraph{r: r, g: r.tagNodes, frontier: map[nodeID][]int32{}}
	if err := t.load(ctx, tips, each); err != nil {
		return nil, err
	}
	// Tags of one commit make one release; by name, for an order that is
	// the same on every run.
	slices.SortFunc(tags, func(a, b tagRef) int { return strings.Compare(a.name, b.name) })
	byCommit := map[gitobjects.ID][]tagRef{}
	var starts []gitobjects.ID
	for _, tag := range tags {
		if _, ok := byCommit[tag.commit]; !ok {
			starts = append(starts, tag.commit)
		}
		byCommit[tag.commit] = append(byCommit[tag.commit], tag)
	}
	if err := t.load(ctx, starts, nil); err != nil {
		return nil, err
	}
	t.at = make([]int32, len(t.g.nodes))
	for i := range t.at {
		t.at[i] = -1
	}
	for _, h := range starts {
		id := t.g.node(h)
		if !t.present(id) {
			continue
		}
		same := byCommit[h]
		key := same[0].name
		for _, tag := range same[1:] {
			if compareTags(tag.name, key) < 0 {
				key = tag.name
			}
		}
		namingOrder(same)
		rel := release{node: id, key: key}
		for _, tag := range same {
			rel.names = append(rel.names, tag.name)
			rel.dates = append(rel.dates, tag.date)
		}
		t.at[id] = int32(len(t.releases))
		t.releases = append(t.releases, rel)
	}
	keep := map[nodeID]bool{}
	for _, h := range tips {
		keep[t.g.node(h)] = true
	}
	if err := t.sortCommits(ctx, keep); err != nil {
		return nil, err
	}
	t.sortReleases()
	return t, nil
}

// present reports whether a node is a commit this repository holds.
func (t *tagGraph) present(id nodeID) bool {
	return t.g.nodes[id].flags&(nodeParsed|nodeMissing) == nodeParsed
}

// load reads the commits starts reach that were not read yet, their
// parents and dates alone: from the commit-graph where it holds them. A
// commit read by an earlier load is read with all its history, and is
// passed over, unless each is to be called for it. A load that fails
// leaves nothing behind: a commit would be read without its history.
func (t *tagGraph) load(ctx context.Context, starts []gitobjects.ID, each func(id nodeID, h gitobjects.ID, obj []byte) error) (err error) {
	g := t.g
	defer func() {
		if err != nil {
			t.r.tagNodes = nil
		}
	}()
	var seen []uint64
	visit := func(id nodeID) bool {
		i, bit := int(id)/64, uint64(1)<<(uint(id)%64)
		for len(seen) <= i {
			seen = append(seen, 0)
		}
		if seen[i]&bit != 0 || each == nil && g.nodes[id].flags&nodeParsed != 0 {
			return false
		}
		seen[i] |= bit
		return true
	}
	var stack []nodeID
	for _, h := range starts {
		if id := g.node(h); visit(id) {
			stack = append(stack, id)
		}
	}
	for steps := 0; len(stack) > 0; steps++ {
		if steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := g.parse(id); err != nil {
			return err
		}
		if g.nodes[id].flags&nodeMissing != 0 {
			continue // beyond a shallow clone's boundary
		}
		if each != nil {
			if err := each(id, g.nodes[id].hash, g.objects[id].Data); err != nil {
				return err
			}
		}
		g.forget(id)
		for _, p := range g.parentsOf(id) {
			if visit(p) {
				stack = append(stack, p)
			}
		}
	}
	return nil
}

// sortCommits orders the commits read parents first, the oldest committer
// date first among those whose parents are all placed, and learns on the
// way which releases each commit's history holds: its frontier, the
// releases no other of them reaches. A release's own frontier, taken
// before its tag counts, gives the releases right below it.
func (t *tagGraph) sortCommits(ctx context.Context, keep map[nodeID]bool) error {
	g := t.g
	n := len(g.nodes)
	pending := make([]int32, n)  // parents not placed yet
	children := make([]int32, n) // children not placed yet, then freed
	childStart := make([]int32, n+1)
	for id := range n {
		if !t.present(nodeID(id)) {
			continue
		}
		for _, p := range g.parentsOf(nodeID(id)) {
			if t.present(p) {
				pending[id]++
				childStart[p+1]++
			}
		}
	}
	for i := range n {
		children[i] = childStart[i+1]
		childStart[i+1] += childStart[i]
	}
	childOf := make([]nodeID, childStart[n])
	fill := slices.Clone(childStart[:n])
	for id := range n {
		if !t.present(nodeID(id)) {
			continue
		}
		for _, p := range g.parentsOf(nodeID(id)) {
			if t.present(p) {
				childOf[fill[p]] = nodeID(id)
				fill[p]++
			}
		}
	}
	fill = nil
	ready := &nodeHeap{less: func(a, b nodeID) bool {
		if da, db := g.nodes[a].date, g.nodes[b].date; da != db {
			return da < db
		}
		// By name, not by node: nodes are numbered as the commits were
		// first read, which earlier calls decide.
		return bytes.Compare(g.nodes[a].hash.Bytes(), g.nodes[b].hash.Bytes()) < 0
	}}
	for id := range n {
		if t.present(nodeID(id)) && pending[id] == 0 {
			ready.push(nodeID(id))
		}
	}
	frontier := make([][]int32, n)
	gen := make([]int32, n)
	t.order = make([]nodeID, 0, n)
	var sets [][]int32
	for len(ready.items) > 0 {
		if len(t.order)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		id := ready.pop()
		t.order = append(t.order, id)
		sets = sets[:0]
		var g0 int32
		for _, p := range g.parentsOf(id) {
			if !t.present(p) {
				continue
			}
			sets = append(sets, frontier[p])
			g0 = max(g0, gen[p])
		}
		gen[id] = g0 + 1
		below, err := t.union(ctx, sets)
		if err != nil {
			return err
		}
		if rel := t.at[id]; rel >= 0 {
			t.releases[rel].below = below
			t.releases[rel].gen = gen[id]
			frontier[id] = []int32{rel}
		} else {
			frontier[id] = below
		}
		if keep[id] {
			t.frontier[id] = frontier[id]
		}
		for _, p := range g.parentsOf(id) {
			if t.present(p) {
				if children[p]--; children[p] == 0 {
					frontier[p] = nil
				}
			}
		}
		for _, c := range childOf[childStart[id]:childStart[id+1]] {
			if pending[c]--; pending[c] == 0 {
				ready.push(c)
			}
		}
	}
	return nil
}

// union is the frontier of a commit whose parents have the frontiers
// sets: the releases of all of them that no other of them reaches. Sets
// are sorted and never changed once made, so that a commit with one
// parent shares its parent's.
func (t *tagGraph) union(ctx context.Context, sets [][]int32) ([]int32, error) {
	switch len(sets) {
	case 0:
		return nil, nil
	case 1:
		return sets[0], nil
	}
	same := true
	for _, s := range sets[1:] {
		if !slices.Equal(s, sets[0]) {
			same = false
			break
		}
	}
	if same {
		return sets[0], nil
	}
	var all []int32
	for _, s := range sets {
		all = append(all, s...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) == 1 {
		return all, nil
	}
	out := make([]int32, 0, len(all))
	for _, x := range all {
		reached := false
		for _, y := range all {
			if y == x {
				continue
			}
			below, err := t.reaches(ctx, y, x)
			if err != nil {
				return nil, err
			}
			if below {
				reached = true
				break
			}
		}
		if !reached {
			out = append(out, x)
		}
	}
	return out, nil
}

// reaches reports whether release y's history holds release x (another
// commit): a search down the releases right below each, which skips any
// release no higher than x, since a commit reaches only commits of lower
// generations.
func (t *tagGraph) reaches(ctx context.Context, y, x int32) (bool, error) {
	rs := t.releases
	if rs[x].gen >= rs[y].gen {
		return false, nil
	}
	if t.seen == nil {
		t.seen = make([]int32, len(rs))
	}
	t.stamp++
	stack := append(t.stackBuf[:0], y)
	defer func() { t.stackBuf = stack[:0] }()
	for steps := 0; len(stack) > 0; steps++ {
		if steps%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, b := range rs[u].below {
			if b == x {
				return true, nil
			}
			if t.seen[b] == t.stamp || rs[b].gen <= rs[x].gen {
				continue
			}
			t.seen[b] = t.stamp
			stack = append(stack, b)
		}
	}
	return false, nil
}

// sortReleases orders the releases: each after every release its history
// holds, and of those free to come next, the first in version order.
func (t *tagGraph) sortReleases() {
	rs := t.releases
	pending := make([]int32, len(rs))
	above := make([][]int32, len(rs))
	for i := range rs {
		pending[i] = int32(len(rs[i].below))
		for _, b := range rs[i].below {
			above[b] = append(above[b], int32(i))
		}
	}
	ready := &nodeHeap{less: func(a, b nodeID) bool {
		return compareTags(rs[a].key, rs[b].key) < 0 // names differ
	}}
	for i := range rs {
		if pending[i] == 0 {
			ready.push(nodeID(i))
		}
	}
	t.byRank = make([]int32, 0, len(rs))
	for len(ready.items) > 0 {
		i := int32(ready.pop())
		rs[i].rank = int32(len(t.byRank))
		t.byRank = append(t.byRank, i)
		for _, a := range above[i] {
			if pending[a]--; pending[a] == 0 {
				ready.push(nodeID(a))
			}
		}
	}
}

// ranks gives every commit read the rank of the first release, in the
// history order, whose history holds it; noRank for none.
func (t *tagGraph) ranks() []int32 {
	g := t.g
	best := make([]int32, len(g.nodes))
	for i := range best {
		best[i] = noRank
	}
	for i := len(t.order) - 1; i >= 0; i-- {
		id := t.order[i]
		if rel := t.at[id]; rel >= 0 {
			best[id] = min(best[id], t.releases[rel].rank)
		}
		for _, p := range g.parentsOf(id) {
			best[p] = min(best[p], best[id])
		}
	}
	return best
}

// version is a release's Version: its naming tag, its commit, and the
// tag's date (an annotated tag's own, else its commit's).
func (t *tagGraph) version(rel int32) (Version, error) {
	rs := &t.releases[rel]
	h := t.g.nodes[rs.node].hash
	date := rs.dates[0]
	if date.IsZero() {
		c, err := t.r.commitObject(h)
		if err != nil {
			return Version{}, fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", t.r.path, h, err)
		}
		date = c.meta.Committer.When
		rs.dates[0] = date
	}
	return Version{Tag: rs.names[0], Commit: h.String(), Date: date}, nil
}

// tag is a release as Tags gives it.
func (t *tagGraph) tag(rel int32) (Tag, error) {
	v, err := t.version(rel)
	if err != nil {
		return Tag{}, err
	}
	rs := t.releases[rel]
	tag := Tag{Version: v, Aliases: slices.Clone(rs.names[1:])}
	if prev := t.latest(rs.below); prev >= 0 {
		tag.Previous = t.releases[prev].names[0]
	}
	return tag, nil
}

// latest is the release of rels last in the history order, -1 for none.
func (t *tagGraph) latest(rels []int32) int32 {
	best := int32(-1)
	for _, r := range rels {
		if best < 0 || t.releases[r].rank > t.releases[best].rank {
			best = r
		}
	}
	return best
}

// Tags lists the releases the tags match keeps make (every tag for nil),
// in history order: a release whose commit another one's history holds
// comes before it, whatever the dates say; of releases neither of which
// holds the other, the first in git's --sort=version:refname order comes
// first, so that a maintenance branch's v1.2.1 comes before v1.3.0. Tags
// of one commit make one release, named by the first of them in version
// order, except that a "vX" is preferred to a bare "X" of the same
// commit. A tag of something other than a commit, or of a commit beyond a
// shallow clone's boundary, makes none.
func (r *Repo) Tags(ctx context.Context, match func(tag string) bool) ([]Tag, error) {
	r.tagMu.Lock()
	defer r.tagMu.Unlock()
	t, err := r.newTagGraph(ctx, match, nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]Tag, 0, len(t.byRank))
	for _, rel := range t.byRank {
		tag, err := t.tag(rel)
		if err != nil {
			return nil, err
		}
		out = append(out, tag)
	}
	return out, nil
}

// LastTag is the latest release (in Tags order) whose commit the history
// of from holds, from itself included: what a version bump counts from.
// from is a revision naming one commit (HEAD, a branch, a hash). ok is
// false when from's history holds no matching tag.
func (r *Repo) LastTag(ctx context.Context, from string, match func(tag string) bool) (tag Tag, ok bool, err error) {
	r.tagMu.Lock()
	defer r.tagMu.Unlock()
	start, err := r.oneCommit(from)
	if err != nil {
		return Tag{}, false, err
	}
	t, err := r.newTagGraph(ctx, match, []gitobjects.ID{start}, nil)
	if err != nil {
		return Tag{}, false, err
	}
	rel := t.latest(t.frontier[t.g.node(start)])
	if rel < 0 {
		return Tag{}, false, nil
	}
	tag, err = t.tag(rel)
	return tag, err == nil, err
}

// oneCommit resolves a revision that names one commit.
func (r *Repo) oneCommit(rev string) (gitobjects.ID, error) {
	starts, hidden, _, err := r.resolve(WalkOptions{Revs: []string{rev}})
	if err != nil {
		return gitobjects.ID{}, err
	}
	if len(starts) != 1 || len(hidden) > 0 {
		return gitobjects.ID{}, fmt.Errorf("%s: %q names %d commits, not one. Try: a branch, a tag or a commit", r.path, rev, len(starts)+len(hidden))
	}
	return starts[0], nil
}

// VersionsMatching assigns each of the commits (hashes a walk gave) the
// release that first shipped it: of the releases whose history holds it,
// the first in Tags order, of the tags match keeps (every tag for nil).
// It follows the history, not the clock: a commit dated after a tag, or
// a tag made long after its commit, changes nothing. A tag on a merge the
// walk left out counts as well as one on a selected commit. Commits no
// tag reaches are unreleased and absent from the map.
func (r *Repo) VersionsMatching(ctx context.Context, commits []string, match func(tag string) bool) (map[string]Version, error) {
	r.tagMu.Lock()
	defer r.tagMu.Unlock()
	t, err := r.newTagGraph(ctx, match, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(t.releases) == 0 {
		return nil, nil
	}
	best := t.ranks()
	out := make(map[string]Version, len(commits))
	versions := map[int32]Version{}
	for _, c := range commits {
		id, ok := t.g.ids[gitobjects.MustParseID(c)]
		if !ok || best[id] == noRank {
			continue
		}
		rel := t.byRank[best[id]]
		v, ok := versions[rel]
		if !ok {
			if v, err = t.version(rel); err != nil {
				return nil, err
			}
			versions[rel] = v
		}
		out[c] = v
	}
	return out, nil
}

// Debut is where an author first appears: the release of their first
// commit and that commit.
type Debut struct {
	// Version is the tag naming the release, "" for commits no tag holds
	// yet.
	Version string
	// Commit is their first commit in that release: the first of theirs
	// in an order that puts parents first and, of the others, the oldest
	// committer date first.
	Commit string
}

// AuthorKey is who an author is, for Debuts: their address as the mailmap
// gives it, lower-cased, or their name when they left the address empty.
func AuthorKey(mm *mailmap.Map, name, email string) string {
	name, email = mm.Resolve(name, email)
	if email == "" {
		return name
	}
	return strings.ToLower(email)
}

// Debuts tells, for each author (by AuthorKey) of a commit the history of
// tips holds, the release of their first commit: of the releases (as
// VersionsMatching assigns them) of all their commits, the first in Tags
// order, unreleased last. New contributors of a release are the authors
// whose debut it is. tips are revisions naming commits (HEAD, a branch, a
// hash). It reads every commit's header once: parents and authors only.
func (r *Repo) Debuts(ctx context.Context, tips []string, match func(tag string) bool, mm *mailmap.Map) (map[string]Debut, error) {
	r.tagMu.Lock()
	defer r.tagMu.Unlock()
	var starts []gitobjects.ID
	for _, tip := range tips {
		h, err := r.oneCommit(tip)
		if err != nil {
			return nil, err
		}
		starts = append(starts, h)
	}
	var author []int32 // by node: an index into keys, -1 for none
	var keys []string
	index := map[string]int32{}
	each := func(id nodeID, h gitobjects.ID, data []byte) error {
		if data == nil {
			obj, release, err := r.borrowObject(h, plumbing.CommitObject, 0)
			if err != nil {
				return fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", r.path, h, err)
			}
			defer release()
			data = obj.Data
		}
		name, email := commitAuthor(data)
		key := AuthorKey(mm, name, email)
		k, ok := index[key]
		if !ok {
			k = int32(len(keys))
			keys = append(keys, key)
			index[key] = k
		}
		for len(author) <= int(id) {
			author = append(author, -1)
		}
		author[id] = k
		return nil
	}
	t, err := r.newTagGraph(ctx, match, starts, each)
	if err != nil {
		return nil, err
	}
	best := t.ranks()
	first := make([]nodeID, len(keys))
	firstRank := make([]int32, len(keys))
	for i := range firstRank {
		firstRank[i] = -1
	}
	for _, id := range t.order {
		if int(id) >= len(author) || author[id] < 0 {
			continue
		}
		k := author[id]
		if firstRank[k] < 0 || best[id] < firstRank[k] {
			first[k], firstRank[k] = id, best[id]
		}
	}
	out := make(map[string]Debut, len(keys))
	for k, key := range keys {
		if firstRank[k] < 0 {
			continue
		}
		d := Debut{Commit: t.g.nodes[first[k]].hash.String()}
		if rank := firstRank[k]; rank != noRank {
			d.Version = t.releases[t.byRank[rank]].names[0]
		}
		out[key] = d
	}
	return out, nil
}

// commitAuthor reads a commit's author from its header, in UTF-8 as
// Walk's commits give it.
func commitAuthor(data []byte) (name, email string) {
	var sig object.Signature
	var encoding string
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if len(line) == 0 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("author ")); ok {
			sig.Decode(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("encoding ")); ok {
			encoding = string(v)
		}
	}
	text := decoder(&object.Commit{Encoding: object.MessageEncoding(encoding)})
	return strings.ToValidUTF8(text(sig.Name), "\uFFFD"), strings.ToValidUTF8(text(sig.Email), "\uFFFD")
}

// nodeHeap is a binary heap of nodes (or release indices) by less.
type nodeHeap struct {
	items []nodeID
	less  func(a, b nodeID) bool
}

func (h *nodeHeap) push(id nodeID) {
	h.items = append(h.items, id)
	for i := len(h.items) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *nodeHeap) pop() nodeID {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	for i := 0; ; {
		l, r, least := 2*i+1, 2*i+2, i
		if l < last && h.less(h.items[l], h.items[least]) {
			least = l
		}
		if r < last && h.less(h.items[r], h.items[least]) {
			least = r
		}
		if least == i {
			break
		}
		h.items[i], h.items[least] = h.items[least], h.items[i]
		i = least
	}
	return top
}
