package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// The read cache of a shared store. On a shared store every read of a record or an index
// entry is a round trip to the database, and other nodes write the same collections without
// this node hearing of it at once. Each collection has a version instead: every write of its
// records, index entries or counters also writes a new random value to the version key of its
// writer's stripe (records/w/<project>/<collection>/<stripe>), in the same transaction. A list
// or a record read reads the collection's version first (one statement, store.ViewCached) and
// serves from this node's cache of the collection's reads what it read at that version: a read
// that hits costs nothing, a request whose reads all hit costs that one statement, and a write
// committed anywhere before the version read is seen (a cached read of another version is
// never used). The version keys follow the counters' stripes (counters.go): a process writes
// one stripe only, so nodes writing one collection do not write the same key. A store no
// other node writes (badger) skips the version in its record writes (Service.txWriter): its
// read cache keeps only the walks of index and compound entries (no record, whose decoding
// the hot cache keeps, and no counter) and is versioned by the Service's write generation
// (Service.gen, moved after every commit of records or their entries), which its writers
// move themselves (store.DB.ViewAt): a list whose walks all hit creates no store iterator.
//
//	records/w/<project>/<collection>/<stripe> -> 8 random bytes: the stripe's version

func versionPrefix(project, coll string) []byte { return store.Prefix(root, "w", project, coll) }

func versionKey(stripe int, project, coll string) []byte {
	return store.Key(root, "w", project, coll, strconv.Itoa(stripe))
}

// bumpVersion writes a new version of a collection in the writer's stripe (inside the
// transaction of a write).
func bumpVersion(txn *store.Txn, stripe int, project, coll string) error {
	return txn.Set(versionKey(stripe, project, coll), binary.BigEndian.AppendUint64(nil, rand.Uint64()))
}

// collCache is a collection's read cache, for one compiled schema (a schema change starts a
// new one).
type collCache struct {
	sch *Schema
	rc  *store.ReadCache
}

// readCaches is how many collections keep a read cache at once; defaultReadCacheBytes bounds
// what all of them hold together when Options.ReadCacheBytes does not (their values share
// memory with the hot records they decode to).
const (
	readCaches            = 64
	defaultReadCacheBytes = 64 << 20
)

// readCache returns the read cache of sch's collection.
func (s *Service) readCache(sch *Schema) *store.ReadCache {
	k := sch.Project + "/" + sch.Name
	c, ok := s.caches.Get(k)
	if ok && c.sch == sch {
		return c.rc
	}
	if ok {
		c.rc.Drop() // of an earlier schema (an evicted cache is dropped by the LRU: NewService)
	}
	covers := collCovers(sch.Project, sch.Name)
	if !s.shared {
		covers = entryCovers(sch.Project, sch.Name)
	}
	rc := store.NewReadCache(versionPrefix(sch.Project, sch.Name), covers, s.budget)
	s.caches.Add(k, &collCache{sch: sch, rc: rc})
	return rc
}

// collCovers accepts the keys a collection's version covers: its records, index entries,
// compound entries and counters (with their stripes).
func collCovers(project, coll string) func(key []byte) bool {
	prefixes := [][]byte{recPrefix(project, coll), idxCollPrefix(project, coll),
		compoundCollPrefix(project, coll), groupCollPrefix(project, coll)}
	count := countKey(project, coll)
	exact := [][]byte{count}
	for s := 0; s < stripes; s++ {
		exact = append(exact, stripeKey(s, count))
		prefixes = append(prefixes, stripeKey(s, groupCollPrefix(project, coll)))
	}
	return func(key []byte) bool {
		for _, p := range prefixes {
			if bytes.HasPrefix(key, p) {
				return true
			}
		}
		for _, k := range exact {
			if bytes.Equal(key, k) {
				return true
			}
		}
		return false
	}
}

// entryCovers accepts the keys of a collection's index and compound entries (the read cache
// of an unshared store).
func entryCovers(project, coll string) func(key []byte) bool {
	idx, comp := idxCollPrefix(project, coll), compoundCollPrefix(project, coll)
	return func(key []byte) bool { return bytes.HasPrefix(key, idx) || bytes.HasPrefix(key, comp) }
}

// viewColl is view for the reads of one collection's records (sch's), through the
// collection's read cache: on a shared store at the collection's version, on an unshared one
// at the write generation.
func (s *Service) viewColl(ctx context.Context, sch *Schema, fn func(rd *recReader) error) error {
	gen := s.gen.Load()
	view := func(txn *store.Txn) error { return fn(&recReader{s: s, txn: txn, gen: gen}) }
	if !s.shared {
		return s.db.ViewAt(ctx, s.readCache(sch), gen, view)
	}
	return s.db.ViewCached(ctx, s.readCache(sch), view)
}
