package host

import (
	"sync"
	"time"

	"github.com/tetratelabs/wazero/experimental"
)

// memBudget bounds the linear memory of every guest together
// (Options.MemoryBudgetMB) and splits it in equal shares between the
// projects that have plugins (at least minShare each), so that one
// project's guests cannot take the memory another's need. A guest's memory
// is counted by its size, from instance start to close.
type memBudget struct {
	total uint64

	mu       sync.Mutex
	used     uint64
	projects int
}

// minShare is the least a project's share may be (two Go guests' worth), however many
// projects divide the budget: past total/minShare projects, the budget as a whole is the
// bound and the shares overlap.
const minShare = 32 << 20

// share is what one project's guests may hold together. Called with b.mu held.
func (b *memBudget) share() uint64 {
	return min(b.total, max(b.total/uint64(max(1, b.projects)), minShare))
}

func (b *memBudget) setProjects(n int) {
	b.mu.Lock()
	b.projects = n
	b.mu.Unlock()
}

// reserve takes n bytes for project p, or reports false when that would
// pass the project's share or the whole budget.
func (b *memBudget) reserve(p *project, n uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.total || p.memUsed+n > b.share() {
		return false
	}
	b.used += n
	p.memUsed += n
	return true
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
//
// The memory is mapped outside the Go heap (mapMemory: max bytes reserved
// at once, pages committed when the guest first touches them), so a guest
// growing to 128 MiB neither copies its memory as it grows nor gives Go's
// garbage collector work, and closing the instance returns its pages to the
// system at once. Free must not run while a call uses the memory: the host
// closes an instance only between calls, and Host.Close waits for calls.
type cappedMemory struct {
	max    uint64
	budget *memBudget
	proj   *project

	mem      []byte // the whole mapping, max bytes
	unmap    func()
	buf      []byte // what the guest has: mem[:size]
	reserved uint64 // bytes taken from the budget (len of buf)
	grown    uint64 // bytes grown since takeGrown
	hit      bool   // a grow was refused: the call failed for memory
}

// growthCost is what the scheduler charges a project's CPU budget for each
// MiB its guests grow, on top of the CPU time: fresh pages cost the machine
// faults, zeroing and memory bandwidth that slow every project (a guest
// growing to 128 MiB in a loop of calls would otherwise churn gigabytes a
// second within its CPU time).
const growthCost = time.Millisecond

// takeGrown returns the budget cost of the growth since the last call, and
// starts counting afresh.
func (c *cappedMemory) takeGrown() time.Duration {
	d := time.Duration(c.grown>>20) * growthCost
	c.grown = 0
	return d
}

// Allocate implements experimental.MemoryAllocator.
func (c *cappedMemory) Allocate(capacity, max uint64) experimental.LinearMemory {
	return c
}

// Reallocate implements experimental.LinearMemory.
func (c *cappedMemory) Reallocate(size uint64) []byte {
	first := c.mem == nil
	if first {
		// wazero cannot fail an instance's first allocation (registration
		// made sure the module's minimum fits its limit).
		c.mem, c.unmap = mapMemory(max(c.max, size))
	}
	if size > uint64(len(c.mem)) || (size > c.max && !first) {
		c.hit = true
		return nil
	}
	if size > c.reserved {
		if !c.budget.reserve(c.proj, size-c.reserved) {
			c.hit = true
			if !first {
				return nil
			}
			// The first allocation is handed out uncounted; pool.start sees
			// hit and closes the instance.
			c.buf = c.mem[:size]
			return c.buf
		}
		c.grown += size - c.reserved
		c.reserved = size
	}
	c.buf = c.mem[:size]
	return c.buf
}

// Free implements experimental.LinearMemory: the module closed.
func (c *cappedMemory) Free() {
	if c.unmap != nil {
		c.unmap()
		c.unmap = nil
	}
	c.mem, c.buf = nil, nil
	if c.reserved > 0 {
		c.budget.release(c.proj, c.reserved)
		c.reserved = 0
	}
}

// MemoryUsed reports the linear memory the guests' instances hold now, in bytes, against
// Options.MemoryBudgetMB (exported in /metrics).
func (h *Host) MemoryUsed() uint64 { return h.mem.Used() }
