package title

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// queryCacheBytes bounds what the query cache holds (its keys and hits, estimated). A page of
// 25 records asks for about 50 hits, some 3 KB: about 1,300 queries.
const queryCacheBytes = 4 << 20

// queryCacheMaxHits is the largest SearchSorted answer the cache keeps; larger ones (deep
// pages read in growing batches) are searched every time.
const queryCacheMaxHits = 256

// queryCache keeps the answers of recent SearchSorted calls until the next change of the
// index. A search costs a prefix expansion of each word in every segment's dictionary and a
// sorted collection of its matches (most of a title query's CPU), while search boxes ask the
// same few prefixes over and over (every user typing "hel" asks for "h", "he", "hel"). An
// answer is kept with the index's generation when its search started; any commit moves the
// generation, so an answer is served only while no change was committed since that search
// began, and a search never sees an answer older than the last change it could see.
type queryCache struct {
	// gen moves after every commit that changed the index (Batch.Commit, Clear).
	gen atomic.Uint64
	mu  sync.Mutex
	lru *simplelru.LRU[string, cachedQuery]
	// bytes is the estimated size of the entries held (under mu).
	bytes int
}

// cachedQuery is one kept answer and the generation it was searched at.
type cachedQuery struct {
	gen  uint64
	hits []Hit
	size int
}

func newQueryCache() *queryCache {
	c := &queryCache{}
	// The count bound is never reached before the byte bound (an entry costs over 100 bytes).
	c.lru, _ = simplelru.NewLRU[string, cachedQuery](queryCacheBytes/100, func(_ string, v cachedQuery) { c.bytes -= v.size })
	return c
}

// queryKey names a SearchSorted call.
func queryKey(project, collection string, words []string, after *Hit, size int, desc bool) string {
	var b strings.Builder
	b.WriteString(project)
	b.WriteByte('/')
	b.WriteString(collection)
	for _, w := range words {
		b.WriteByte(0)
		b.WriteString(w)
	}
	b.WriteByte(1)
	b.WriteString(strconv.Itoa(size))
	if desc {
		b.WriteByte('d')
	}
	if after != nil {
		b.WriteByte(1)
		b.WriteString(after.ID)
		b.WriteByte(0)
		b.WriteString(strconv.FormatFloat(after.CreatedMs, 'g', -1, 64))
	}
	return b.String()
}

// get returns a copy of the answer kept for key at generation gen.
func (c *queryCache) get(key string, gen uint64) ([]Hit, bool) {
	c.mu.Lock()
	v, ok := c.lru.Get(key)
	c.mu.Unlock()
	if !ok || v.gen != gen {
		return nil, false
	}
	return append([]Hit(nil), v.hits...), true
}

// put keeps a copy of hits, the answer to key searched at generation gen, unless it is too
// large or the index changed since.
func (c *queryCache) put(key string, gen uint64, hits []Hit) {
	if len(hits) > queryCacheMaxHits || c.gen.Load() != gen {
		return
	}
	size := len(key) + 96
	for _, h := range hits {
		size += len(h.ID) + 32
	}
	v := cachedQuery{gen: gen, hits: append([]Hit(nil), hits...), size: size}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.lru.Peek(key); ok {
		c.bytes -= old.size
	}
	c.lru.Add(key, v)
	c.bytes += size
	for c.bytes > queryCacheBytes {
		c.lru.RemoveOldest()
	}
}

// changed moves the generation, so that no answer searched before is served again.
func (c *queryCache) changed() { c.gen.Add(1) }

// used is the estimated size of the entries held, in bytes.
func (c *queryCache) used() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
