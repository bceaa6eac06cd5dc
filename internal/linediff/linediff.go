// Package linediff is a line diff that gives the hunks `git diff` gives:
// git's xdiff algorithm with its default options (Myers with xdiff's
// discarding of unmatched lines and its cost heuristics, then
// xdl_change_compact's sliding of change groups with the indent
// heuristic). Matching git matters because the diffs are read next to,
// and counted like, git's own. The constants and decisions below follow
// xdiff/xprepare.c and xdiff/xdiffi.c of git 2.39; the code is written
// afresh for Go.
//
// Two things make it cheaper than a general line diff: the common head and
// tail of the texts are cut off by comparing bytes, before any line is
// hashed, and lines outside the changed middle are only split out of the
// text when the sliding of groups or the context of a hunk reaches them.
package linediff

import (
	"hash/maphash"
	"math"
	"strings"
	"sync"
)

// Diff is the line diff of two texts.
type Diff struct{ d *lineDiff }

// Lines diffs two texts line by line as `git diff` does.
func Lines(oldText, newText string) Diff { return Diff{diffLines(oldText, newText)} }

// Old and New are the diff's two sides.
func (d Diff) Old() Side { return Side{&d.d.old} }

// New is the new text's side.
func (d Diff) New() Side { return Side{&d.d.new} }

// Change is one run of changes, as xdiff's xdchange_t: N1 lines removed at
// old line I1 (0-based) and N2 lines added at new line I2.
type Change struct{ I1, I2, N1, N2 int }

// Changes lists the runs of changed lines in order.
func (d Diff) Changes() []Change {
	cs := d.d.changes()
	out := make([]Change, len(cs))
	for i, c := range cs {
		out[i] = Change{I1: c.i1, I2: c.i2, N1: c.n1, N2: c.n2}
	}
	return out
}

// Side is one text of a diff.
type Side struct{ f *lineFile }

// Len is how many lines the text has.
func (s Side) Len() int { return s.f.nrec }

// Line is line i (0-based) with its line end.
func (s Side) Line(i int) string { return s.f.line(i) }

// Start is the byte offset in Text where line i starts.
func (s Side) Start(i int) int { return s.f.start(i) }

// Text is the whole text.
func (s Side) Text() string { return s.f.text }

// lineFile is one side of a line diff. Its lines are split out of text on
// demand, as a window [lo, hi) of line starts that grows either way.
type lineFile struct {
	text string
	nrec int // lines in text; the last may lack its newline

	base   int    // line i starts at off[i-base]; off[hi-base] ends the window
	lo, hi int    // the lines split out so far
	off    []int  // room before lo lets the window grow up without copying
	chg    []bool // chg[i-base]: line i is changed; false outside [lo, hi)

	midLo, midHi int     // the middle: lines not in the common head or tail
	ids          []int32 // the middle's lines as classes of equal lines
}

// init splits out the middle, text[start:end], which begins at line first.
func (f *lineFile) init(text string, start, end, first int) {
	n := strings.Count(text[start:end], "\n")
	if end > start && text[end-1] != '\n' {
		n++ // the last line, without its newline
	}
	// Room for a few lines either way: a hunk's context, short slides.
	const room = 16
	before := min(room, first)
	*f = lineFile{text: text, base: first - before, lo: first, hi: first + n, midLo: first, midHi: first + n}
	f.off = make([]int, before+1, before+n+1+room)
	f.off[before] = start
	for pos := start; pos < end; {
		i := strings.IndexByte(text[pos:end], '\n')
		if i < 0 {
			pos = end
		} else {
			pos += i + 1
		}
		f.off = append(f.off, pos)
	}
	f.chg = make([]bool, before+n, before+n+room)
	f.nrec = f.hi + strings.Count(text[end:], "\n")
	if end < len(text) && text[len(text)-1] != '\n' {
		f.nrec++
	}
}

// line is line i with its newline, if it has one.
func (f *lineFile) line(i int) string {
	f.cover(i)
	return f.text[f.off[i-f.base]:f.off[i-f.base+1]]
}

// start is the byte offset of line i (or the text's end for i == nrec).
func (f *lineFile) start(i int) int {
	if i >= f.nrec {
		return len(f.text)
	}
	f.cover(i)
	return f.off[i-f.base]
}

