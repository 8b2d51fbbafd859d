package accounts

import (
	"context"
	"sync"
	"time"
)

// throttle counts failures per key in a sliding window: at most max failures within per; the
// next attempt is refused until the oldest of them leaves the window. Only failures count, so
// a user who types the password right is never slowed down.
type throttle struct {
	max   int
	per   time.Duration
	now   func() time.Time
	mu    sync.Mutex
	fails map[string][]time.Time
	calls int
}

func newThrottle(max int, per time.Duration, now func() time.Time) *throttle {
	return &throttle{max: max, per: per, now: now, fails: map[string][]time.Time{}}
}

// recent drops failures older than the window and returns what remains (mu held).
func (t *throttle) recent(key string, now time.Time) []time.Time {
	f := t.fails[key]
	i := 0
	for i < len(f) && now.Sub(f[i]) >= t.per {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(t.fails, key)
		return nil
	}
	t.fails[key] = f
	return f
}

// wait returns how long key must wait before its next attempt (0: it may go now).
func (t *throttle) wait(key string) time.Duration {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls++
	if t.calls%1024 == 0 {
		for k := range t.fails {
			t.recent(k, now)
		}
	}
	f := t.recent(key, now)
	if len(f) < t.max {
		return 0
	}
	return f[len(f)-t.max].Add(t.per).Sub(now)
}

// fail records a failure of key.
func (t *throttle) fail(key string) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	f := append(t.recent(key, now), now)
	if len(f) > t.max {
		f = f[len(f)-t.max:]
	}
	t.fails[key] = f
}

// sharedWait takes one attempt from the shared buckets of email and of ip (none without
// Options.Shared) and returns how long to wait when either is empty (0: go ahead). The IP's
// bucket is not touched when the email's refuses.
func (s *Service) sharedWait(ctx context.Context, email, ip string) time.Duration {
	if s.shared == nil {
		return 0
	}
	if email != "" {
		if ok, d := s.shared.Allow(ctx, "email:"+email); !ok {
			return max(d, time.Millisecond)
		}
	}
	if ok, d := s.shared.Allow(ctx, "ip:"+ip); !ok {
		return max(d, time.Millisecond)
	}
	return 0
}
