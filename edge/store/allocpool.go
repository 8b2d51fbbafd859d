package store

import (
	"reflect"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"
)

// unpoolBuilders takes badger's pool of table-builder allocators out of db, so that every
// memtable flush and compaction builds its tables in memory of its own, collected when the
// table is written, and returns the pool to release once db is closed (nil when db has none).
//
// Why: badger v4 keeps up to 8 builders' allocators in a pool with every buffer they grew
// (about 30 MB each after a flush of an 8 MB memtable) and frees one only after 2 s without a
// table build. In a build without cgo those buffers are Go memory, so after a burst of writes
// they stayed in the live heap near the Go memory limit, and the collector ran four to five
// times as often until they were freed: measured on 100k posts right after their import
// (docs/performance.md, Footprint, fifth pass), list reads 12.0k -> 20.8k req/s with the pool
// gone (269 -> 65 collections in 10 s), and the import itself 3.0k -> 5.6k lines/s. Badger's
// options do not reach the pool; its allocator code takes a nil pool as "no pooling" (Get
// makes a new allocator, Return releases it), so the field is cleared in place, once, right
// after Open. A flush or compaction that read the pool before still returns its allocator to
// it, so the pool stays usable until Close; TestBuildersUnpooled fails when an upgrade of
// badger renames the field.
func unpoolBuilders(db *badger.DB) *z.AllocatorPool {
	f := reflect.ValueOf(db).Elem().FieldByName("allocPool")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*z.AllocatorPool]() {
		return nil
	}
	field := (**z.AllocatorPool)(unsafe.Pointer(f.UnsafeAddr()))
	pool := *field
	*field = nil
	return pool
}
