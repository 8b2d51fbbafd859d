package files_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
)

// s3Service is an S3 protocol server (gofakes3) on a fixed loopback address that goes down
// (every connection refused) and comes back on the same address with the objects it held, as
// a restarted S3-compatible service would.
type s3Service struct {
	addr string
	mem  *s3mem.Backend
	h    http.Handler
	srv  *http.Server
}

func startS3Service(t testing.TB) *s3Service {
	t.Helper()
	s := &s3Service{mem: s3mem.New()}
	if err := s.mem.CreateBucket("assets"); err != nil {
		t.Fatal(err)
	}
	s.h = gofakes3.New(s.mem).Server()
	s.up(t)
	t.Cleanup(s.down)
	return s
}

func (s *s3Service) up(t testing.TB) {
	t.Helper()
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.h}
	go func() { _ = s.srv.Serve(ln) }()
}

func (s *s3Service) down() { _ = s.srv.Close() }

// objects lists the keys in the bucket.
func (s *s3Service) objects(t testing.TB) []string {
	t.Helper()
	l, err := s.mem.ListBucket("assets", nil, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range l.Contents {
		keys = append(keys, o.Key)
	}
	return keys
}

// The failure row "S3 down" of docs/scale-out.md: with the S3 service unreachable, an upload's
// PUT and an asset's bytes answer 500 INTERNAL while everything kept in the database (presign,
// the asset's record) still answers; the failed PUT leaves no object in the bucket and its
// asset pending (complete answers 409 UPLOAD_INCOMPLETE) with its slot free, so the same PUT
// succeeds once S3 is back, and the assets stored before are served again.
func TestS3DownAndBack(t *testing.T) {
	t.Parallel()
	s3 := startS3Service(t)
	e := startWith(t, nil, func(t testing.TB, _ string) blob.Store {
		s, err := blob.NewS3(context.Background(), blob.S3Options{Endpoint: s3.addr, Bucket: "assets", AccessKey: "a", SecretKey: "b", Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	before := pngBytes(t, 30, 20)
	old := e.upload(t, secret, "before.png", "image/png", before)
	oldURL := e.Do("GET", "/files/assets/"+old, nil, "X-API-Key", pub).JSON(t)["url"].(string)
	stored := s3.objects(t)

	s3.down()
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

	s3.up(t)
	if got := s3.objects(t); len(got) != len(stored) {
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
