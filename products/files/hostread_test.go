package files_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// TestAssetHostConcurrentReads reads completed public assets concurrently over a few keep-alive
// connections: every read answers 200 with the asset's own bytes. The asset host caches
// completed assets by id; an id taken from fiber's request memory without a copy is rewritten
// by the next request on the same connection, so the cache then holds one asset under another's
// id and reads of it answer 404 (files/api.go copies it; this test fails without the copy).
func TestAssetHostConcurrentReads(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	const assets, workers, reads = 8, 8, 150
	urls := make([]string, assets)
	bodies := make([][]byte, assets)
	for i := range assets {
		bodies[i] = pngBytes(t, 10+i, 10)
		id := e.upload(t, secret, fmt.Sprintf("a%d.png", i), "image/png", bodies[i])
		urls[i] = e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)["url"].(string)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range reads {
				i := (w + n) % assets
				resp, err := client.Get(urls[i])
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !bytes.Equal(body, bodies[i]) {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("GET %s = %d (%d bytes)", urls[i], resp.StatusCode, len(body)))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d concurrent asset reads failed; first: %s", len(failures), workers*reads, failures[0])
	}
}
