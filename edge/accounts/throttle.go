package accounts

import (
	"context"
	"sync"
	"time"
)

// throttle counts failures per key in a sliding window: at most max failures within per; the
// next attempt is refused until the oldest of them leaves the window. Only failures count, so
// a user who types the password right is never slowed down.
//
// With a shared Throttle (many nodes) the stricter of the shared count and this node's own
// answers; while the shared one fails, this node's own count alone.
type throttle struct {
	max    int
	per    time.Duration
	now    func() time.Time
	mu     sync.Mutex
	fails  map[string][]time.Time
	calls  int
	shared Throttle
	name   string // the shared keys' prefix: "email", "ip"
}

func newThrottle(max int, per time.Duration, now func() time.Time, shared Throttle, name string) *throttle {
	return &throttle{max: max, per: per, now: now, fails: map[string][]time.Time{}, shared: shared, name: name}
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
	d := t.localWait(key)
	if t.shared != nil {
		if sd, err := t.shared.Wait(context.Background(), t.name+"/"+key); err == nil {
			d = max(d, sd)
		}
	}
	return d
}

func (t *throttle) localWait(key string) time.Duration {
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
	if t.shared != nil {
		_ = t.shared.Fail(context.Background(), t.name+"/"+key) // counted locally too
	}
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	f := append(t.recent(key, now), now)
	if len(f) > t.max {
		f = f[len(f)-t.max:]
	}
	t.fails[key] = f
}
