package membudget

import "github.com/prometheus/client_golang/prometheus"

// Shares are the bounds a budget gives each cache; the wiring hands each to its owner. Every
// figure is an upper bound of what that part keeps in memory.
type Shares struct {
	// GoLimitBytes is the Go memory limit (runtime/debug.SetMemoryLimit): the budget less
	// the mapped files' share, so that the Go heap and the pages the process keeps mapped
	// together stay near the budget (a GOMEMLIMIT the environment sets is left in force).
	GoLimitBytes int64
	// BlockCacheMB, IndexCacheMB: badger's caches of decompressed table blocks and of table
	// indexes and bloom filters. MemTableMB and NumMemtables: badger's write tables, each
	// allocated whole.
	BlockCacheMB, IndexCacheMB, MemTableMB, NumMemtables int
	// ReadCacheBytes bounds the records product's read caches (index walks, all collections
	// together); HotRecords is how many decoded records it keeps.
	ReadCacheBytes int64
	HotRecords     int
	// PluginsMB bounds the linear memory of all plugin instances together.
	PluginsMB int
	// MappedMB bounds the file-backed RSS (the binary's pages and the store's mapped files)
	// past which edge/memtrim drops the process's mappings of the data folder's files.
	MappedMB int
	// VariantsMB bounds the image variant builds running at once (files.variant_memory_mb),
	// made in the variant worker process (variants.go).
	VariantsMB int
}

// hotRecordBytes is what one decoded record of the benchmark's posts holds in the hot cache
// (measured with a heap profile: 20,000 records, 28 MB).
const hotRecordBytes = 1400

// Split divides the budget: seven fortieths to badger's block cache, a tenth to the records read
// cache, a fortieth to the hot records (a decoded record holds about five times the memory of its
// share of a cached block, and its pointers are scanned by every collection: at 100k posts read
// at random, moving three fortieths from the hot records to the block cache made single-record
// reads 25% faster in the same RSS), a twentieth to badger's index cache, two write tables of a
// sixty-fourth (8 to 64 MB: a transaction may hold about 15% of one, and the tenants document
// applies in one; past 8 MB each flush grows pooled table builders that badger keeps, see
// store.Options), a quarter to plugins (at least 64 MB: two projects' guests), a quarter (at
// least 48 MB, at most half) to the mapped files (the binary's code and the store's tables the
// process keeps mapped), a fifth to the variant builds of the worker process (96 to 256 MB,
// variants.go), the rest to the Go heap (the Go memory limit); what the caches leave of it (about
// a third) is the working memory of requests, the collector's headroom and the title index.
func (b Budget) Split() Shares {
	mb := b.MB
	mapped := min(max(mb/4, 48), mb/2)
	return Shares{
		GoLimitBytes:   int64(mb-mapped) << 20,
		BlockCacheMB:   max(mb*7/40, 8),
		IndexCacheMB:   max(mb/20, 4),
		MemTableMB:     min(max(mb/64, 8), 64),
		NumMemtables:   2,
		ReadCacheBytes: int64(max(mb/10, 4)) << 20,
		HotRecords:     max(mb/40, 2) << 20 / hotRecordBytes,
		PluginsMB:      max(mb/4, 64),
		MappedMB:       mapped,
		VariantsMB:     variantsMB(mb),
	}
}

// Register exports the budget and each bound in reg: gatehouse_memory_budget_bytes (with its
// source) and gatehouse_memory_bound_bytes{part} (gatehouse_memory_bound_records for the hot
// records), so that /metrics shows where every cache stands beside what it uses.
func Register(reg prometheus.Registerer, b Budget, s Shares) {
	budget := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gatehouse_memory_budget_bytes",
		Help: "The memory budget (the Go memory limit plus the mapped files' bound) and where it came from: memory_limit_mb, GOMEMLIMIT, cgroup or default.",
	}, []string{"source"})
	budget.WithLabelValues(string(b.Source)).Set(float64(int64(b.MB) << 20))
	bound := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gatehouse_memory_bound_bytes",
		Help: "The bound of each cache or buffer, from the memory budget or its configuration key.",
	}, []string{"part"})
	for _, p := range []struct {
		name string
		mb   int
	}{
		{"badger_block_cache", s.BlockCacheMB}, {"badger_index_cache", s.IndexCacheMB},
		{"badger_memtables", s.MemTableMB * s.NumMemtables}, {"plugins", s.PluginsMB}, {"mapped_files", s.MappedMB},
		{"variants", s.VariantsMB},
	} {
		bound.WithLabelValues(p.name).Set(float64(int64(p.mb) << 20))
	}
	bound.WithLabelValues("records_read_cache").Set(float64(s.ReadCacheBytes))
	bound.WithLabelValues("go_heap").Set(float64(s.GoLimitBytes))
	hot := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gatehouse_memory_bound_records",
		Help: "How many decoded records the records product's hot cache keeps at most.",
	})
	hot.Set(float64(s.HotRecords))
	reg.MustRegister(budget, bound, hot)
}

// Used is the gauge of what one bounded cache holds now, gatehouse_memory_used_bytes{part}
// (or gatehouse_memory_used_records for one counted in records), read from f, beside the bounds
// Register exports. The composition root and the products that own a cache register it.
func Used(name, part string, f func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        name,
		Help:        "What each bounded cache holds now (its bound: gatehouse_memory_bound_*).",
		ConstLabels: prometheus.Labels{"part": part},
	}, f)
}