func (f *lineFile) changed(i int) bool {
	return i >= f.lo && i < f.hi && f.chg[i-f.base]
}

func (f *lineFile) setChanged(i int, c bool) {
	f.cover(i)
	f.chg[i-f.base] = c
}

// cover splits out line i (0 <= i < nrec), and a few more lines beyond it,
// since whoever reads a line usually reads its neighbours next.
func (f *lineFile) cover(i int) {
	switch {
	case i >= f.hi:
		f.growDown(min(f.nrec, i+8))
	case i < f.lo:
		f.growUp(max(0, i-8))
	}
}

func (f *lineFile) growDown(hi int) {
	pos := f.off[len(f.off)-1]
	for ; f.hi < hi; f.hi++ {
		i := strings.IndexByte(f.text[pos:], '\n')
		if i < 0 {
			pos = len(f.text)
		} else {
			pos += i + 1
		}
		f.off = append(f.off, pos)
		f.chg = append(f.chg, false)
	}
}

func (f *lineFile) growUp(lo int) {
	if need := f.base - lo; need > 0 {
		// Room for the lines wanted and as many again as the window has, so
		// that a long climb (a group sliding up a repetitive file) copies the
		// window only a logarithmic number of times.
		room := need + max(16, f.hi-lo)
		off := make([]int, room+len(f.off), room+cap(f.off))
		copy(off[room:], f.off)
		chg := make([]bool, room+len(f.chg), room+cap(f.chg))
		copy(chg[room:], f.chg)
		f.off, f.chg, f.base = off, chg, f.base-room
	}
	pos := f.off[f.lo-f.base]
	for ; f.lo > lo; f.lo-- {
		pos = strings.LastIndexByte(f.text[:pos-1], '\n') + 1
		f.off[f.lo-1-f.base] = pos
	}
}

// same reports whether lines i and j are equal, as xdiff's recs_match.
func (f *lineFile) same(i, j int) bool {
	if i >= f.midLo && i < f.midHi && j >= f.midLo && j < f.midHi {
		return f.ids[i-f.midLo] == f.ids[j-f.midLo]
	}
	return f.line(i) == f.line(j)
}

// firstChanged and lastChanged return -1 when no line is changed.
func (f *lineFile) firstChanged() int {
	for i := f.lo; i < f.hi; i++ {
		if f.chg[i-f.base] {
			return i
		}
	}
	return -1
}

func (f *lineFile) lastChanged() int {
	for i := f.hi - 1; i >= f.lo; i-- {
		if f.chg[i-f.base] {
			return i
		}
	}
	return -1
}

func (f *lineFile) countChanged() int {
	n := 0
	for _, c := range f.chg[f.lo-f.base : f.hi-f.base] {
		if c {
			n++
		}
	}
	return n
}

// lineDiff is the diff of two texts: which lines of each are changed.
type lineDiff struct {
	old, new lineFile
}

// lineChange is one run of changes, as xdiff's xdchange_t: n1 lines removed
// at old line i1 (0-based) and n2 lines added at new line i2.
type lineChange struct {
	i1, i2, n1, n2 int
}

// diffLines diffs two texts line by line as `git diff` does.
func diffLines(oldText, newText string) *lineDiff {
	d := &lineDiff{}
	// The common head, cut back to a line start.
	p := commonPrefixLen(oldText, newText)
	p = strings.LastIndexByte(oldText[:p], '\n') + 1
	// The common tail, cut forward to a line start in both texts.
	a, b := oldText[p:], newText[p:]
	t := commonSuffixLen(a, b)
	if la, lb := len(a)-t, len(b)-t; (la > 0 && a[la-1] != '\n') || (lb > 0 && b[lb-1] != '\n') {
		if i := strings.IndexByte(a[la:], '\n'); i >= 0 {
			t -= i + 1
		} else {
			t = 0
		}
	}
	head := strings.Count(oldText[:p], "\n")
	d.old.init(oldText, p, len(oldText)-t, head)
	d.new.init(newText, p, len(newText)-t, head)
	d.diffMiddle(oldText[:p], oldText[len(oldText)-t:])
	compactGroups(&d.old, &d.new)
	compactGroups(&d.new, &d.old)
	return d
}

// cmpBlock is how many bytes commonPrefix and commonSuffix compare at once.
const cmpBlock = 64

