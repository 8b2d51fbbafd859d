// Package s3test gives tests an S3 protocol server (gofakes3, in memory) on a fixed loopback
// address that can go down (every connection refused) and come back on the same address with
// the objects it held, as a restarted S3-compatible service would: the "S3 down" failure rows
// of the products that store bytes in edge/blob are tested against it.
package s3test

import (
	"context"
	"net"
	"net/http"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
)

// Service is one S3 server with one bucket.
type Service struct {
	// Addr is the loopback address it listens on (the same after Down and Up).
	Addr   string
	bucket string
	mem    *s3mem.Backend
	h      http.Handler
	srv    *http.Server
}

// Start starts a server holding an empty bucket, stopped when the test ends.
func Start(t testing.TB, bucket string) *Service {
	t.Helper()
	s := &Service{bucket: bucket, mem: s3mem.New()}
	if err := s.mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	s.h = gofakes3.New(s.mem).Server()
	s.Up(t)
	t.Cleanup(s.Down)
	return s
}

// Up listens again on Addr (on a free port the first time).
func (s *Service) Up(t testing.TB) {
	t.Helper()
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.h}
	go func() { _ = s.srv.Serve(ln) }()
}

// Down closes the listener and every connection; the objects stay for the next Up.
func (s *Service) Down() { _ = s.srv.Close() }

// Objects lists the keys in the bucket.
func (s *Service) Objects(t testing.TB) []string {
	t.Helper()
	l, err := s.mem.ListBucket(s.bucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range l.Contents {
		keys = append(keys, o.Key)
	}
	return keys
}

// Store is an edge/blob S3 store over the bucket.
func (s *Service) Store(t testing.TB) *blob.S3 {
	t.Helper()
	b, err := blob.NewS3(context.Background(), blob.S3Options{Endpoint: s.Addr, Bucket: s.bucket, AccessKey: "a", SecretKey: "b", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
