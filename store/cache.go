package store

import (
	"sync"
	"time"
)

// cacheTTL is how long a process trusts a cached read (a token, an account's brand): a change
// made through another process (another waybill on the same PostgreSQL database) shows within
// it. A change made through this process invalidates the cache at once.
const cacheTTL = time.Second

// cacheMax bounds a cache's entries; a full cache starts over.
const cacheMax = 10000

// ttlCache is a small map of reads, each trusted for cacheTTL. Its owner invalidates it after
// every change to what it caches; a read that started before an invalidation is not stored, so
// a stale value can never be cached after the change that made it stale.
type ttlCache[V any] struct {
	mu      sync.Mutex
	gen     uint64
	entries map[string]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

// get returns the cached value for key, if it is fresh.
func (c *ttlCache[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || time.Now().After(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// begin is called before reading the value to cache; put stores it only if no invalidation
// happened since.
func (c *ttlCache[V]) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *ttlCache[V]) put(gen uint64, key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= cacheMax {
		c.entries = map[string]ttlEntry[V]{}
	}
	c.entries[key] = ttlEntry[V]{v, time.Now().Add(cacheTTL)}
}

// invalidate forgets every entry, and any read in flight.
func (c *ttlCache[V]) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.entries = nil
}
