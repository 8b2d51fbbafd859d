package files_test

import (
	"bytes"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
)

// BenchmarkAssetHost serves a ~50 KB PNG from the asset host over loopback.
func BenchmarkAssetHost(b *testing.B) {
	e := start(b, nil)
	img := pngBytes(b, 128, 128)
	id := e.upload(b, secret, "b.png", "image/png", img)
	url := e.Do("GET", "/files/assets/"+id, nil, "X-API-Key", pub).JSON(b)["url"].(string)
	b.SetBytes(int64(len(img)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := http.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if n != int64(len(img)) {
				b.Fatalf("got %d bytes", n)
			}
		}
	})
}

// BenchmarkUpload PUTs a ~1 MB incompressible PNG through the signed URL (presign not timed).
func BenchmarkUpload(b *testing.B) {
	e := start(b, nil)
	img := noisePNG(b, 600, 580)
	urls := make([]string, b.N)
	for i := range urls {
		urls[i] = e.presign(b, secret, "u.png", "image/png", len(img))["uploadUrl"].(string)
	}
	b.SetBytes(int64(len(img)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("PUT", urls[i], bytes.NewReader(img))
		req.Header.Set("Content-Type", "image/png")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("PUT: %v %v", err, resp)
		}
		resp.Body.Close()
	}
}

func noisePNG(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = uint8(r.Uint32())
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
