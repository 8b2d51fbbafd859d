package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// ReadFilter rewrites or redacts a page of records before it is returned (the records.read
// plugin hook). It is called once per response page; nil means none.
type ReadFilter interface {
	RecordsRead(ctx context.Context, project, collection string, records []json.RawMessage) ([]json.RawMessage, error)
}

// Options configures NewService.
type Options struct {
	DB      *store.DB
	Tenancy *tenancy.Service
	// Titles is the title index (index/title); the service closes it in Close.
	Titles *title.Index
	Log    *slog.Logger
	// Plugins runs the records.read hook (edge/cmd/gatehouse adapts the plugin host to it);
	// nil for none.
	Plugins ReadFilter
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// CandidateLimit is the most ids an index scan may give before the planner prefers an
	// ordered scan (default 2000); SearchLimit the same for title matches (default 20000).
	CandidateLimit, SearchLimit int
	// HotRecords is how many decoded records the read cache keeps (default 20000);
	// ReadCacheBytes bounds the collections' read caches together (default 64 MB). The wiring
	// sets both from the memory budget (edge/membudget).
	HotRecords     int
	ReadCacheBytes int64
	// Shared says other gateway nodes write the same store (a shared database): each node's
	// title index follows the journal without consuming it (follow.go), and cached reads are
	// checked against the store.
	Shared bool
	// JournalRetention is how long a shared store keeps title journal entries
	// (DefaultJournalRetention when zero); a node away longer rebuilds its title index.
	JournalRetention time.Duration
	// Node names this process among the nodes that share the store ("": a random stripe): the
	// holder of the counter stripe it writes (counters.go).
	Node string
}

// Service answers record queries and performs record writes.
type Service struct {
	db        *store.DB
	ten       *tenancy.Service
	titles    *title.Index
	log       *slog.Logger
	filter    ReadFilter
	now       func() time.Time
	candLimit int
	qLimit    int
	schemas   *tenantcache.Cache[*Schema]
	// hot caches decoded records by key; gen counts committed record writes so that a reader
	// whose transaction may predate a write never caches what it read (see reader.get).
	hot *lru.Cache[string, *record]
	// node is Options.Node; stripe the counter stripe this Service writes (counters.go).
	node   string
	stripe atomic.Int32
	// claimWG waits for renewClaims, started and stopped with the title worker.
	claimWG sync.WaitGroup
	gen     atomic.Uint64
	// estimates caches the counters the planner reads, stamped with gen (recReader.estimate).
	estimates *lru.Cache[string, estimate]
	// caches holds the collections' read caches of a shared store, within budget (cache.go).
	caches *lru.Cache[string, *collCache]
	budget *store.ReadBudget
	// compoundReady is set once the compound indexes cover every stored record (Start).
	compoundReady atomic.Bool
	// projReady is set once every compound entry carries its record's projection (Start).
	projReady atomic.Bool
	projects  *tenantcache.Cache[tenancy.ProjectInfo]
	// titleMu serialises the writers of the title index (journal drains, rebuilds, drops);
	// journalNext (under it) is where the next partial drain starts, and indexed holds the
	// journal keys indexed but not deleted yet (drainJournal).
	titleMu     sync.Mutex
	journalNext []byte
	indexed     map[string]struct{}
	// durable (under durMu) are journal keys whose titles the index has made durable: the
	// next drain deletes them (trimJournal).
	durMu   sync.Mutex
	durable [][]byte
	// holdDurable, when set (tests), receives the index's durability notices instead of
	// running them (onDurable).
	holdDurable atomic.Pointer[func(func())]
	// rebuildRead, when set (tests), runs in a collection rebuild before the transaction of
	// each chunk of records.
	rebuildRead atomic.Pointer[func()]
	// titleKick wakes the title worker after a write journaled titles; titleStop and
	// titleDone stop it (Start starts it, Stop and Close stop it).
	titleKick chan struct{}
	titleStop chan struct{}
	titleDone chan struct{}
	// lifeMu guards the worker's start and stop.
	lifeMu sync.Mutex
	// caughtUp is closed once Start brought the title index up to date (awaitTitles).
	caughtUp chan struct{}
	// titleFailing is set while the title worker's drains fail (Healthy).
	titleFailing atomic.Bool
	caughtUpOnce sync.Once
	// shared and retention are Options.Shared and JournalRetention; fol (under titleMu) is
	// this node's place in the shared journal (follow.go). jnow is the clock of journal ids
	// (store.NewID: the wall clock), which the follower and the pruning compare with.
	shared    bool
	retention time.Duration
	fol       follower
	jnow      func() time.Time
	// folSeen is len(fol.seen) after the last follow, read by /metrics without titleMu.
	folSeen atomic.Int64
}

