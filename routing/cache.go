package routing

import (
	"container/list"
	"sync"
	"time"
)

// Response cache defaults.
const (
	// DefaultCacheMaxBytes bounds the cache's memory.
	DefaultCacheMaxBytes = 64 << 20
	// DefaultCacheTTL is how long a response is served again: long enough
	// for retries and repeated evaluation runs, short enough that a model
	// update shows soon.
	DefaultCacheTTL = 10 * time.Minute
)

// cacheEntryOverhead is counted per entry on top of key and body, so many
// tiny entries cannot hold far more memory than MaxBytes says.
const cacheEntryOverhead = 96

// Cache holds response bodies by cache fingerprint (fp_c_), least recently
// used first out, bounded by total size and by age. It is safe for
// concurrent use; its zero value is ready, with the defaults. Set the
// configuration fields before first use.
type Cache struct {
	// MaxBytes bounds the size of keys and bodies held. A body larger than
	// MaxBytes/8 is never stored: one response must not flush the cache.
	// Default DefaultCacheMaxBytes.
	MaxBytes int64
	// TTL is how long after Put a body is served. Default DefaultCacheTTL.
	TTL time.Duration

	mu    sync.Mutex
	items map[string]*list.Element
	// lru holds *cacheEntry, most recently used first.
	lru  list.List
	size int64
}

type cacheEntry struct {
	key     string
	body    []byte
	expires time.Time
}

// Get returns the body cached under key, unexpired at now. The caller must
// not modify it: it is shared with every other hit.
func (c *Cache) Get(key string, now time.Time) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.lru.MoveToFront(el)
	return e.body, true
}

// Put caches a copy of body under key until now+TTL, evicting the least
// recently used bodies past MaxBytes. A body over MaxBytes/8 leaves the
// cache unchanged.
func (c *Cache) Put(key string, body []byte, now time.Time) {
	maxBytes := c.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultCacheMaxBytes
	}
	ttl := c.TTL
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	n := entrySize(key, body)
	if n > maxBytes/8 {
		return
	}
	e := &cacheEntry{key: key, body: append([]byte(nil), body...), expires: now.Add(ttl)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items == nil {
		c.items = map[string]*list.Element{}
	}
	if el, ok := c.items[key]; ok {
		c.remove(el)
	}
	c.items[key] = c.lru.PushFront(e)
	c.size += n
	// Expired bodies at the cold end go too: they would only be evicted
	// later, holding memory meanwhile.
	for back := c.lru.Back(); c.size > maxBytes || !now.Before(back.Value.(*cacheEntry).expires); back = c.lru.Back() {
		c.remove(back)
	}
}

// Len returns the number of entries held, expired ones included until they
// are evicted or asked for.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Bytes returns the size the entries count against MaxBytes.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// remove drops an entry; the caller holds mu.
func (c *Cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.items, e.key)
	c.size -= entrySize(e.key, e.body)
}

// entrySize is what an entry counts against MaxBytes.
func entrySize(key string, body []byte) int64 {
	return int64(len(key)+len(body)) + cacheEntryOverhead
}
