package main

import (
	"log/slog"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/membudget"
	"github.com/gatehouse-dev/gatehouse/edge/memtrim"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// memoryBudget resolves the process's memory budget (edge/membudget: memory_limit_mb, else
// GOMEMLIMIT, else 90% of the cgroup's limit, else the default), sets it as the Go memory
// limit (GOMEMLIMIT, when it is the source, is already in force), and splits it among the
// caches: a memory key the configuration sets (storage.block_cache_mb, index_cache_mb,
// memtable_mb, num_memtables, plugins.memory_budget_mb, files.variant_memory_mb) wins over
// its share, one left at 0 takes it. The returned configuration has every such key filled in.
func memoryBudget(cfg config.Config, log *slog.Logger) (config.Config, membudget.Budget, membudget.Shares, error) {
	b, err := membudget.Resolve(membudget.System(cfg.MemoryLimitMB))
	if err != nil {
		return cfg, b, membudget.Shares{}, err
	}
	sh := b.Split()
	for _, p := range []struct{ key, share *int }{
		{&cfg.Storage.BlockCacheMB, &sh.BlockCacheMB}, {&cfg.Storage.IndexCacheMB, &sh.IndexCacheMB},
		{&cfg.Storage.MemTableMB, &sh.MemTableMB}, {&cfg.Storage.NumMemtables, &sh.NumMemtables},
		{&cfg.Plugins.MemoryBudgetMB, &sh.PluginsMB}, {&cfg.Files.VariantMemoryMB, &sh.VariantsMB},
	} {
		if *p.key > 0 {
			*p.share = *p.key
		} else {
			*p.key = *p.share
		}
	}
	// The variant worker process shares a cgroup's limit: its bound comes out of the Go limit.
	sh = sh.ShareWithWorker(b)
	if b.Source != membudget.FromEnv {
		debug.SetMemoryLimit(sh.GoLimitBytes)
	}
	log.Info("memory budget", "mb", b.MB, "source", b.Source, "cgroup_limit_mb", b.CgroupMB,
		"block_cache_mb", sh.BlockCacheMB, "index_cache_mb", sh.IndexCacheMB, "memtable_mb", sh.MemTableMB,
		"num_memtables", sh.NumMemtables, "records_read_cache_mb", sh.ReadCacheBytes>>20,
		"hot_records", sh.HotRecords, "plugins_mb", sh.PluginsMB, "mapped_files_mb", sh.MappedMB,
		"variants_mb", sh.VariantsMB, "go_limit_mb", sh.GoLimitBytes>>20)
	return cfg, b, sh, nil
}

// usedGauge registers membudget.Used: what one bounded cache holds now.
func usedGauge(reg prometheus.Registerer, name, part string, f func() float64) {
	reg.MustRegister(membudget.Used(name, part, f))
}

// memoryMetrics exports the budget, its bounds and what badger's caches hold.
func memoryMetrics(reg prometheus.Registerer, b membudget.Budget, sh membudget.Shares, db *store.DB) {
	membudget.Register(reg, b, sh)
	usedGauge(reg, "gatehouse_memory_used_bytes", "badger_block_cache", func() float64 { v, _ := db.CacheUsage(); return float64(v) })
	usedGauge(reg, "gatehouse_memory_used_bytes", "badger_index_cache", func() float64 { _, v := db.CacheUsage(); return float64(v) })
}

// trimMetrics exports the file-backed RSS against its bound and what edge/memtrim gave back.
func trimMetrics(reg prometheus.Registerer, t *memtrim.Trimmer) {
	usedGauge(reg, "gatehouse_memory_used_bytes", "mapped_files", func() float64 { return float64(memtrim.FileRSS()) })
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gatehouse_memtrim_trims_total",
		Help: "Times the process's mappings of the data folder's files were dropped (file-backed RSS past its bound).",
	}, func() float64 { n, _ := t.Stats(); return float64(n) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gatehouse_memtrim_dropped_bytes_total",
		Help: "File-backed RSS those drops gave back (the pages stay in the page cache).",
	}, func() float64 { _, b := t.Stats(); return float64(b) }))
}
