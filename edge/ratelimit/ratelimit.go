// Package ratelimit limits how often a key (an API key and a form, say) may act, with the
// generic cell rate algorithm (GCRA): a token bucket kept as one "theoretical arrival time"
// per key. Unlike fixed windows it never lets a caller send two bursts across a window edge.
//
// A Limiter allowing 60 per minute with a burst of 60 answers the 61st request of a burst with
// a refusal and the wait until one more request fits (one second), then refills at one
// request per second. The clock is injectable, so tests step time instead of sleeping.
//
// Limiter keeps its buckets in this node's memory. A deployment of many nodes shares buckets in
// Redis instead (edge/ratelimit/redisrate, the same algorithm); both satisfy Allower, which is
// what a product takes, so no product depends on Redis.
package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// Allower takes one request from key's bucket: whether it may go ahead and, when it may not,
// how long until it would. *Limiter answers from this node's memory; redisrate.Limiter from
// buckets in Redis shared by every node.
type Allower interface {
	Allow(ctx context.Context, key string) (ok bool, retryAfter time.Duration)
}

// Limiter is a set of GCRA buckets, one per key, safe for concurrent use.
type Limiter struct {
	interval time.Duration // time one request "costs": per / rate
	burst    time.Duration // interval * burst: how far ahead of now a key may run
	now      func() time.Time
	seed     maphash.Seed
	shards   [shardCount]shard
}

const shardCount = 32

type shard struct {
	mu    sync.Mutex
	tat   map[string]time.Time // theoretical arrival time of the next request per key
	calls int
}

// Options configures New.
type Options struct {
	// Rate requests are allowed per Per (60 per minute: Rate 60, Per time.Minute).
	Rate int
	Per  time.Duration
	// Burst is how many requests may arrive at once; Rate when zero.
	Burst int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// New returns a limiter. Rate and Per must be positive.
func New(o Options) *Limiter {
	if o.Rate <= 0 || o.Per <= 0 {
		panic("ratelimit: Rate and Per must be positive")
	}
	if o.Burst <= 0 {
		o.Burst = o.Rate
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	iv := o.Per / time.Duration(o.Rate)
	l := &Limiter{interval: iv, burst: iv * time.Duration(o.Burst), now: o.Now, seed: maphash.MakeSeed()}
	for i := range l.shards {
		l.shards[i].tat = map[string]time.Time{}
	}
	return l
}

// Allow takes one request for key. It reports whether the request may go ahead and, when it
// may not, how long until it would. ctx is unused: the buckets are in memory.
func (l *Limiter) Allow(_ context.Context, key string) (ok bool, retryAfter time.Duration) {
	now := l.now()
	s := &l.shards[maphash.String(l.seed, key)%shardCount]
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.calls%1024 == 0 {
		s.sweep(now)
	}
	tat, found := s.tat[key]
	if !found || tat.Before(now) {
		tat = now
	}
	next := tat.Add(l.interval)
	if ahead := next.Sub(now); ahead > l.burst {
		return false, ahead - l.burst
	}
	s.tat[key] = next
	return true, 0
}

// sweep drops keys whose bucket is full again: they hold no state worth keeping.
func (s *shard) sweep(now time.Time) {
	for k, t := range s.tat {
		if !t.After(now) {
			delete(s.tat, k)
		}
	}
}

// Sweep drops every full bucket now. Allow also sweeps a shard every 1024 calls to it, so
// memory stays bounded by the keys active within one refill period.
func (l *Limiter) Sweep() {
	now := l.now()
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		s.sweep(now)
		s.mu.Unlock()
	}
}

// Len reports how many keys hold state (for tests and metrics).
func (l *Limiter) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.tat)
		s.mu.Unlock()
	}
	return n
}
