package host

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// memBudget bounds the linear memory of every guest together
// (Options.MemoryBudgetMB) and splits it in equal shares between the
// projects that have plugins, so that one project's guests cannot take the
// memory another's need. Memory is counted by what is allocated for it
// (the capacity of each guest's buffer), from instance start to close.
type memBudget struct {
	total uint64

	mu       sync.Mutex
	used     uint64
	projects int
}

// share is what one project's guests may hold together. Called with b.mu held.
func (b *memBudget) share() uint64 { return b.total / uint64(max(1, b.projects)) }

func (b *memBudget) setProjects(n int) {
	b.mu.Lock()
	b.projects = n
	b.mu.Unlock()
}

// reserve takes up to want bytes (at least need) for project p without
// passing the project's share or the whole budget; it returns what it took,
// 0 when not even need fits.
func (b *memBudget) reserve(p *project, need, want uint64) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var room uint64
	if share := b.share(); b.used < b.total && p.memUsed < share {
		room = min(b.total-b.used, share-p.memUsed)
	}
	if need > room {
		return 0
	}
	n := min(want, room)
	b.used += n
	p.memUsed += n
	return n
}

func (b *memBudget) release(p *project, n uint64) {
	b.mu.Lock()
	b.used -= n
	p.memUsed -= n
	b.mu.Unlock()
}

// overShare reports whether project p holds more than half its share: its
// instances that grew are then closed after their call instead of staying
// warm in the pool.
func (b *memBudget) overShare(p *project) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return p.memUsed > b.share()/2
}

// Used reports the bytes all guests hold together.
func (b *memBudget) Used() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// cappedMemory backs a guest's linear memory and refuses to grow it past
// max (the plugin's limit) or past what the memory budget lets its project
// hold: memory.grow then returns -1 in the guest (a Go guest dies with "out
// of memory", which fails that call only, counted as kind memory).
type cappedMemory struct {
	max    uint64
	budget *memBudget
	proj   *project

	buf      []byte
	reserved uint64 // bytes taken from the budget (cap of buf)
	hit      bool   // a grow was refused: the call failed for memory
}

// Allocate implements experimental.MemoryAllocator.
func (c *cappedMemory) Allocate(capacity, max uint64) experimental.LinearMemory {
	return c
}

// Reallocate implements experimental.LinearMemory.
func (c *cappedMemory) Reallocate(size uint64) []byte {
	first := c.buf == nil
	if size > c.max && !first {
		c.hit = true
		return nil
	}
	if size <= uint64(cap(c.buf)) {
		c.buf = c.buf[:size]
		return c.buf
	}
	// Double the capacity (fewer copies as a guest grows page by page),
	// as far as the limit and the budget allow.
	want := max(size, min(2*uint64(cap(c.buf)), c.max))
	got := c.budget.reserve(c.proj, size-c.reserved, want-c.reserved)
	if got == 0 && size > c.reserved {
		c.hit = true
		if !first {
			return nil
		}
		// wazero cannot fail an instance's first allocation: hand out the
		// memory uncounted; pool.start sees hit and closes the instance.
		c.buf = make([]byte, size)
		return c.buf
	}
	c.reserved += got
	newCap := c.reserved
	nb := make([]byte, size, newCap)
	copy(nb, c.buf)
	c.buf = nb
	return nb
}

// Free implements experimental.LinearMemory: the module closed.
func (c *cappedMemory) Free() {
	c.buf = nil
	if c.reserved > 0 {
		c.budget.release(c.proj, c.reserved)
		c.reserved = 0
	}
}
