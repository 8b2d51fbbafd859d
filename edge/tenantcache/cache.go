// Package tenantcache keeps what products derive from tenancy data (a compiled form, a project's
// membership answer, a collection schema, a domain's project) in memory, by project and name, and
// forgets it on the journal.Changes that may make it stale. It is the one read cache of tenancy
// data: its owner feeds it the changes (through its tenancy.Owner's Changed, or
// journal.Feed.OnChange) and a fill that raced an invalidation is never kept.
package tenantcache

import (
	"context"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache keeps values that a product derives from its tenancy data (a compiled form, a project's
// membership answer, a collection schema) by project and name, and forgets them on the changes
// of the kinds it follows. It is the one read cache of tenancy data: every product uses it, fed
// by journal.Feed.OnChange (and, across nodes, by the same journal.Change events).
//
// A fill is generation-guarded: a value read before an invalidation is not stored after it, so a
// reader that raced an apply can never put the old value back.
type Cache[V any] struct {
	lru   *lru.Cache[cacheKey, V]
	kinds map[string]bool
	mu    sync.Mutex
	gen   uint64
}

type cacheKey struct{ project, name string }

// New returns a cache of up to size entries (1024 when size <= 0) that changes of the given
// kinds invalidate: a change drops the entry of its project and name and the project's entry
// without name; a change without name (a project, its captcha or sender settings) drops every
// entry of its project.
func New[V any](size int, kinds ...string) *Cache[V] {
	if size <= 0 {
		size = 1024
	}
	c, _ := lru.New[cacheKey, V](size)
	k := make(map[string]bool, len(kinds))
	for _, x := range kinds {
		k[x] = true
	}
	return &Cache[V]{lru: c, kinds: k}
}

// Get returns the value of (project, name), calling load on a miss. An error is not cached.
func (c *Cache[V]) Get(ctx context.Context, project, name string, load func(context.Context) (V, error)) (V, error) {
	k := cacheKey{project, name}
	if v, ok := c.lru.Get(k); ok {
		return v, nil
	}
	c.mu.Lock()
	gen := c.gen
	c.mu.Unlock()
	v, err := load(ctx)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.gen == gen {
		// The key outlives the call: a caller may pass strings that view a request's memory
		// (route parameters), which the server reuses for the next request.
		c.lru.Add(cacheKey{strings.Clone(project), strings.Clone(name)}, v)
	}
	c.mu.Unlock()
	return v, nil
}

// Changed drops what changes of the cache's kinds may have made stale. Its signature fits
// journal.Feed.OnChange.
func (c *Cache[V]) Changed(_ context.Context, changes []journal.Change) {
	var hit []journal.Change
	for _, ch := range changes {
		if c.kinds[ch.Kind] {
			hit = append(hit, ch)
		}
	}
	if len(hit) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, ch := range hit {
		if ch.Project == "" {
			// An org-level change: no project names it, forget everything.
			c.lru.Purge()
			return
		}
		if ch.Name != "" {
			c.lru.Remove(cacheKey{ch.Project, ch.Name})
			c.lru.Remove(cacheKey{ch.Project, ""})
			continue
		}
		for _, k := range c.lru.Keys() {
			if k.project == ch.Project {
				c.lru.Remove(k)
			}
		}
	}
}

// Purge forgets every entry.
func (c *Cache[V]) Purge() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.lru.Purge()
}

// Len reports the number of cached entries.
func (c *Cache[V]) Len() int { return c.lru.Len() }
