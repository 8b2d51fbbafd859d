package files_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
)

// TestFlowOnS3 runs the upload flow with the S3 backend against gofakes3, a real S3 protocol
// server started in-process on loopback.
func TestFlowOnS3(t *testing.T) {
	t.Parallel()
	e := startWith(t, nil, func(t testing.TB, _ string) blob.Store {
		mem := s3mem.New()
		if err := mem.CreateBucket("assets"); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(gofakes3.New(mem).Server())
		t.Cleanup(srv.Close)
		s, err := blob.NewS3(context.Background(), blob.S3Options{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "assets", AccessKey: "a", SecretKey: "b", Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	img := pngBytes(t, 300, 200)
	id := e.upload(t, secret, "s3.png", "image/png", img)
	a := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(t)
	if a["width"] != float64(300) || a["height"] != float64(200) {
		t.Errorf("size = %v x %v", a["width"], a["height"])
	}
	r := e.Do("GET", a["url"].(string), nil)
	if r.Status != 200 || !bytes.Equal(r.Body, img) {
		t.Fatalf("asset host from S3 = %d, %d bytes", r.Status, len(r.Body))
	}
	if r := e.Do("GET", a["url"].(string), nil, "Range", "bytes=-7"); r.Status != 206 || !bytes.Equal(r.Body, img[len(img)-7:]) {
		t.Errorf("range from S3 = %d %q", r.Status, r.Body)
	}
	// A refused upload leaves nothing in the bucket and frees the slot.
	slot := e.presign(t, secret, "x.png", "image/png", len(img))
	if r := e.put(t, slot["uploadUrl"].(string), append(img[:len(img)-1:len(img)-1], 'x', 'y'), "image/png"); r.Status != 400 {
		t.Errorf("longer body on S3 = %d %s", r.Status, r.Body)
	}
	if r := e.put(t, slot["uploadUrl"].(string), img, "image/png"); r.Status != 200 {
		t.Errorf("retry on S3 = %d %s", r.Status, r.Body)
	}
}
