package files_test

import (
	"bytes"
	"testing"
)

// TestRestartKeepsAssets: a completed asset, its bytes and a pending slot's signed URL survive
// a restart on the same data folder (in production the signing key is a database secret).
func TestRestartKeepsAssets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := pngBytes(t, 5, 5)
	var id, pendingURL string
	t.Run("before", func(t *testing.T) {
		e := startWithDir(t, dir)
		id = e.upload(t, secret, "keep.png", "image/png", img)
		pendingURL = e.presign(t, secret, "later.png", "image/png", len(img))["uploadUrl"].(string)
	})
	e := startWithDir(t, dir)
	a := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	if a["status"] != "completed" {
		t.Fatalf("after restart: %v", a)
	}
	// The URL names the old port; send it to the new server.
	i := bytes.Index([]byte(pendingURL), []byte("/files/upload/"))
	if r := e.put(t, e.URL+pendingURL[i:], img, "image/png"); r.Status != 200 {
		t.Errorf("PUT to a slot made before the restart = %d %s", r.Status, r.Body)
	}
	if r := e.Do("GET", "/cdn/acme/originals/"+id+"/keep.png", nil); r.Status != 200 || !bytes.Equal(r.Body, img) {
		t.Errorf("asset host after restart = %d", r.Status)
	}
}
