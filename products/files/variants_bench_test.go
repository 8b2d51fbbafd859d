package files_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/files"
)

// BenchmarkVariantFirstBuild makes a new variant of testdata/photos/photo.jpg (640x400,
// 35 KB) per iteration over loopback, about 320 pixels wide, in each output format: decode,
// Catmull-Rom resize, encode, store, serve. The signed URLs are made before the timer.
func BenchmarkVariantFirstBuild(b *testing.B) {
	for _, format := range []string{"jpeg", "png", "webp", "avif"} {
		b.Run(format, func(b *testing.B) {
			e := start(b, nil)
			id := e.upload(b, secret, "photo.jpg", "image/jpeg", photo(b, "photo.jpg"))
			urls := make([]string, b.N)
			for i := range urls {
				w, q := 300+i%40, 1+(i/40)%100
				u, err := e.svc.VariantURL(context.Background(), files.Scope{Org: "acme", Project: "demo"}, id,
					files.VariantOptions{Width: &w, Format: format, Quality: &q})
				if err != nil {
					b.Fatal(err)
				}
				urls[i] = u
			}
			b.ResetTimer()
			for i := range b.N {
				fetch(b, urls[i])
			}
		})
	}
}

// BenchmarkVariantCached serves a variant made before (a 320x200 WebP), in parallel.
func BenchmarkVariantCached(b *testing.B) {
	e := start(b, nil)
	id := e.upload(b, secret, "photo.jpg", "image/jpeg", photo(b, "photo.jpg"))
	u := signed(b, e, secret, id, map[string]any{"width": 320, "format": "webp"})
	fetch(b, u)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			fetch(b, u)
		}
	})
}

func fetch(b *testing.B, u string) {
	resp, err := http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s = %d", u, resp.StatusCode)
	}
}