// commonPrefixLen is the length of the longest common prefix of a and b. It
// compares blocks first, which the runtime does many bytes at a time.
func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+cmpBlock <= n && a[i:i+cmpBlock] == b[i:i+cmpBlock] {
		i += cmpBlock
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffixLen(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+cmpBlock <= n && a[len(a)-i-cmpBlock:len(a)-i] == b[len(b)-i-cmpBlock:len(b)-i] {
		i += cmpBlock
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// xdiff's constants (xprepare.c, xdiffi.c).
const (
	maxEqLimit       = 1024 // xdl_cleanup_records: lines matched this often are "multimatch"
	simScanWindow    = 100  // xdl_clean_mmatch looks this far either way
	keepDiscardRun   = 4    // XDL_KPDIS_RUN
	maxCostMin       = 256  // the least edit cost after which a split is forced
	heurMinCost      = 256  // the edit cost after which good snakes are taken
	snakeCount       = 20   // a snake this long is a good one
	heurFactor       = 4    // XDL_K_HEUR
	maxIndent        = 200
	maxBlanks        = 20
	maxIndentSliding = 100
)

// diffMiddle marks the changed lines of the middles, as xdl_do_diff does
// for the records left between the common head and tail.
func (d *lineDiff) diffMiddle(head, tail string) {
	a, b := &d.old, &d.new
	na, nb := a.midHi-a.midLo, b.midHi-b.midLo
	chgA := a.chg[a.midLo-a.base : a.midHi-a.base]
	chgB := b.chg[b.midLo-b.base : b.midHi-b.base]
	if na == 0 || nb == 0 {
		markChanged(chgA)
		markChanged(chgB)
		return
	}

	sc := diffScratchPool.Get().(*diffScratch)
	cl := &sc.classes
	defer func() {
		clear(cl.lines) // the pool must not keep the texts alive
		diffScratchPool.Put(sc)
	}()
	cl.reset(na + nb)
	a.ids, b.ids = make([]int32, na), make([]int32, nb)
	shared := false
	for side, f := range []*lineFile{a, b} {
		off := f.off[f.midLo-f.base:]
		for i := range f.ids {
			id := cl.class(f.text[off[i]:off[i+1]], true)
			cl.count[side][id]++
			shared = shared || (side == 1 && cl.count[0][id] > 0)
			f.ids[i] = id
		}
	}
	if !shared {
		// Nothing can match: xdiff would mark every line, discarded or not.
		markChanged(chgA)
		markChanged(chgB)
		return
	}
	// xdiff counts a line's matches in the whole other file, head and tail
	// included, and discards by those counts; without them a blank line or
	// a lone brace inside a rewritten block would be matched where git
	// shows it changed. The head and tail are the same on both sides.
	cl.buildFilter()
	for _, s := range []string{head, tail} {
		for len(s) > 0 {
			i := strings.IndexByte(s, '\n') + 1
			if i == 0 {
				i = len(s)
			}
			if l := s[:i]; cl.mayHave(l) {
				if id := cl.class(l, false); id >= 0 {
					cl.count[0][id]++
					cl.count[1][id]++
				}
			}
			s = s[i:]
		}
	}

	// Lines without a match on the other side are changed outright, and so
	// are lines with very many matches amid such lines (xdl_cleanup_records);
	// the rest go to the Myers diff.
	m := &myers{chgA: chgA, chgB: chgB}
	sc.dis = withLen(sc.dis, max(na, nb))
	m.a, m.ia = keptLines(a, cl.count[1], chgA, sc.dis, sc.keptA, sc.indexA)
	m.b, m.ib = keptLines(b, cl.count[0], chgB, sc.dis, sc.keptB, sc.indexB)
	sc.keptA, sc.indexA, sc.keptB, sc.indexB = m.a, m.ia, m.b, m.ib
	ndiags := len(m.a) + len(m.b) + 3
	sc.kv = withLen(sc.kv, 2*ndiags)
	m.kf, m.kb = sc.kv[:ndiags], sc.kv[ndiags:]
	m.k0 = len(m.b) + 1
	m.maxCost = max(bogoSqrt(ndiags), maxCostMin)
	m.compare(0, len(m.a), 0, len(m.b), false)
}

// diffScratch holds a diff's working memory, reused from diff to diff.
type diffScratch struct {
	classes                      lineClasses
	dis                          []uint8
	keptA, keptB, indexA, indexB []int32
	kv                           []int32
}

var diffScratchPool = sync.Pool{New: func() any { return new(diffScratch) }}

// withLen returns s with length n, reallocated if too small, contents left.
func withLen[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// lineClasses numbers distinct lines, as xdiff's classifier does: a hash
// table probed linearly, much cheaper here than a map[string]int32.
type lineClasses struct {
	slots  []uint64 // a hash's top half and its class+1, or 0 when free
	mask   uint64
	lines  []string   // each class's line
	count  [2][]int32 // how often each class occurs in either file
	filter []uint64   // see buildFilter
}

var classSeed = maphash.MakeSeed()

// reset empties the table for up to n distinct lines.
func (c *lineClasses) reset(n int) {
	size := 64
	for size < 2*n {
		size <<= 1
	}
	c.slots = withLen(c.slots, size)
	clear(c.slots)
	c.mask = uint64(size - 1)
	c.lines, c.count[0], c.count[1] = c.lines[:0], c.count[0][:0], c.count[1][:0]
}

// class returns the class of line, adding one if add is set, else -1.
func (c *lineClasses) class(line string, add bool) int32 {
	h := maphash.String(classSeed, line)
	for i := h & c.mask; ; i = (i + 1) & c.mask {
		s := c.slots[i]
		if s == 0 {
			if !add {
				return -1
			}
			id := int32(len(c.lines))
			c.slots[i] = h>>32<<32 | uint64(id+1)
			c.lines = append(c.lines, line)
			c.count[0], c.count[1] = append(c.count[0], 0), append(c.count[1], 0)
			return id
		}
		if s>>32 == h>>32 && c.lines[uint32(s)-1] == line {
			return int32(uint32(s) - 1)
		}
	}
}

// buildFilter notes the classes' lines in a bitmap keyed by a line's
// length and a few of its bytes, which tells most other lines apart
// without hashing them: the common head and tail of a file are mostly
// lines that no middle has.
func (c *lineClasses) buildFilter() {
	c.filter = withLen(c.filter, lineFilterWords)
	if len(c.lines) > lineFilterWords*64/8 {
		// Too full to tell much apart: let every line through.
		for i := range c.filter {
			c.filter[i] = ^uint64(0)
		}
		return
	}
	clear(c.filter)
	for _, l := range c.lines {
		k := lineFilterKey(l)
		c.filter[k/64] |= 1 << (k % 64)
	}
}

const lineFilterWords = 1024 // a 64 Kibit filter, 8 KiB

func (c *lineClasses) mayHave(line string) bool {
	k := lineFilterKey(line)
	return c.filter[k/64]&(1<<(k%64)) != 0
}

// filterKey hashes a non-empty line cheaply. Its last byte is mostly its
// newline, so the one before is the telling one.
func lineFilterKey(line string) uint32 {
	x := uint32(len(line))*0x9e3779b1 ^ uint32(line[0])<<16 ^ uint32(line[len(line)/2])<<8 ^ uint32(line[max(0, len(line)-2)])
	x ^= x >> 15
	x *= 0x85ebca6b
	return x >> (32 - 16)
}

func markChanged(chg []bool) {
	for i := range chg {
		chg[i] = true
	}
}

// keptLines returns, in ids and index (reused), the classes and middle
// indexes of the lines of f worth diffing, given each class's count on the
// other side, and marks the rest. dis is scratch space.
func keptLines(f *lineFile, other []int32, chg []bool, dis []uint8, ids, index []int32) ([]int32, []int32) {
	limit := int32(min(bogoSqrt(f.nrec), maxEqLimit))
	dis = dis[:len(f.ids)] // 0: no match, 1: kept, 2: many matches
	for i, id := range f.ids {
		switch n := other[id]; {
		case n == 0:
			dis[i] = 0
		case n >= limit:
			dis[i] = 2
		default:
			dis[i] = 1
		}
	}
	ids, index = withLen(ids, len(f.ids)), withLen(index, len(f.ids))
	n := 0
	for i, d := range dis {
		if d == 1 || (d == 2 && !discardMultimatch(dis, i)) {
			ids[n], index[n] = f.ids[i], int32(i)
			n++
		} else {
			chg[i] = true
		}
	}
	return ids[:n], index[:n]
}

// discardMultimatch is xdl_clean_mmatch: a line with many matches goes when
// it sits in a run of unmatched lines (with other such lines), where
// matching it would only split a block of changes.
func discardMultimatch(dis []uint8, i int) bool {
	lo, hi := max(0, i-simScanWindow), min(len(dis)-1, i+simScanWindow)
	none, many := 0, 1
	for j := i - 1; j >= lo && dis[j] != 1; j-- {
		if dis[j] == 0 {
			none++
		} else {
			many++
		}
	}
	if none == 0 {
		return false
	}
	noneAfter := 0
	for j := i + 1; j <= hi && dis[j] != 1; j++ {
		if dis[j] == 0 {
			noneAfter++
		} else {
			many++
		}
	}
	if noneAfter == 0 {
		return false
	}
	// many counts line i twice, as xdiff's rpdis0 + rpdis1 do.
	many++
	return many*keepDiscardRun < many+none+noneAfter
}

// bogoSqrt is xdl_bogosqrt, a power of two near the square root.
func bogoSqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// myers is xdiff's divide and conquer Myers diff over the kept lines.
type myers struct {
	a, b       []int32 // classes of the kept lines
	ia, ib     []int32 // their indexes in the middles
	chgA, chgB []bool  // the middles' change marks

	kf, kb  []int32 // furthest reaching x per diagonal k, at kf[k0+k]
	k0      int
	maxCost int
}

// compare marks the changes between a[off1:lim1] and b[off2:lim2].
func (m *myers) compare(off1, lim1, off2, lim2 int, needMin bool) {
	for {
		for off1 < lim1 && off2 < lim2 && m.a[off1] == m.b[off2] {
			off1++
			off2++
		}
		for off1 < lim1 && off2 < lim2 && m.a[lim1-1] == m.b[lim2-1] {
			lim1--
			lim2--
		}
		switch {
		case off1 == lim1:
			for _, i := range m.ib[off2:lim2] {
				m.chgB[i] = true
			}
			return
		case off2 == lim2:
			for _, i := range m.ia[off1:lim1] {
				m.chgA[i] = true
			}
			return
		}
		x, y, minLo, minHi := m.split(off1, lim1, off2, lim2, needMin)
		m.compare(off1, x, off2, y, minLo)
		off1, off2, needMin = x, y, minHi
	}
}

// split finds where to cut the box (off1, off2)-(lim1, lim2): the middle
// snake of a shortest script, or, once the search grows expensive, a point
// on a good snake or just the furthest reached. The bools say whether the
// halves must be diffed minimally. This follows xdl_split step by step,
// since its choices among equally short scripts show in git's hunks.
func (m *myers) split(off1, lim1, off2, lim2 int, needMin bool) (x, y int, minLo, minHi bool) {
	a, b, kf, kb, k0 := m.a, m.b, m.kf, m.kb, m.k0
	fa, fb := a[:lim1], b[:lim2]         // where forward snakes may run
	ba, bb := a[off1:lim1], b[off2:lim2] // where backward ones may
	dmin, dmax := off1-lim2, lim1-off2
	fmid, bmid := off1-off2, lim1-lim2
	odd := (fmid-bmid)&1 != 0
	fmin, fmax, bmin, bmax := fmid, fmid, bmid, bmid
	kf[k0+fmid] = int32(off1)
	kb[k0+bmid] = int32(lim1)
	const unreached = math.MaxInt32

	for cost := 1; ; cost++ {
		gotSnake := false
		// Widen the diagonals searched by one either way, or narrow them
		// where the box ends; the diagonal beyond is primed so that the
		// edges need no special case.
		if fmin > dmin {
			fmin--
			kf[k0+fmin-1] = -1
		} else {
			fmin++
		}
		if fmax < dmax {
			fmax++
			kf[k0+fmax+1] = -1
		} else {
			fmax--
		}
		// Diagonal k is at w[k-fmin+1] of these windows, which lets the
		// compiler drop most bounds checks.
		fw, bw := kf[k0+fmin-1:k0+fmax+2], kb[k0+fmin-1:k0+fmax+2]
		for j := len(fw) - 2; j >= 1; j -= 2 {
			k := fmin - 1 + j
			var i1 int
			if fw[j-1] >= fw[j+1] {
				i1 = int(fw[j-1]) + 1
			} else {
				i1 = int(fw[j+1])
			}
			from := i1
			i2 := i1 - k
			// The unsigned comparisons spare the loop its bounds checks.
			for uint(i1) < uint(len(fa)) && uint(i2) < uint(len(fb)) && fa[i1] == fb[i2] {
				i1++
				i2++
			}
			if i1-from > snakeCount {
				gotSnake = true
			}
			fw[j] = int32(i1)
			if odd && bmin <= k && k <= bmax && int(bw[j]) <= i1 {
				return i1, i2, true, true
			}
		}

		if bmin > dmin {
			bmin--
			kb[k0+bmin-1] = unreached
		} else {
			bmin++
		}
		if bmax < dmax {
			bmax++
			kb[k0+bmax+1] = unreached
		} else {
			bmax--
		}
		bw, fw = kb[k0+bmin-1:k0+bmax+2], kf[k0+bmin-1:k0+bmax+2]
		for j := len(bw) - 2; j >= 1; j -= 2 {
			k := bmin - 1 + j
			var i1 int
			if bw[j-1] < bw[j+1] {
				i1 = int(bw[j-1])
			} else {
				i1 = int(bw[j+1]) - 1
			}
			from := i1
			i2 := i1 - k
			// x, y index ba and bb: the lines before i1 and i2.
			for x, y := i1-off1-1, i2-off2-1; uint(x) < uint(len(ba)) && uint(y) < uint(len(bb)) && ba[x] == bb[y]; x, y = x-1, y-1 {
				i1--
				i2--
			}
			if from-i1 > snakeCount {
				gotSnake = true
			}
			bw[j] = int32(i1)
			if !odd && fmin <= k && k <= fmax && i1 <= int(fw[j]) {
				return i1, i2, true, true
			}
		}

		if needMin {
			continue
		}

		// Past the trigger cost, take a diagonal that got far (measured from
		// the corner, less its distance from the middle diagonal) if it ends
		// in a snake of snakeCount matches, on the side it came from.
		if gotSnake && cost > heurMinCost {
			best := 0
			for k := fmax; k >= fmin; k -= 2 {
				dd := absInt(k - fmid)
				i1 := int(kf[k0+k])
				i2 := i1 - k
				v := (i1 - off1) + (i2 - off2) - dd
				if v > heurFactor*cost && v > best &&
					off1+snakeCount <= i1 && i1 < lim1 && off2+snakeCount <= i2 && i2 < lim2 &&
					sameClasses(a[i1-snakeCount:i1], b[i2-snakeCount:i2]) {
					best, x, y = v, i1, i2
				}
			}
			if best > 0 {
				return x, y, true, false
			}
			for k := bmax; k >= bmin; k -= 2 {
				dd := absInt(k - bmid)
				i1 := int(kb[k0+k])
				i2 := i1 - k
				v := (lim1 - i1) + (lim2 - i2) - dd
				if v > heurFactor*cost && v > best &&
					off1 < i1 && i1 <= lim1-snakeCount && off2 < i2 && i2 <= lim2-snakeCount &&
					sameClasses(a[i1:i1+snakeCount], b[i2:i2+snakeCount]) {
					best, x, y = v, i1, i2
				}
			}
			if best > 0 {
				return x, y, false, true
			}
		}

		// Too expensive: cut at the point furthest from either corner.
		if cost >= m.maxCost {
			fbest, fbest1 := -1, -1
			for k := fmax; k >= fmin; k -= 2 {
				i1 := min(int(kf[k0+k]), lim1)
				i2 := i1 - k
				if lim2 < i2 {
					i1, i2 = lim2+k, lim2
				}
				if fbest < i1+i2 {
					fbest, fbest1 = i1+i2, i1
				}
			}
			bbest, bbest1 := unreached, unreached
			for k := bmax; k >= bmin; k -= 2 {
				i1 := max(off1, int(kb[k0+k]))
				i2 := i1 - k
				if i2 < off2 {
					i1, i2 = off2+k, off2
				}
				if i1+i2 < bbest {
					bbest, bbest1 = i1+i2, i1
				}
			}
			if (lim1+lim2)-bbest < fbest-(off1+off2) {
				return fbest1, fbest - fbest1, true, false
			}
			return bbest1, bbest - bbest1, false, true
		}
	}
}

func sameClasses(a, b []int32) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// changeGroup is a run of changed lines [start, end) of one file, or an empty
// run at start; xdiff's struct xdlgroup.
type changeGroup struct{ start, end int }

func (f *lineFile) groupAt(i int) changeGroup {
	g := changeGroup{i, i}
	for f.changed(g.end) {
		g.end++
	}
	return g
}

func (f *lineFile) nextGroup(g *changeGroup) bool {
	if g.end == f.nrec {
		return false
	}
	g.start = g.end + 1
	for g.end = g.start; f.changed(g.end); g.end++ {
	}
	return true
}

func (f *lineFile) prevGroup(g *changeGroup) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	for g.start = g.end; f.changed(g.start - 1); g.start-- {
	}
	return true
}

// slideDown moves g one line down if its first line equals the line after
// it, merging it with a group it runs into.
func (f *lineFile) slideDown(g *changeGroup) bool {
	if g.end >= f.nrec || !f.same(g.start, g.end) {
		return false
	}
	f.setChanged(g.start, false)
	f.setChanged(g.end, true)
	g.start++
	g.end++
	for f.changed(g.end) {
		g.end++
	}
	return true
}

func (f *lineFile) slideUp(g *changeGroup) bool {
	if g.start == 0 || !f.same(g.start-1, g.end-1) {
		return false
	}
	f.setChanged(g.start-1, true)
	f.setChanged(g.end-1, false)
	g.start--
	g.end--
	for f.changed(g.start - 1) {
		g.start--
	}
	return true
}

// syncBroken reports a broken invariant: the groups of the two files pair
// up one to one, as xdiff's BUG() checks do.
const syncBroken = "history: line diff: change groups out of step"

// compactGroups slides the change groups of f, as xdl_change_compact: each as far
// up and down as equal lines allow, merging what it meets, then where it
// lines up with a change in o or, failing that, where the indent
// heuristic scores it best.
func compactGroups(f, o *lineFile) {
	last := f.lastChanged()
	if last < 0 {
		return
	}
	// Before the first change of either file all lines pair up, so both
	// walks through the groups may start there.
	start := f.firstChanged()
	if s := o.firstChanged(); s >= 0 {
		start = min(start, s)
	}
	g, og := f.groupAt(start), o.groupAt(start)
	for {
		if g.end != g.start {
			var size, earliestEnd int
			for {
				size = g.end - g.start
				matchingEnd := -1
				for f.slideUp(&g) {
					if !o.prevGroup(&og) {
						panic(syncBroken)
					}
				}
				earliestEnd = g.end
				if og.end > og.start {
					matchingEnd = g.end
				}
				for f.slideDown(&g) {
					if !o.nextGroup(&og) {
						panic(syncBroken)
					}
					if og.end > og.start {
						matchingEnd = g.end
					}
				}
				if size == g.end-g.start {
					if g.end != earliestEnd {
						f.placeGroup(o, &g, &og, size, earliestEnd, matchingEnd)
					}
					break
				}
			}
		}
		// Later groups are only the original changes after this one.
		if g.end > last || !f.nextGroup(&g) {
			break
		}
		if !o.nextGroup(&og) {
			panic(syncBroken)
		}
	}
}

// placeGroup moves g, slid as far down as it goes, back up to where it
// lines up with a change in o (so the two become one hunk), else to the
// place the indent heuristic likes best.
func (f *lineFile) placeGroup(o *lineFile, g, og *changeGroup, size, earliestEnd, matchingEnd int) {
	best := g.end
	if matchingEnd < 0 {
		var bestScore splitScore
		best = -1
		for shift := max(earliestEnd, g.end-size-1, g.end-maxIndentSliding); shift <= g.end; shift++ {
			var s splitScore
			s.add(f.measureSplit(shift))
			s.add(f.measureSplit(shift - size))
			// <= prefers the lowest place of those scoring best.
			if best == -1 || s.cmp(bestScore) <= 0 {
				bestScore, best = s, shift
			}
		}
	}
	for (matchingEnd >= 0 && og.end == og.start) || (matchingEnd < 0 && g.end > best) {
		if !f.slideUp(g) || !o.prevGroup(og) {
			panic(syncBroken)
		}
	}
}

// lineIndent is a line's indentation (tabs to multiples of 8), capped at
// maxIndent, or -1 for a blank line; xdiff's get_indent.
func lineIndent(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		case '\n', '\r':
		default:
			return n
		}
		if n >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// splitMeasure describes the place above line split (xdiff's struct
// split_measurement).
type splitMeasure struct {
	endOfFile  bool
	indent     int // of the line after the split, -1 if blank
	preBlank   int // blank lines just above the split
	preIndent  int // of the nearest non-blank line above, -1 if none
	postBlank  int // blank lines after the line after the split
	postIndent int // of the next non-blank line after that, -1 if none
}

func (f *lineFile) measureSplit(split int) splitMeasure {
	m := splitMeasure{indent: -1, preIndent: -1, postIndent: -1}
	if split >= f.nrec {
		m.endOfFile = true
	} else {
		m.indent = lineIndent(f.line(split))
	}
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = lineIndent(f.line(i)); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	for i := split + 1; i < f.nrec; i++ {
		if m.postIndent = lineIndent(f.line(i)); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

// splitScore is the badness of a group's two splits; xdiff's split_score
// with the weights git found on a corpus of real diffs.
type splitScore struct {
	effectiveIndent int
	penalty         int
}

func (s *splitScore) add(m splitMeasure) {
	const (
		startOfFilePenalty             = 1
		endOfFilePenalty               = 21
		totalBlankWeight               = -30
		postBlankWeight                = 6
		relativeIndentPenalty          = -4
		relativeIndentWithBlankPenalty = 10
		relativeOutdentPenalty         = 24
		relativeOutdentWithBlank       = 17
		relativeDedentPenalty          = 23
		relativeDedentWithBlank        = 17
	)
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	ind := m.indent
	if ind == -1 {
		ind = m.postIndent
	}
	blanks := totalBlank != 0
	s.effectiveIndent += ind
	switch {
	case ind == -1, m.preIndent == -1, ind == m.preIndent:
	case ind > m.preIndent:
		s.penalty += penaltyIf(blanks, relativeIndentWithBlankPenalty, relativeIndentPenalty)
	case m.postIndent != -1 && m.postIndent > ind:
		// Less indented than the line before but more than the next: likely
		// a block's start (an "else", a new function).
		s.penalty += penaltyIf(blanks, relativeOutdentWithBlank, relativeOutdentPenalty)
	default:
		// Likely a block's end.
		s.penalty += penaltyIf(blanks, relativeDedentWithBlank, relativeDedentPenalty)
	}
}

func penaltyIf(c bool, yes, no int) int {
	if c {
		return yes
	}
	return no
}

// cmp orders scores: only the sign of the indent difference counts.
func (s splitScore) cmp(t splitScore) int {
	const indentWeight = 60
	c := 0
	switch {
	case s.effectiveIndent > t.effectiveIndent:
		c = 1
	case s.effectiveIndent < t.effectiveIndent:
		c = -1
	}
	return indentWeight*c + s.penalty - t.penalty
}

// changes lists the runs of changes, as xdl_build_script does.
func (d *lineDiff) changes() []lineChange {
	a, b := &d.old, &d.new
	i1, s := a.firstChanged(), b.firstChanged()
	if i1 < 0 || (s >= 0 && s < i1) {
		i1 = s
	}
	if i1 < 0 {
		return nil
	}
	var out []lineChange
	end1, end2 := a.lastChanged()+1, b.lastChanged()+1
	for i2 := i1; i1 < end1 || i2 < end2; i1, i2 = i1+1, i2+1 {
		if a.changed(i1) || b.changed(i2) {
			c := lineChange{i1: i1, i2: i2}
			for a.changed(i1) {
				i1++
			}
			for b.changed(i2) {
				i2++
			}
			c.n1, c.n2 = i1-c.i1, i2-c.i2
			out = append(out, c)
		}
	}
	return out
}

// Count counts the lines a diff adds and removes, without its text.
func Count(oldText, newText string) (added, removed int) {
	if oldText == newText {
		return 0, 0
	}
	d := diffLines(oldText, newText)
	return d.new.countChanged(), d.old.countChanged()
}
