package gitobjects

import (
	"sync"
	"sync/atomic"

	"github.com/digest-cli/digest/internal/offheap"
)

// baseCache keeps recently inflated delta bases, as git's delta base cache
// does: reading history newest first, one version of a file is the base of
// the next one read.
//
// The bases live in one ring outside the Go heap, where they are inflated
// and their deltas applied in place, and overwritten oldest first. Held in
// the heap, git.git's 32 MiB of bases made the collector let the heap grow
// by as much again. (Oldest first loses almost nothing against least
// recently used there: 315,315 hits against 320,632.) A slot being read or
// filled is pinned; the ring never overwrites a pinned slot, and a base
// that would have to is simply not cached.
type baseCache struct {
	mu      sync.Mutex
	ring    []byte
	release func()
	head    int     // where the next slot starts
	queue   []*slot // in the order written, oldest first from queue[oldest]
	oldest  int
	byKey   map[baseKey]*slot
}

type baseKey struct {
	pack *pack
	off  int64
}

type slot struct {
	key    baseKey
	pos, n int
	typ    int
	pins   atomic.Int32
}

func newBaseCache(limit int) *baseCache {
	ring, release := offheap.Slice[byte](limit)
	return &baseCache{ring: ring, release: release, byKey: make(map[baseKey]*slot)}
}

// close gives the ring back; nothing may be read from the cache after.
func (c *baseCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.release()
	c.ring, c.release = nil, func() {}
	clear(c.byKey)
	c.queue, c.oldest, c.head = nil, 0, 0
}

// view returns the base at k, pinned: the caller reads data in place and
// then calls unpin.
func (c *baseCache) view(k baseKey) (s *slot, data []byte, ok bool) {
	c.mu.Lock()
	s, ok = c.byKey[k]
	if ok {
		s.pins.Add(1)
	}
	c.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	return s, c.ring[s.pos : s.pos+s.n : s.pos+s.n], true
}

// unpin ends a view, or the filling of a reserved slot.
func (*baseCache) unpin(s *slot) {
	if s != nil {
		s.pins.Add(-1)
	}
}

// typeOf returns the type of the base at k.
func (c *baseCache) typeOf(k baseKey) (typ int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.byKey[k]
	if !ok {
		return 0, false
	}
	return s.typ, true
}

// reserve returns a pinned slot of n bytes to fill and publish, or nil if
// the base should not be cached: it alone would take more than an eighth of
// the ring, pushing out many smaller bases for one unlikely reuse, or the
// bytes it would take are being read.
func (c *baseCache) reserve(n int) (*slot, []byte) {
	if n <= 0 || n > len(c.ring)/8 {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	start := c.head
	wrapped := start+n > len(c.ring)
	if wrapped {
		start = 0 // the rest of the ring is too short: it goes too
	}
	end := start + n
	inTheWay := func(s *slot) bool {
		return (wrapped && s.pos >= c.head) || (s.pos < end && s.pos+s.n > start)
	}
	last := c.oldest
	for ; last < len(c.queue) && inTheWay(c.queue[last]); last++ {
		if c.queue[last].pins.Load() > 0 {
			return nil, nil
		}
	}
	for i := c.oldest; i < last; i++ {
		if s := c.queue[i]; c.byKey[s.key] == s {
			delete(c.byKey, s.key)
		}
		c.queue[i] = nil
	}
	c.oldest = last
	if c.oldest > 1024 && c.oldest > len(c.queue)/2 {
		c.queue = append(c.queue[:0], c.queue[c.oldest:]...)
		c.oldest = 0
	}
	s := &slot{pos: start, n: n}
	s.pins.Store(1)
	c.queue = append(c.queue, s)
	c.head = end
	return s, c.ring[start:end:end]
}

// publish makes a filled slot readable as the base at k; its filler keeps
// its pin until it unpins it.
func (c *baseCache) publish(s *slot, k baseKey, typ int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.key, s.typ = k, typ
	if _, ok := c.byKey[k]; !ok {
		c.byKey[k] = s
	}
}
