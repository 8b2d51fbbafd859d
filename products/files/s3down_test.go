package files_test

import (
	"bytes"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/blob/s3test"
)

// The failure row "S3 down" of docs/scale-out.md: with the S3 service unreachable, an upload's
// PUT and an asset's bytes answer 500 INTERNAL while everything kept in the database (presign,
// the asset's record) still answers; the failed PUT leaves no object in the bucket and its
// asset pending (complete answers 409 UPLOAD_INCOMPLETE) with its slot free, so the same PUT
// succeeds once S3 is back, and the assets stored before are served again.
func TestS3DownAndBack(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t, "assets")
	e := startWith(t, nil, func(t testing.TB, _ string) blob.Store {
		return s3.Store(t)
	})
	before := pngBytes(t, 30, 20)
	old := e.upload(t, secret, "before.png", "image/png", before)
	oldURL := e.Do("GET", "/files/assets/"+old, nil, "X-API-Key", pub).JSON(t)["url"].(string)
	stored := s3.Objects(t)

	s3.Down()
	img := pngBytes(t, 40, 30)
	slot := e.presign(t, secret, "during.png", "image/png", len(img)) // the database only: answers
	id := slot["assetId"].(string)
	if r := e.put(t, slot["uploadUrl"].(string), img, "image/png"); r.Status != 500 || !bytes.Contains(r.Body, []byte(`"INTERNAL"`)) {
		t.Errorf("PUT with S3 down = %d %s, want 500 INTERNAL", r.Status, r.Body)
	}
	if r := e.Do("GET", oldURL, nil); r.Status != 500 {
		t.Errorf("asset bytes with S3 down = %d %s, want 500", r.Status, r.Body)
	}
	if a := e.Do("GET", "/files/assets/"+old, nil, "X-API-Key", pub).JSON(t); a["status"] != "completed" {
		t.Errorf("asset record with S3 down = %v, want it completed (read from the database)", a)
	}
	if a := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", secret).JSON(t); a["status"] != "pending" {
		t.Errorf("asset of the failed PUT = %v, want pending", a)
	}
	if r := e.Do("POST", "/files/upload/complete", map[string]any{"assetId": id}, "X-API-Key", secret); r.Status != 409 || !bytes.Contains(r.Body, []byte(`"UPLOAD_INCOMPLETE"`)) {
		t.Errorf("complete after the failed PUT = %d %s, want 409 UPLOAD_INCOMPLETE (nothing was stored)", r.Status, r.Body)
	}

	s3.Up(t)
	if got := s3.Objects(t); len(got) != len(stored) {
		t.Errorf("bucket after the failed PUT holds %v, want only %v (nothing half-written)", got, stored)
	}
	if r := e.Do("GET", oldURL, nil); r.Status != 200 || !bytes.Equal(r.Body, before) {
		t.Errorf("asset bytes once S3 is back = %d, %d bytes", r.Status, len(r.Body))
	}
	if r := e.put(t, slot["uploadUrl"].(string), img, "image/png"); r.Status != 200 {
		t.Fatalf("the same PUT once S3 is back = %d %s", r.Status, r.Body)
	}
	if r := e.Do("POST", "/files/upload/complete", map[string]any{"assetId": id}, "X-API-Key", secret); r.Status != 200 {
		t.Fatalf("complete once S3 is back = %d %s", r.Status, r.Body)
	}
	a := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	if r := e.Do("GET", a["url"].(string), nil); r.Status != 200 || !bytes.Equal(r.Body, img) {
		t.Errorf("asset uploaded once S3 is back = %d, %d bytes", r.Status, len(r.Body))
	}
}
