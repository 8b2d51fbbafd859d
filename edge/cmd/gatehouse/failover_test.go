package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// TestDatabaseFailover is the failure row "database failover" of docs/scale-out.md on the real
// binary: `gatehouse serve` on a multi-host URL (a primary and its synchronous streaming
// standby, target_session_attrs=read-write) while 8 clients put records; the primary is
// SIGKILLed and, once /readyz answers 503, the standby promoted. The writes the gap cuts off
// answer 500 INTERNAL and nothing else, /readyz answers 200 again, writes resume without a
// restart of the node, every record it acknowledged, before the kill or after the promotion,
// is read back, and the title index (which follows the database's change journal) finds a
// record written after the failover.
func TestDatabaseFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary and two PostgreSQL servers")
	}
	t.Parallel()
	ctx := context.Background()
	primary, standby, u := pgtest.StartFailoverPair(t, "gatehouse")
	u += "&connect_timeout=2"

	work := t.TempDir()
	cfg := writeFile(t, work, "cfg.yaml", "log_level: warn\n")
	tenants := writeFile(t, work, "tenants.yaml", crashTenants)
	p := startProcEnv(t, pgEnv(u), "--data", work+"/data", "--config", cfg, "--tenants", tenants)
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
	ready := func() int { code, _, _ := call("GET", "/readyz", "", nil); return code }

	const writers = 8
	load := startOutageLoad(t, writers, "fo", func(_ int, id string) (int, []byte, error) {
		return call("PUT", "/admin/v1/projects/site/collections/notes/records/"+id, "admin", []byte(`{"data":{"title":"`+id+`"}}`))
	})
	defer load.stop()
	load.awaitAcks(100)
	if code := ready(); code != 200 {
		t.Fatalf("/readyz before the failover = %d", code)
	}
	killed := time.Now()
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	notReady := await(t, "/readyz answers 503 with the primary killed", func() bool { return ready() == 503 })
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	atPromotion := load.acks()
	load.awaitAcks(atPromotion + 1)
	firstAck := time.Since(promoted)
	gap := time.Since(killed)
	load.awaitAcks(atPromotion + 100)
	load.stop()
	readyAgain := await(t, "/readyz answers 200 after the promotion", func() bool { return ready() == 200 })
	for _, id := range load.acked {
		code, raw, err := call("GET", "/records/projects/site/collections/notes/records/"+id, "pk_live_crash_web", nil)
		var rec map[string]any
		if err != nil || code != 200 || json.Unmarshal(raw, &rec) != nil || rec["title"] != id {
			t.Errorf("acknowledged record %s after the failover: %d %s (%v)", id, code, raw, err)
		}
	}
	// The title index follows the database's change journal: it resumed on the new primary.
	if code, raw, err := call("PUT", "/admin/v1/projects/site/collections/notes/records/fo-search", "admin", []byte(`{"data":{"title":"the kestrel hovers"}}`)); err != nil || code != 201 {
		t.Fatalf("PUT a record after the failover = %d %s (%v)", code, raw, err)
	}
	found := await(t, "q=kestrel finds the record written after the failover", func() bool {
		code, raw, err := call("GET", "/records/projects/site/collections/notes/records?q=kestrel", "pk_live_crash_web", nil)
		return err == nil && code == 200 && bytes.Contains(raw, []byte(`"id":"fo-search"`))
	})
	t.Logf("failover under %d writers through gatehouse serve: %d records acknowledged (%d before the promotion); %d writes answered 500 INTERNAL in the gap", writers, len(load.acked), atPromotion, load.failed)
	t.Logf("/readyz 503 %v after the kill; write gap %v from the kill to the first acknowledgement after it (first acknowledgement %v after pg_promote returned); /readyz 200 %v after the writes resumed; a record written after it found by q after %v",
		notReady.Round(time.Millisecond), gap.Round(time.Millisecond), firstAck.Round(time.Millisecond), readyAgain.Round(time.Millisecond), found.Round(time.Millisecond))
}
