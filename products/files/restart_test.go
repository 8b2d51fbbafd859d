package files_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

// TestVariantCutShortIsRebuilt: a variant's file is written without a sync (it can be made
// again), so a crash may leave it shorter than its record says; after a restart the variant is
// built again and served whole, not served cut.
func TestVariantCutShortIsRebuilt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var id, path string
	var whole []byte
	t.Run("before", func(t *testing.T) {
		e := startWithDir(t, dir)
		id = e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
		u := variantURL(t, e, id, "thumb")
		path = u[strings.Index(u, "/cdn/"):]
		r := e.Do("GET", path, nil)
		if r.Status != 200 || len(r.Body) < 100 {
			t.Fatalf("GET %s = %d, %d bytes", path, r.Status, len(r.Body))
		}
		whole = r.Body
	})
	vdir := filepath.Join(dir, "blobs", "acme", "variants", id)
	ents, err := os.ReadDir(vdir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("variant files: %v, %v", ents, err)
	}
	file := filepath.Join(vdir, ents[0].Name())
	if err := os.Truncate(file, int64(len(whole)/2)); err != nil {
		t.Fatal(err)
	}
	e := startWithDir(t, dir)
	r := e.Do("GET", path, nil)
	if r.Status != 200 || !bytes.Equal(r.Body, whole) {
		t.Fatalf("GET %s after a cut-short file = %d, %d bytes (want the %d of before)", path, r.Status, len(r.Body), len(whole))
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() != int64(len(whole)) {
		t.Errorf("the variant's file after the rebuild: %v, %v", fi, err)
	}
}
