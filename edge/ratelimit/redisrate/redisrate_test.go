package redisrate_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/ratelimit"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit/redisrate"
	"github.com/gatehouse-dev/gatehouse/edge/redistest"
)

var ctx = context.Background()

// Two nodes (two clients, two limiters) share one Redis: together they allow exactly the burst
// of 60, then one a second. redis_rate times the buckets with Redis's own clock (TIME inside the
// script), which a test cannot step; so the test reads that clock before and after and allows
// the refills the elapsed time explains (none when the run takes under a second, as it does).
func TestTwoNodesShareExactly60PerMinute(t *testing.T) {
	srv := redistest.Start(t)
	name := redistest.Name("forms")
	nodes := []*redisrate.Limiter{
		redisrate.New(redisrate.Options{Redis: srv.Client(), Name: name, Rate: 60, Per: time.Minute, Timeout: 10 * time.Second}),
		redisrate.New(redisrate.Options{Redis: srv.Client(), Name: name, Rate: 60, Per: time.Minute, Timeout: 10 * time.Second}),
	}
	admin := srv.Client()
	t0, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var allowed, refused atomic.Int64
	var maxRetry atomic.Int64
	var wg sync.WaitGroup
	for w := range 8 { // four concurrent callers on each node, 200 requests in all
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 25 {
				ok, retry := nodes[w%2].Allow(ctx, "key-hash/demo/contact")
				if ok {
					allowed.Add(1)
					continue
				}
				refused.Add(1)
				if int64(retry) > maxRetry.Load() {
					maxRetry.Store(int64(retry))
				}
			}
		}()
	}
	wg.Wait()
	t1, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	refills := int64(t1.Sub(t0) / time.Second) // one more request per second past the burst
	if a := allowed.Load(); a < 60 || a > 60+refills {
		t.Fatalf("two nodes allowed %d of 200 in %v of Redis time, want 60 (+%d refills at most)", a, t1.Sub(t0), refills)
	}
	if allowed.Load()+refused.Load() != 200 {
		t.Fatalf("allowed %d + refused %d != 200", allowed.Load(), refused.Load())
	}
	if r := time.Duration(maxRetry.Load()); r <= 0 || r > time.Second {
		t.Fatalf("refusal's retryAfter = %v, want within (0, 1s]: one request fits every second", r)
	}
	for i, n := range nodes {
		if n.Failures() != 0 {
			t.Fatalf("node %d failed over %d times with Redis up", i, n.Failures())
		}
	}
	// Another key (another form, or another API key) has its own bucket on both nodes.
	if ok, _ := nodes[1].Allow(ctx, "key-hash/demo/other"); !ok {
		t.Fatal("a fresh key was refused: keys must not share a bucket")
	}
	// Another limiter name (another limit) keeps its own buckets too.
	other := redisrate.New(redisrate.Options{Redis: srv.Client(), Name: redistest.Name("login"), Rate: 1, Per: time.Minute})
	if ok, _ := other.Allow(ctx, "key-hash/demo/contact"); !ok {
		t.Fatal("a limiter of another name shares the forms buckets")
	}
}

// With Redis gone, each node limits on its own buckets (neither open nor closed), asks Redis
// again after RetryAfter, and goes back to the shared buckets once Redis answers.
func TestRedisDownFailsOverToLocalBuckets(t *testing.T) {
	srv := redistest.Private(t)
	client := srv.Client()
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	step := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	name := redistest.Name("down")
	l := redisrate.New(redisrate.Options{Redis: client, Name: name, Rate: 3, Per: time.Minute, Now: clock,
		Timeout: 2 * time.Second, RetryAfter: time.Second})

	if ok, _ := l.Allow(ctx, "k"); !ok {
		t.Fatal("first request refused with Redis up")
	}
	srv.Stop()
	for i := range 3 {
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatalf("request %d with Redis down refused: the local bucket (3 a minute, fresh) should allow it", i+1)
		}
	}
	ok, retry := l.Allow(ctx, "k")
	if ok || retry <= 0 {
		t.Fatalf("4th request with Redis down = %v, %v: the local bucket must refuse it", ok, retry)
	}
	if l.Failures() != 1 {
		t.Fatalf("Failures() = %d, want 1: Redis is asked again only after RetryAfter", l.Failures())
	}

	srv.Restart() // empty: a restart without persistence forgets the shared buckets
	step(2 * time.Second)
	for i := range 3 {
		if ok, _ := l.Allow(ctx, "k"); !ok {
			t.Fatalf("request %d after Redis came back refused: the shared bucket is fresh", i+1)
		}
	}
	if ok, _ := l.Allow(ctx, "k"); ok {
		t.Fatal("4th request after Redis came back allowed: the shared bucket holds 3")
	}
	if keys, err := client.Keys(ctx, "rate:gatehouse:"+name+":*").Result(); err != nil || len(keys) != 1 {
		t.Fatalf("shared buckets in Redis = %v, %v; want the one of key k", keys, err)
	}
	if l.Failures() != 1 {
		t.Fatalf("Failures() = %d after Redis came back, want still 1", l.Failures())
	}
}

// A Redis that never answered (nothing listens on the port) is the same failover from the start.
func TestUnreachableRedisLimitsLocally(t *testing.T) {
	srv := redistest.Private(t)
	client := srv.Client()
	srv.Stop()
	l := redisrate.New(redisrate.Options{Redis: client, Name: "x", Rate: 2, Per: time.Minute})
	got := ""
	for range 3 {
		ok, _ := l.Allow(ctx, "k")
		got += fmt.Sprint(ok, " ")
	}
	if got != "true true false " {
		t.Fatalf("Allow x3 with Redis unreachable = %q, want the local bucket's true true false", got)
	}
}

// BenchmarkSharedLimiter measures one Allow through Redis (a Lua script call on loopback) with
// b.RunParallel callers, against the in-memory limiter in the same run for the ratio. The keys
// rotate so that most requests are allowed (the write path of the script).
func BenchmarkSharedLimiter(b *testing.B) {
	srv := redistest.Start(b)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%d/demo/contact", i)
	}
	run := func(b *testing.B, l ratelimit.Allower, parallelism int) {
		var n atomic.Uint64
		b.ReportAllocs()
		b.SetParallelism(parallelism)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Allow(ctx, keys[n.Add(1)%uint64(len(keys))])
			}
		})
	}
	// 1 caller per core shows the round trip; 8 per core (as a busy server has) the throughput.
	for _, par := range []int{1, 8} {
		b.Run(fmt.Sprintf("redis/callers-per-core=%d", par), func(b *testing.B) {
			l := redisrate.New(redisrate.Options{Redis: srv.Client(), Name: redistest.Name("bench"), Rate: 1_000_000, Per: time.Minute})
			run(b, l, par)
			if l.Failures() != 0 {
				b.Fatalf("%d calls failed over to the local buckets", l.Failures())
			}
		})
	}
	b.Run("local", func(b *testing.B) {
		run(b, ratelimit.New(ratelimit.Options{Rate: 1_000_000, Per: time.Minute}), 1)
	})
}
