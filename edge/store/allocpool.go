package store

import (
	"reflect"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"
)

// drainBuilders takes badger's pool of table-builder allocators out of use: it starts a
// goroutine that receives every allocator returned to db's pool and releases it at once, so
// that every memtable flush and compaction builds its tables in memory of its own, collected
// when the table is written. The goroutine ends when badger's Close closes the pool. It starts
// nothing when db has no such pool (a badger upgrade renamed it).
//
// Why: badger v4 keeps up to 8 builders' allocators in a pool with every buffer they grew
// (about 30 MB each after a flush of an 8 MB memtable) and frees one only after 2 s without a
// table build. In a build without cgo those buffers are Go memory, so after a burst of writes
// they stayed in the live heap near the Go memory limit, and the collector ran four to five
// times as often until they were freed: measured on 100k posts right after their import
// (docs/performance.md, Footprint, fifth pass), list reads 12.0k -> 20.8k req/s with the pool
// out of use (269 -> 65 collections in 10 s), and the import itself 3.0k -> 5.6k lines/s.
// Badger's options do not reach the pool. Clearing its field after Open raced with the
// flushes and compactions Open had already started (the race detector caught it), so the
// pool is left in place and only read: its channel is drained instead. A Return that finds
// the receiver waiting hands the allocator straight to it; Get finds the channel empty and
// makes a new allocator, as with no pool at all. TestBuildersUnpooled fails when an upgrade of
// badger or ristretto renames the fields.
func drainBuilders(db *badger.DB) {
	ch := poolChannel(db)
	if ch == nil {
		return
	}
	go func() {
		for a := range ch {
			a.Release()
		}
	}()
}

// poolChannel returns the channel of db's pool of builder allocators, or nil when badger's or
// ristretto's fields are not the ones this was written against. It only reads: badger writes
// the field once, in Open, before Open returns.
func poolChannel(db *badger.DB) chan *z.Allocator {
	f := reflect.ValueOf(db).Elem().FieldByName("allocPool")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*z.AllocatorPool]() {
		return nil
	}
	pool := *(**z.AllocatorPool)(unsafe.Pointer(f.UnsafeAddr()))
	if pool == nil {
		return nil
	}
	c := reflect.ValueOf(pool).Elem().FieldByName("allocCh")
	if !c.IsValid() || c.Type() != reflect.TypeFor[chan *z.Allocator]() {
		return nil
	}
	return *(*chan *z.Allocator)(unsafe.Pointer(c.UnsafeAddr()))
}
