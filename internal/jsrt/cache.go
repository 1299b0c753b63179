package jsrt

import (
	"container/list"
	"sync"
)

// programCache is a bounded LRU of compile outcomes keyed by the SHA-256 of
// the code. Refusals are cached too, so the same bad code is not parsed and
// loaded again and again.
type programCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used *cacheEntry
	items map[[32]byte]*list.Element
}

type cacheEntry struct {
	key  [32]byte
	prog *Program
	err  *CompileError
}

func newProgramCache(max int) *programCache {
	return &programCache{max: max, order: list.New(), items: make(map[[32]byte]*list.Element)}
}

func (c *programCache) get(key [32]byte) (*Program, *CompileError, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, nil, false
	}
	c.order.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	return e.prog, e.err, true
}

func (c *programCache) put(key [32]byte, p *Program, ce *CompileError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&cacheEntry{key: key, prog: p, err: ce})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

func (c *programCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
