package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge/bus"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit/redisrate"
)

// openRedis returns the client of redis.url (nil without one), shared by the rate limits and
// the change feed. It connects lazily: a Redis that is down at start only makes the node limit
// on its own until Redis answers. Logs and errors carry the URL without its password.
func openRedis(cfg config.Config, log *slog.Logger) (*redis.Client, error) {
	if cfg.Redis.URL == "" {
		return nil, nil
	}
	opt, err := redis.ParseURL(cfg.Redis.URL)
	if err != nil {
		// The parser's message may quote the URL: name the redacted one instead.
		return nil, fmt.Errorf("redis.url %s: not a Redis URL", cfg.Redis.RedactedURL())
	}
	// go-redis logs its own reconnect attempts through one process-wide logger: into serve's
	// structured log (its lines name the address, never the password).
	redis.SetLogger(redisLog{log.With("component", "redis")})
	c := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		log.Warn("redis: not answering at start; limits stay per node until it does", "url", cfg.Redis.RedactedURL(), "err", err)
	} else {
		log.Info("redis: connected", "url", cfg.Redis.RedactedURL())
	}
	return c, nil
}

// redisLog carries go-redis's own log lines (reconnects) into serve's slog logger.
type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, fmt.Sprintf(format, v...))
}

// sharedLimiter returns buckets in Redis every node shares (name keeps them apart from other
// limits), or nil without Redis: the product then keeps its buckets in this node's memory
// (module.Deps.Limiter).
func (d *deps) sharedLimiter(name string, rate int, per time.Duration) ratelimit.Allower {
	if d.redis == nil {
		return nil
	}
	l := redisrate.New(redisrate.Options{Redis: d.redis, Name: name, Rate: rate, Per: per,
		Log: d.log.With("component", "ratelimit", "limit", name)})
	counter(d.reg, "gatehouse_ratelimit_redis_failovers_total",
		"Calls that found Redis unable to answer and switched this node to its own buckets for a second.",
		prometheus.Labels{"limit": name}, func() uint64 { return l.Failures() })
	return l
}

// counter registers a counter read from fn (nil reg: none).
func counter(reg prometheus.Registerer, name, help string, labels prometheus.Labels, fn func() uint64) {
	if reg == nil {
		return
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
		func() float64 { return float64(fn()) }))
}

// addBus carries tenancy changes between nodes (edge/bus): with redis.url over Redis and the
// store's change journal, on the postgres backend without it over the journal alone. One node
// on its own badger store needs neither.
func (a *assembly) addBus(ctx context.Context, d *deps) error {
	if d.redis == nil && d.cfg.Storage.Backend != config.BackendPostgres {
		return nil
	}
	ten := d.tenancy
	b, err := bus.New(bus.Options{
		DB: d.db, Redis: d.redis, Deliver: ten.Notify,
		Projects: func(ctx context.Context) ([]string, error) {
			ps, err := ten.Projects(ctx)
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID
			}
			return ids, err
		},
		Log: d.log.With("component", "bus"),
	})
	if err != nil {
		return err
	}
	if err := b.Prime(ctx); err != nil { // before anything fills a cache
		return err
	}
	ten.SetJournal(b.Append) // every change's transaction journals it (no crash window)
	ten.OnChange(b.Publish)
	counter(d.reg, "gatehouse_bus_remote_changes_total", "Change events of other nodes handed to this node's caches.",
		nil, func() uint64 { n, _ := b.Stats(); return n })
	counter(d.reg, "gatehouse_bus_resyncs_total", "Times this node dropped every cache of tenancy data (journal entries missed).",
		nil, func() uint64 { _, n := b.Stats(); return n })
	a.components = append(a.components, b)
	return nil
}
