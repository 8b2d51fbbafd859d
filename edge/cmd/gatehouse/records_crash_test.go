package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

const recordsCrashTenants = `
orgs:
  - slug: crash
    projects:
      - id: crash
        keys:
          - {name: server, value: sk_live_crash_server, products: [records]}
        collections:
          - name: posts
            public: true
            fields:
              - {name: title, type: text}
              - {name: category, type: select, options: [a, b, c]}
              - {name: views, type: number}
`

// 1,000 concurrent writers create records through the admin API of the real binary (durable
// commits) until it is killed with SIGKILL; after a restart every acknowledged create is
// readable by id and in the list, the count agrees with the list, and no write answered 5xx.
func TestRecordWritesSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server twice under 1,000 writers")
	}
	t.Parallel()
	data := t.TempDir()
	cfg, ten := filepath.Join(data, "gatehouse.yaml"), filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("storage: {sync_writes: true}\nlog_level: warn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ten, []byte(recordsCrashTenants), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", filepath.Join(data, "d"), "--config", cfg, "--tenants", ten)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
	defer client.CloseIdleConnections()

	const writers, killAt = 1000, 3000
	var (
		acked    sync.Map
		nAcked   atomic.Int64
		killed   atomic.Bool
		killOnce sync.Once
		wg       sync.WaitGroup
		mu       sync.Mutex
		bad      []string
		lost     int
	)
	kill := func() {
		killOnce.Do(func() {
			killed.Store(true)
			_ = p.cmd.Process.Kill() // SIGKILL
		})
	}
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; !killed.Load(); i++ {
				id := fmt.Sprintf("w%04d-%d", g, i)
				body := fmt.Sprintf(`{"id":%q,"data":{"title":"crash %s","category":%q,"views":%d}}`, id, id, []string{"a", "b", "c"}[i%3], i)
				req, _ := http.NewRequest("POST", p.url+"/admin/v1/projects/crash/collections/posts/records", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer restart-token")
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					if !killed.Load() {
						mu.Lock()
						lost++
						mu.Unlock()
					}
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 201:
					acked.Store(id, true)
					if nAcked.Add(1) == killAt {
						kill()
					}
				default:
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: %d", id, resp.StatusCode))
					mu.Unlock()
				}
			}
		}(g)
	}
	wg.Wait()
	kill()             // in case every writer stopped before killAt (the errors below say why)
	p.done <- <-p.done // wait for the exit; leave the result for startProc's cleanup
	if len(bad) > 0 {
		t.Errorf("%d writes answered other than 201, first: %v", len(bad), bad[:min(5, len(bad))])
	}
	if lost > 0 {
		t.Errorf("%d writers lost their connection before the kill", lost)
	}
	if nAcked.Load() < killAt {
		t.Fatalf("only %d creates acknowledged before the writers stopped", nAcked.Load())
	}

	p2 := startProc(t, "--data", filepath.Join(data, "d"), "--config", cfg)
	get := func(path string) (int, []byte) {
		req, _ := http.NewRequest("GET", p2.url+"/records/projects/crash/collections/posts"+path, nil)
		req.Header.Set("X-API-Key", "sk_live_crash_server")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	// The list holds every acknowledged record (and perhaps some whose answer the kill cut off).
	listed := map[string]bool{}
	cursor := ""
	for {
		code, raw := get("/records?limit=100&sort=id&cursor=" + url.QueryEscape(cursor))
		var page struct {
			Items      []struct{ ID string }
			Pagination struct{ NextCursor *string }
		}
		if code != 200 || json.Unmarshal(raw, &page) != nil {
			t.Fatalf("list after restart = %d %s", code, raw)
		}
		for _, it := range page.Items {
			listed[it.ID] = true
		}
		if page.Pagination.NextCursor == nil {
			break
		}
		cursor = *page.Pagination.NextCursor
	}
	missing := 0
	acked.Range(func(k, _ any) bool {
		if !listed[k.(string)] {
			missing++
			if missing <= 5 {
				t.Errorf("acknowledged record %s is not listed after the restart", k)
			}
		}
		return true
	})
	if missing > 0 {
		t.Errorf("%d of %d acknowledged records lost", missing, nAcked.Load())
	}
	// Search by title finds every listed record too: the title index made durable in the
	// background loses its last batches to the kill, and the journal entries they came from
	// must still be there for the restart to index again.
	found := map[string]bool{}
	cursor = ""
	for {
		code, raw := get("/records?q=crash&limit=100&cursor=" + url.QueryEscape(cursor))
		var page struct {
			Items      []struct{ ID string }
			Pagination struct{ NextCursor *string }
		}
		if code != 200 || json.Unmarshal(raw, &page) != nil {
			t.Fatalf("search after restart = %d %s", code, raw)
		}
		for _, it := range page.Items {
			found[it.ID] = true
		}
		if page.Pagination.NextCursor == nil {
			break
		}
		cursor = *page.Pagination.NextCursor
	}
	if len(found) != len(listed) {
		unfound := 0
		for id := range listed {
			if !found[id] {
				if unfound++; unfound <= 5 {
					t.Errorf("record %s is listed but q=crash does not find it after the restart", id)
				}
			}
		}
		t.Errorf("q=crash finds %d records after the restart, the list holds %d", len(found), len(listed))
	}
	// Single reads of a sample (every 10th acknowledged id), and the count agrees with the list.
	n := 0
	acked.Range(func(k, _ any) bool {
		if n++; n%10 == 0 {
			if code, raw := get("/records/" + k.(string)); code != 200 {
				t.Errorf("GET %s after restart = %d %s", k, code, raw)
			}
		}
		return true
	})
	if code, raw := get("/aggregate"); code != 200 || string(raw) != fmt.Sprintf(`{"total":%d}`, len(listed)) {
		t.Errorf("aggregate after restart = %d %s, want total %d", code, raw, len(listed))
	}
	t.Logf("%d creates acknowledged before SIGKILL, %d records after the restart", nAcked.Load(), len(listed))
}