// NewService returns the service; it starts nothing. Start it before serving (it repairs the
// title index and starts the worker that follows the title journal).
func NewService(o Options) (*Service, error) {
	if o.DB == nil || o.Tenancy == nil || o.Titles == nil {
		return nil, errors.New("records: DB, Tenancy and Titles are required")
	}
	s := &Service{db: o.DB, ten: o.Tenancy, titles: o.Titles, log: o.Log,
		filter: o.Plugins, now: o.Now, candLimit: o.CandidateLimit, qLimit: o.SearchLimit,
		shared: o.Shared, retention: o.JournalRetention, jnow: time.Now}
	s.node = o.Node
	s.stripe.Store(int32(preferredStripe(o.Node)))
	if s.retention <= 0 {
		s.retention = DefaultJournalRetention
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.candLimit <= 0 {
		s.candLimit = 2000
	}
	if s.qLimit <= 0 {
		s.qLimit = 20000
	}
	s.schemas = tenantcache.New[*Schema](1024, "collection", "project")
	if o.HotRecords <= 0 {
		o.HotRecords = 20000
	}
	s.hot, _ = lru.New[string, *record](o.HotRecords)
	s.projects = tenantcache.New[tenancy.ProjectInfo](1024, "project")
	s.estimates, _ = lru.New[string, estimate](4096)
	if o.ReadCacheBytes <= 0 {
		o.ReadCacheBytes = defaultReadCacheBytes
	}
	s.budget = store.NewReadBudget(o.ReadCacheBytes)
	s.caches, _ = lru.NewWithEvict(readCaches, func(_ string, c *collCache) { c.rc.Drop() })
	s.titleKick = make(chan struct{}, 1)
	s.caughtUp = make(chan struct{})
	return s, nil
}

// CacheStats reports what the record caches hold: decoded records in the hot cache and bytes
// in the collections' read caches (exported in /metrics beside their bounds).
func (s *Service) CacheStats() (hotRecords int, readCacheBytes int64) {
	return s.hot.Len(), s.budget.Used()
}

// FollowerEntries is how many journal entries this node's title index remembers having
// indexed since its mark (follow.go: those of the last followLookback, 5 s; 0 on a store not
// shared), for /metrics. Each follow pass also reads at most followChunk (5,000) entries a
// batch.
func (s *Service) FollowerEntries() int64 { return s.folSeen.Load() }

// Close stops the title worker (see Stop) and closes the title index.
func (s *Service) Close() error {
	_ = s.Stop(context.Background())
	return s.titles.Close()
}

// Project returns a project (cached; invalidated by tenancy changes).
func (s *Service) Project(ctx context.Context, id string) (tenancy.ProjectInfo, error) {
	p, err := s.projects.Get(ctx, id, "", func(ctx context.Context) (tenancy.ProjectInfo, error) {
		return s.ten.Project(ctx, id)
	})
	if errors.Is(err, tenancy.ErrNotFound) {
		return p, ErrProjectNotFound
	}
	return p, err
}

// Schema returns a collection's compiled definition (cached), or ErrCollectionNotFound.
func (s *Service) Schema(ctx context.Context, project, coll string) (*Schema, error) {
	return s.schemas.Get(ctx, project, coll, func(ctx context.Context) (*Schema, error) {
		c, err := s.readCollection(ctx, project, coll)
		if err != nil {
			return nil, err
		}
		return compileSchema(project, c), nil
	})
}

// readable returns the schema of a collection the caller may read: non-public collections
// exist only for secret keys.
func (s *Service) readable(ctx context.Context, project, coll string, secret bool) (*Schema, error) {
	sc, err := s.Schema(ctx, project, coll)
	if err != nil {
		return nil, err
	}
	if !sc.Public && !secret {
		return nil, ErrCollectionNotFound
	}
	return sc, nil
}

// Definition returns the collection-definition JSON (public fields only unless secret).
func (s *Service) Definition(ctx context.Context, project, coll string, secret bool) ([]byte, error) {
	sc, err := s.readable(ctx, project, coll, secret)
	if err != nil {
		return nil, err
	}
	return sc.definitionJSON(secret)
}

// applyReadFilter runs the records.read hook over a page.
func (s *Service) applyReadFilter(ctx context.Context, project, coll string, items [][]byte) ([][]byte, error) {
	if s.filter == nil || len(items) == 0 {
		return items, nil
	}
	in := make([]json.RawMessage, len(items))
	for i, it := range items {
		in[i] = it
	}
	out, err := s.filter.RecordsRead(ctx, project, coll, in)
	if err != nil {
		return nil, err
	}
	res := make([][]byte, len(out))
	for i, it := range out {
		res[i] = it
	}
	return res, nil
}

// estimate is a counter value read while the write generation was gen, at time at (unix
// milliseconds; on a shared store, where other nodes' writes do not move gen, an estimate is
// trusted for sharedEstimateAge only).
type estimate struct {
	n   int64
	gen uint64
	at  int64
}

// sharedEstimateAge is how long a cached counter is used on a shared store.
const sharedEstimateAge = time.Second

// recReader reads records inside one View transaction through the hot-record cache.
type recReader struct {
	s   *Service
	txn *store.Txn
	gen uint64
}

// view runs fn in a read transaction with a cache-aware reader.
func (s *Service) view(ctx context.Context, fn func(rd *recReader) error) error {
	gen := s.gen.Load()
	return s.db.View(ctx, func(txn *store.Txn) error { return fn(&recReader{s: s, txn: txn, gen: gen}) })
}

// get returns a stored record (nil when missing), from the cache when it holds it. A record
// read from the store is cached only when no write committed since the transaction began.
func (rd *recReader) get(project, coll, id string) (*record, error) {
	return rd.getKey(string(recKey(project, coll, id)), id, true)
}

// peek is get without caching what it reads (aggregates read many records once).
func (rd *recReader) peek(project, coll, id string) (*record, error) {
	return rd.getKey(string(recKey(project, coll, id)), id, false)
}

// getKey is get (keep) or peek of the record of id stored at k.
func (rd *recReader) getKey(k, id string, keep bool) (*record, error) {
	if rd.s.shared {
		return rd.getShared(k, id, keep)
	}
	if keep {
		if r, ok := rd.s.hot.Get(k); ok {
			return r, nil
		}
	} else if r, ok := rd.s.hot.Peek(k); ok {
		return r, nil
	}
	raw, err := rd.txn.Get([]byte(k))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := decodeRecord(id, raw)
	if keep && err == nil && r != nil && rd.s.gen.Load() == rd.gen {
		rd.s.hot.Add(k, r)
	}
	return r, err
}

// getShared is get (keep: cache what it decodes) or peek on a shared store, where other
// nodes write records without this node hearing of it: the stored bytes are read every time,
// and the cached decoding is used only when it was decoded from the same bytes.
func (rd *recReader) getShared(k, id string, keep bool) (*record, error) {
	raw, err := rd.txn.Get([]byte(k))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return rd.sharedRecord(k, id, raw, keep)
}

// sharedRecord is the record stored at k as raw, the cached decoding when it was decoded from
// the same bytes (getShared, getAll).
func (rd *recReader) sharedRecord(k, id string, raw []byte, keep bool) (*record, error) {
	if r, ok := rd.s.hot.Peek(k); ok && bytes.Equal(r.raw, raw) {
		if keep {
			rd.s.hot.Get(k) // mark it recently used
		}
		return r, nil
	}
	r, err := decodeRecord(id, raw)
	if err == nil && keep {
		r.raw = raw
		rd.s.hot.Add(k, r)
	}
	return r, err
}

// invalidate forgets cached records after a commit that wrote them (all when keys is nil).
func (s *Service) invalidate(keys []string) {
	if keys == nil {
		s.hot.Purge()
	}
	for _, k := range keys {
		s.hot.Remove(k)
	}
	s.gen.Add(1)
}
