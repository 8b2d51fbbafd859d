package files_test

import (
	"context"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/files"
)

// TestSweeperComponent starts the background sweeper on the injected clock and waits (polling,
// bounded) until an expired slot is gone; Stop returns after the loop ended.
func TestSweeperComponent(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	slot := e.presign(t, secret, "x.png", "image/png", 10)
	e.clock.Add(901 * time.Second)
	w := e.svc.NewSweeper(files.SweeperOptions{Interval: 5 * time.Millisecond})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for e.Do("GET", "/files/assets/"+slot["assetId"].(string), nil, "X-API-Key", pub).Status != 404 {
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not remove the expired slot")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Stop(ctx); err != nil {
		t.Errorf("Stop = %v", err)
	}
	if err := w.Stop(ctx); err != nil {
		t.Errorf("second Stop = %v", err)
	}
}

func TestAdminReads(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.presign(t, secret, "p.png", "image/png", 10)["assetId"].(string)
	r := e.Admin("GET", "/assets?org=acme&project=demo", nil)
	items, _ := r.JSON(t)["items"].([]any)
	if r.Status != 200 || len(items) != 1 || items[0].(map[string]any)["storageKey"] == nil {
		t.Errorf("admin list = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/assets/"+id, nil); r.Status != 200 || r.JSON(t)["status"] != "pending" {
		t.Errorf("admin get = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/assets", nil); r.Status != 400 {
		t.Errorf("admin list without org = %d", r.Status)
	}
	if r := e.Do("GET", "/admin/v1/assets/"+id, nil); r.Status != 401 {
		t.Errorf("admin get without token = %d", r.Status)
	}
}
