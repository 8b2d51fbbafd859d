package main

import (
	"fmt"
	"net"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// serveBare starts bare fiber (no middleware) answering every GET /bare with body: the ceiling.
func serveBare(body []byte) (url string, stop func(), err error) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/bare", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(body)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go func() { _ = app.Listener(ln) }()
	return "http://" + ln.Addr().String() + "/bare", func() { _ = app.Shutdown() }, nil
}

type result struct {
	rps           float64
	p50, p99      time.Duration
	count, errors int
	avgSize       int
}

// load sends requests from conns workers for dur, each worker one keep-alive connection.
func load(next func() string, dur time.Duration, conns int) (result, error) {
	client := &fasthttp.Client{MaxConnsPerHost: conns * 2, ReadTimeout: 30 * time.Second}
	var mu sync.Mutex
	var lat []time.Duration
	var errs, bytesTotal int64
	var wg sync.WaitGroup
	stop := time.Now().Add(dur)
	var firstErr atomic.Value
	for w := 0; w < conns; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			local := make([]time.Duration, 0, 4096)
			for time.Now().Before(stop) {
				req.SetRequestURI(next())
				req.Header.Set("X-API-Key", "pk_live_bench_web")
				t0 := time.Now()
				err := client.Do(req, resp)
				d := time.Since(t0)
				if err != nil || resp.StatusCode() != 200 {
					atomic.AddInt64(&errs, 1)
					if firstErr.Load() == nil {
						firstErr.Store(fmt.Sprintf("%v %d %s", err, resp.StatusCode(), resp.Body()))
					}
					continue
				}
				atomic.AddInt64(&bytesTotal, int64(len(resp.Body())))
				local = append(local, d)
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if v := firstErr.Load(); v != nil {
		fmt.Fprintln(os.Stderr, "first error:", v)
	}
	if len(lat) == 0 {
		return result{errors: int(errs)}, fmt.Errorf("no successful request")
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return result{
		rps: float64(len(lat)) / dur.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100],
		count: len(lat), errors: int(errs), avgSize: int(bytesTotal / int64(len(lat))),
	}, nil
}
