package redisrate

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Throttle counts failures (failed sign-ins) per key in Redis for every node together: a GCRA
// bucket of Max failures refilled over Per. Only failures take from it; Wait looks without
// taking. Errors are returned, not hidden: the caller keeps its own count to fall back on. After
// an error Redis is left alone for a second (ErrAway), so a sign-in does not wait on it each time.
type Throttle struct {
	rl       *redis_rate.Limiter
	limit    redis_rate.Limit
	interval time.Duration
	prefix   string
	timeout  time.Duration
	downTill atomic.Int64 // unix nanoseconds
}

// ErrAway answers while Redis is left alone after a failure.
var ErrAway = errors.New("redisrate: Redis failed within the last second")

// call runs fn against Redis unless it failed within the last second.
func (t *Throttle) call(ctx context.Context, fn func(ctx context.Context) error) error {
	if time.Now().UnixNano() < t.downTill.Load() {
		return ErrAway
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	err := fn(ctx)
	if err != nil && ctx.Err() == nil || errors.Is(err, context.DeadlineExceeded) {
		t.downTill.Store(time.Now().Add(time.Second).UnixNano())
	}
	return err
}

// ThrottleOptions configures NewThrottle.
type ThrottleOptions struct {
	// Redis is the client, shared with the rest of the node (required).
	Redis *redis.Client
	// Name keeps these buckets apart from other limits in the same Redis ("login").
	Name string
	// Max failures per Per.
	Max int
	Per time.Duration
	// Timeout bounds one round trip (500 ms when 0).
	Timeout time.Duration
}

// NewThrottle returns a throttle over Options.Redis. It starts nothing.
func NewThrottle(o ThrottleOptions) *Throttle {
	if o.Max <= 0 || o.Per <= 0 {
		panic("redisrate: Max and Per must be positive")
	}
	if o.Timeout <= 0 {
		o.Timeout = 500 * time.Millisecond
	}
	return &Throttle{rl: redis_rate.NewLimiter(o.Redis), limit: redis_rate.Limit{Rate: o.Max, Period: o.Per, Burst: o.Max},
		interval: o.Per / time.Duration(o.Max), prefix: "gatehouse:" + o.Name + ":", timeout: o.Timeout}
}

// Wait returns how long key must wait before its next attempt: 0 while its bucket holds one
// more failure, else the time until it does.
func (t *Throttle) Wait(ctx context.Context, key string) (time.Duration, error) {
	var res *redis_rate.Result
	err := t.call(ctx, func(ctx context.Context) (err error) {
		res, err = t.rl.AllowN(ctx, t.prefix+key, t.limit, 0) // cost 0: look, take nothing
		return err
	})
	if err != nil {
		return 0, err
	}
	if res.Remaining >= 1 {
		return 0, nil
	}
	// ResetAfter is when the bucket is full again; one failure fits Burst-1 intervals before.
	return max(res.ResetAfter-time.Duration(t.limit.Burst-1)*t.interval, time.Millisecond), nil
}

// Fail records a failure of key (a full bucket stays full).
func (t *Throttle) Fail(ctx context.Context, key string) error {
	return t.call(ctx, func(ctx context.Context) error {
		_, err := t.rl.Allow(ctx, t.prefix+key, t.limit)
		return err
	})
}
