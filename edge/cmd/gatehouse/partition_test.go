package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// TestDatabasePartition is the failure row "the database unreachable without a word" of
// docs/scale-out.md on the real binary: `gatehouse serve` reaches PostgreSQL through a TCP proxy
// (storage.postgres.statement_timeout 1s) while 8 clients put records; the proxy stops
// forwarding, closing nothing. /readyz answers 503, a write answers 500 INTERNAL after the
// timeout rather than hanging on TCP, and nothing is acknowledged; once the proxy forwards
// again, /readyz answers 200 and writes resume without a restart of the node, and every record
// it acknowledged is read back.
func TestDatabasePartition(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary and PostgreSQL")
	}
	t.Parallel()
	direct := pgtest.URL(t)
	target, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy := pgtest.StartProxy(t, target.Host)
	u, err := proxy.URL(direct)
	if err != nil {
		t.Fatal(err)
	}
	const timeout = time.Second

	work := t.TempDir()
	cfg := writeFile(t, work, "cfg.yaml", "log_level: error\n")
	tenants := writeFile(t, work, "tenants.yaml", crashTenants)
	env := append(pgEnv(u), "GATEHOUSE_STORAGE_POSTGRES_STATEMENT_TIMEOUT="+timeout.String())
	p := startProcEnv(t, env, "--data", work+"/data", "--config", cfg, "--tenants", tenants)
	client := &http.Client{Timeout: 60 * time.Second}
	call := func(method, path, key string, body []byte) (int, []byte, error) {
		req, _ := http.NewRequest(method, p.url+path, bytes.NewReader(body))
		switch key {
		case "admin":
			req.Header.Set("Authorization", "Bearer restart-token")
		case "":
		default:
			req.Header.Set("X-API-Key", key)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, err
	}
	put := func(id string) (int, []byte, error) {
		return call("PUT", "/admin/v1/projects/site/collections/notes/records/"+id, "admin", []byte(`{"data":{"title":"`+id+`"}}`))
	}
	ready := func() int { code, _, _ := call("GET", "/readyz", "", nil); return code }

	const writers = 8
	load := startOutageLoad(t, writers, "cut", func(_ int, id string) (int, []byte, error) { return put(id) })
	defer load.stop()
	load.awaitAcks(100)
	if code := ready(); code != 200 {
		t.Fatalf("/readyz before the partition = %d", code)
	}

	proxy.Partition()
	notReady := await(t, "/readyz answers 503 with the database cut off", func() bool { return ready() == 503 })
	start := time.Now()
	code, raw, err := put("cut-alone")
	took := time.Since(start)
	if err != nil || code != 500 || !bytes.Contains(raw, []byte(`"INTERNAL"`)) {
		t.Errorf("a write across the partition = %d %s (%v), want 500 INTERNAL", code, raw, err)
	}
	// A bound only a hang passes: the write waits for the group in flight (its wait for a
	// connection and its statement, one timeout each), then for its own.
	if took > 8*timeout {
		t.Errorf("a write across the partition answered after %v, want at most %v (it waited on TCP, not the timeout)", took, 8*timeout)
	}
	cut := load.acks()
	load.mu.Lock()
	failedAtCut := load.failed
	load.mu.Unlock()
	deadline := time.After(awaitDeadline)
	for { // every writer answered once more while cut off
		load.mu.Lock()
		failed := load.failed
		load.mu.Unlock()
		if failed >= failedAtCut+writers {
			break
		}
		select {
		case <-load.more:
		case <-deadline:
			t.Fatalf("%d writes failed while cut off, want %d", failed-failedAtCut, writers)
		}
	}
	if n := load.acks(); n != cut {
		t.Errorf("%d writes acknowledged while the proxy forwarded nothing", n-cut)
	}

	proxy.Heal()
	healed := time.Now()
	load.awaitAcks(cut + 1)
	firstAck := time.Since(healed)
	load.awaitAcks(cut + 100)
	load.stop()
	readyAgain := await(t, "/readyz answers 200 once the proxy forwards again", func() bool { return ready() == 200 })
	for _, id := range load.acked {
		code, raw, err := call("GET", "/records/projects/site/collections/notes/records/"+id, "pk_live_crash_web", nil)
		var rec map[string]any
		if err != nil || code != 200 || json.Unmarshal(raw, &rec) != nil || rec["title"] != id {
			t.Errorf("acknowledged record %s after the partition: %d %s (%v)", id, code, raw, err)
		}
	}
	t.Logf("partition under %d writers through gatehouse serve: %d records acknowledged (%d before the cut), every one read back; %d writes answered 500 INTERNAL", writers, len(load.acked), cut, load.failed)
	t.Logf("/readyz 503 %v after the cut; a write across it answered 500 after %v; first acknowledgement %v after the proxy forwarded again; /readyz 200 %v after the load stopped",
		notReady.Round(time.Millisecond), took.Round(time.Millisecond), firstAck.Round(time.Millisecond), readyAgain.Round(time.Millisecond))
}
