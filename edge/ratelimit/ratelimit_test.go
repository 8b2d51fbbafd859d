package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)} }

func TestSixtyPerMinute(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := New(Options{Rate: 60, Per: time.Minute, Now: c.Now})
	for i := 1; i <= 60; i++ {
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatalf("Allow #%d = false, want true", i)
		}
	}
	ok, retry := l.Allow(ctx, "k")
	if ok || retry != time.Second {
		t.Fatalf("Allow #61 = %v, %v; want false, 1s", ok, retry)
	}
	if ok, _ := l.Allow(ctx, "other"); !ok {
		t.Fatalf("Allow(other) = false: keys must not share a bucket")
	}
	c.Add(time.Second)
	if ok, _ := l.Allow(ctx, "k"); !ok {
		t.Fatalf("Allow after 1s = false, want true")
	}
	if ok, _ := l.Allow(ctx, "k"); ok {
		t.Fatalf("second Allow after 1s = true, want false")
	}
	c.Add(time.Minute)
	for i := 1; i <= 60; i++ {
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatalf("Allow #%d after a full refill = false", i)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rate  int
		per   time.Duration
		burst int
		want  time.Duration
	}{
		{"60/min", 60, time.Minute, 0, time.Second},
		{"10/s burst 1", 10, time.Second, 1, 100 * time.Millisecond},
		{"1/h burst 2", 1, time.Hour, 2, time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock()
			l := New(Options{Rate: tc.rate, Per: tc.per, Burst: tc.burst, Now: c.Now})
			var retry time.Duration
			ok := true
			for n := 0; ok && n < 1000; n++ {
				ok, retry = l.Allow(ctx, "k")
			}
			if ok || retry != tc.want {
				t.Errorf("Allow after burst = %v, %v; want false, %v", ok, retry, tc.want)
			}
		})
	}
}

func TestSweep(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := New(Options{Rate: 60, Per: time.Minute, Now: c.Now})
	for i := 0; i < 5000; i++ {
		l.Allow(ctx, fmt.Sprint(i))
	}
	// 1024 calls on one key sweep its shard on the way.
	c.Add(time.Hour)
	before := l.Len()
	for i := 0; i < 1024; i++ {
		l.Allow(ctx, "again")
	}
	if after := l.Len(); after >= before {
		t.Errorf("Len() = %d after 1024 calls to one shard, want below %d", after, before)
	}
	l.Sweep()
	if n := l.Len(); n != 1 {
		t.Errorf("Len() = %d after Sweep, want 1 (the key still draining)", n)
	}
}

func TestConcurrent(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := New(Options{Rate: 100, Per: time.Minute, Now: c.Now})
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if ok, _ := l.Allow(ctx, "shared"); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 100 {
		t.Errorf("allowed %d of 800 concurrent requests, want exactly 100", allowed)
	}
}

func BenchmarkAllow(b *testing.B) {
	l := New(Options{Rate: 60, Per: time.Minute})
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d/form", i)
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Allow(ctx, keys[i%len(keys)])
			i++
		}
	})
}

var ctx = context.Background()

var _ Allower = (*Limiter)(nil)
