package gitobjects

import (
	"container/list"
	"sync"
)

// baseCache keeps recently inflated delta bases, as git's delta base cache
// does: reading history newest first, one version of a file is the base of
// the next one read. Entries are shared and never modified.
type baseCache struct {
	mu    sync.Mutex
	limit int
	bytes int
	order *list.List // front: most recently used
	byKey map[baseKey]*list.Element
}

type baseKey struct {
	pack *pack
	off  int64
}

type cached struct {
	key  baseKey
	typ  int
	data []byte
}

func newBaseCache(limit int) *baseCache {
	return &baseCache{limit: limit, order: list.New(), byKey: make(map[baseKey]*list.Element)}
}

func (c *baseCache) get(k baseKey) (typ int, data []byte, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return 0, nil, false
	}
	c.order.MoveToFront(e)
	v := e.Value.(*cached)
	return v.typ, v.data, true
}

// put keeps data unless it alone would take more than an eighth of the
// cache, which would push out many smaller bases for one unlikely reuse.
func (c *baseCache) put(k baseKey, typ int, data []byte) {
	if len(data) > c.limit/8 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.order.PushFront(&cached{k, typ, data})
	c.bytes += len(data)
	for c.bytes > c.limit {
		last := c.order.Back()
		v := last.Value.(*cached)
		c.order.Remove(last)
		delete(c.byKey, v.key)
		c.bytes -= len(v.data)
	}
}
