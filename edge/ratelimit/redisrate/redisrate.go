// Package redisrate keeps rate-limit buckets in Redis, so the nodes of a deployment share them:
// the forms limit stays 60 per minute per key and form across every node together
// (decisions.md 8.4). It is the GCRA of github.com/go-redis/redis_rate (one Lua script, atomic
// in Redis, timed by Redis's own clock so the nodes' clocks need not agree), behind
// ratelimit.Allower: products take the interface and never import Redis.
//
// When Redis cannot answer (down, unreachable, slower than Options.Timeout) the limiter fails
// over to this node's own in-memory buckets with the same rate, and keeps to them for
// Options.RetryAfter before it asks Redis again. It fails neither open (no limit at all would
// let a flood through while Redis is away) nor closed (refusing every submission would turn a
// cache outage into a product outage): each node limits alone, so N nodes allow at most N times
// the rate until Redis is back. The buckets do not carry over either way (a key that used its
// burst in Redis gets a fresh local one, and the reverse).
package redisrate

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge/ratelimit"
)

// Options configures New.
type Options struct {
	// Redis is the client, shared with the rest of the node (required).
	Redis *redis.Client
	// Name keeps this limiter's buckets apart from other limiters' in the same Redis ("forms").
	Name string
	// Rate requests are allowed per Per, with bursts of Burst (Rate when zero).
	Rate  int
	Per   time.Duration
	Burst int
	// Timeout bounds one round trip to Redis before the local buckets answer (500 ms when 0:
	// generous for a loaded machine, short enough that a hung Redis costs one slow request per
	// RetryAfter).
	Timeout time.Duration
	// RetryAfter is how long the local buckets answer after Redis failed (1 s when 0).
	RetryAfter time.Duration
	// Local answers while Redis does not; a ratelimit.Limiter of the same rate when nil.
	Local ratelimit.Allower
	// Now is the clock of the failover (time.Now when nil); the shared buckets follow Redis's clock.
	Now func() time.Time
	Log *slog.Logger
}

// Limiter is a set of GCRA buckets in Redis, safe for concurrent use.
type Limiter struct {
	rl       *redis_rate.Limiter
	limit    redis_rate.Limit
	prefix   string
	timeout  time.Duration
	retry    time.Duration
	local    ratelimit.Allower
	now      func() time.Time
	log      *slog.Logger
	downTill atomic.Int64 // unix nanoseconds until which Redis is not asked
	failures atomic.Uint64
	logMu    sync.Mutex
	logged   time.Time
}

var _ ratelimit.Allower = (*Limiter)(nil)

// New returns a limiter over Options.Redis. It starts nothing.
func New(o Options) *Limiter {
	if o.Rate <= 0 || o.Per <= 0 {
		panic("redisrate: Rate and Per must be positive")
	}
	if o.Burst <= 0 {
		o.Burst = o.Rate
	}
	if o.Timeout <= 0 {
		o.Timeout = 500 * time.Millisecond
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Local == nil {
		o.Local = ratelimit.New(ratelimit.Options{Rate: o.Rate, Per: o.Per, Burst: o.Burst, Now: o.Now})
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Limiter{
		rl:      redis_rate.NewLimiter(o.Redis),
		limit:   redis_rate.Limit{Rate: o.Rate, Period: o.Per, Burst: o.Burst},
		prefix:  "gatehouse:" + o.Name + ":",
		timeout: o.Timeout, retry: o.RetryAfter,
		local: o.Local, now: o.Now, log: o.Log,
	}
}

// Allow takes one request from key's shared bucket, or from the local one while Redis is away.
func (l *Limiter) Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration) {
	now := l.now()
	if now.UnixNano() < l.downTill.Load() {
		return l.local.Allow(ctx, key)
	}
	ok, retryAfter, err := l.Shared(ctx, key)
	if err == nil {
		return ok, retryAfter
	}
	if ctx.Err() != nil {
		// The caller went away: that says nothing about Redis.
		return l.local.Allow(ctx, key)
	}
	l.failures.Add(1)
	l.downTill.Store(now.Add(l.retry).UnixNano())
	l.warn(now, err)
	return l.local.Allow(ctx, key)
}

// Shared takes one request from key's bucket in Redis, without the local failover.
func (l *Limiter) Shared(ctx context.Context, key string) (ok bool, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := l.rl.Allow(ctx, l.prefix+key, l.limit)
	if err != nil {
		return false, 0, err
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	return false, res.RetryAfter, nil
}

// Failures reports how many calls found Redis unable to answer (each switched the limiter to
// its local buckets for RetryAfter).
func (l *Limiter) Failures() uint64 { return l.failures.Load() }

// warn logs a failover at most once a minute. The error names the address, never the password
// (go-redis keeps the URL's credentials out of its errors).
func (l *Limiter) warn(now time.Time, err error) {
	l.logMu.Lock()
	defer l.logMu.Unlock()
	if now.Sub(l.logged) < time.Minute {
		return
	}
	l.logged = now
	var nerr interface{ Timeout() bool }
	l.log.Warn("rate limits: Redis does not answer; this node limits on its own until it does",
		"prefix", l.prefix, "timeout", errors.As(err, &nerr) && nerr.Timeout(), "err", err)
}
