package files_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	dto "github.com/prometheus/client_model/go"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/products/files"
	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// metric sums the samples of a metric family of the harness's registry whose labels include
// the given name=value pairs.
func metric(t testing.TB, e *env, name string, labels ...string) float64 {
	t.Helper()
	fams, err := e.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				if !hasLabel(m, labels[i], labels[i+1]) {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				total += m.Counter.GetValue()
			case m.Gauge != nil:
				total += m.Gauge.GetValue()
			}
		}
	}
	return total
}

func hasLabel(m *dto.Metric, k, v string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == k && l.GetValue() == v {
			return true
		}
	}
	return false
}

// Variants are listed in the asset's admin view, stored beside the original and deleted with
// the asset.
func TestVariantsDeletedWithAsset(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	urls := []string{variantURL(t, e, id, "thumb"), variantURL(t, e, id, "box"), signed(t, e, secret, id, map[string]any{"width": 30, "format": "webp"})}
	for _, u := range urls {
		if r := e.Do("GET", u, nil); r.Status != 200 {
			t.Fatalf("GET %s = %d %s", u, r.Status, r.Body)
		}
	}
	adm := e.Do("GET", "/admin/v1/assets/"+id, nil, "Authorization", "Bearer test-admin-token").JSON(t)
	vs, _ := adm["variants"].([]any)
	if len(vs) != 3 {
		t.Fatalf("admin view lists %d variants, want 3: %v", len(vs), adm["variants"])
	}
	dir := filepath.Join(e.Dir, "blobs", "acme", "variants", id)
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 3 {
		t.Fatalf("variant objects beside the original: %v, %v", ents, err)
	}
	for _, v := range vs {
		k := v.(map[string]any)["blobKey"].(string)
		if !strings.HasPrefix(k, "acme/variants/"+id+"/") {
			t.Errorf("variant stored at %s", k)
		}
	}
	// A variant whose record a crash lost (records of variants are written unsynced): its
	// file goes with the asset too.
	if err := os.WriteFile(filepath.Join(dir, "w10_auto_q80.jpeg"), []byte("orphan"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := e.Do("DELETE", "/admin/v1/assets/"+id, nil, "Authorization", "Bearer test-admin-token"); r.Status != 204 {
		t.Fatalf("DELETE = %d %s", r.Status, r.Body)
	}
	for _, u := range urls {
		if r := e.Do("GET", u, nil); r.Status != 404 {
			t.Errorf("GET %s after the deletion = %d", u, r.Status)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("variant objects left after the deletion: %v", ents)
	}
}

// The S3 backend stores, serves and deletes variants like the local folder.
func TestVariantsOnS3(t *testing.T) {
	t.Parallel()
	var s3 *blob.S3
	e := startWith(t, nil, func(t testing.TB, _ string) blob.Store {
		mem := s3mem.New()
		if err := mem.CreateBucket("assets"); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(gofakes3.New(mem).Server())
		t.Cleanup(srv.Close)
		var err error
		s3, err = blob.NewS3(context.Background(), blob.S3Options{Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "assets", AccessKey: "a", SecretKey: "b", Region: "us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		return s3
	})
	id := e.upload(t, secret, "alpha.png", "image/png", photo(t, "alpha.png"))
	u := variantURL(t, e, id, "thumb")
	r := e.Do("GET", u, nil, "Accept", "image/webp")
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/webp" {
		t.Fatalf("variant from S3 = %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if m := decodeAny(t, "image/webp", r.Body); m.Bounds().Size() != image.Pt(64, 64) {
		t.Errorf("variant from S3 is %v", m.Bounds())
	}
	if r2 := e.Do("GET", u, nil, "Accept", "image/webp", "Range", "bytes=-5"); r2.Status != 206 || !bytes.Equal(r2.Body, r.Body[len(r.Body)-5:]) {
		t.Errorf("range of the S3 variant = %d", r2.Status)
	}
	key := "acme/variants/" + id + "/w64_h64_cover_webp_q75.webp"
	obj, err := s3.Open(context.Background(), key)
	if err != nil {
		t.Fatalf("the variant's object %s: %v", key, err)
	}
	obj.Close()
	orphan := "acme/variants/" + id + "/w10_auto_q80.jpeg" // its record lost in a crash
	if _, err := s3.Put(context.Background(), orphan, strings.NewReader("orphan"), "image/jpeg"); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.DeleteAsset(context.Background(), id, func(string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{key, orphan} {
		if _, err := s3.Open(context.Background(), k); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("the variant's object %s after the deletion: %v", k, err)
		}
	}
}

// gate is an Encoder that blocks every encoding until released, and counts them.
type gate struct {
	mu      sync.Mutex
	n       int
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 100), open: make(chan struct{})} }

func (g *gate) Encode(w io.Writer, m image.Image, format string, q int) error {
	g.mu.Lock()
	g.n++
	g.mu.Unlock()
	g.entered <- struct{}{}
	<-g.open
	return codec.Codecs{}.Encode(w, m, format, q)
}

func (g *gate) count() int { g.mu.Lock(); defer g.mu.Unlock(); return g.n }

// get fetches url on its own goroutine-safe client: status and ETag.
func get(url string, ch chan<- [2]string) {
	resp, err := http.Get(url)
	if err != nil {
		ch <- [2]string{"error", err.Error()}
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ch <- [2]string{resp.Status, resp.Header.Get("ETag")}
}

// Concurrent first requests of a variant wait for one build.
func TestVariantBuiltOnce(t *testing.T) {
	t.Parallel()
	g := newGate()
	e := startService(t, "", nil, nil, func(o *files.Options) { o.Encoder = g })
	id := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	u := variantURL(t, e, id, "wide")
	const n = 8
	ch := make(chan [2]string, n)
	go get(u, ch)
	<-g.entered // the first request is building
	for range n - 1 {
		go get(u, ch)
	}
	// The others are waiting on it (or will find it made): release the build.
	close(g.open)
	etag := ""
	for range n {
		r := <-ch
		if r[0] != "200 OK" {
			t.Fatalf("concurrent variant request = %v", r)
		}
		if etag != "" && r[1] != etag {
			t.Errorf("ETags differ: %s vs %s", r[1], etag)
		}
		etag = r[1]
	}
	if c := g.count(); c != 1 {
		t.Errorf("%d encodings for %d concurrent requests, want 1", c, n)
	}
	if b := metric(t, e, "gatehouse_files_variant_builds_total", "outcome", "built"); b != 1 {
		t.Errorf("builds metric = %v, want 1", b)
	}
	if r := e.Do("GET", u, nil); r.Status != 200 || metric(t, e, "gatehouse_files_variant_hits_total") < 1 {
		t.Errorf("a later request = %d, hits %v", r.Status, metric(t, e, "gatehouse_files_variant_hits_total"))
	}
}

// A project flooding distinct variants takes the free slots and fills its own queue (503 with
// Retry-After past it) while another project's build is still served; over the memory budget
// is 422.
func TestVariantPoolFairAndBounded(t *testing.T) {
	t.Parallel()
	g := newGate()
	e := startService(t, "", nil, nil, func(o *files.Options) {
		o.Encoder, o.VariantSlots, o.VariantQueue = g, 2, 1
	})
	demo := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	other := e.upload(t, "sk_live_acme_other", "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	flood := make(chan [2]string, 3)
	for w := range 2 {
		go get(signed(t, e, secret, demo, map[string]any{"width": 11 + w}), flood)
		<-g.entered // demo alone holds both slots
	}
	go get(signed(t, e, secret, demo, map[string]any{"width": 13}), flood)
	for metric(t, e, "gatehouse_files_variant_queue_depth") != 1 {
		// demo's third build is taking its place in the queue
		time.Sleep(time.Millisecond)
	}
	r := e.Do("GET", signed(t, e, secret, demo, map[string]any{"width": 14}), nil)
	if r.Status != 503 || r.Code() != "VARIANT_BUSY" || r.Header.Get("Retry-After") == "" {
		t.Errorf("build past a full queue = %d %s (Retry-After %q), want 503 VARIANT_BUSY", r.Status, r.Body, r.Header.Get("Retry-After"))
	}
	if m := metric(t, e, "gatehouse_files_variant_memory_bytes"); m <= 0 {
		t.Errorf("memory in use during a build = %v", m)
	}
	// Another project's build waits beside the flood's and is served (TestPoolSharesFairly
	// checks it goes first).
	mine := make(chan [2]string, 1)
	go get(signed(t, e, "sk_live_acme_other", other, map[string]any{"width": 15}), mine)
	for metric(t, e, "gatehouse_files_variant_queue_depth") != 2 {
		time.Sleep(time.Millisecond)
	}
	close(g.open)
	if r := <-mine; r[0] != "200 OK" {
		t.Errorf("the other project's variant = %v", r)
	}
	for range 3 {
		if r := <-flood; r[0] != "200 OK" {
			t.Errorf("a queued flood variant = %v", r)
		}
	}

	// A build estimated over the whole budget runs alone: a source within variant_max_pixels
	// always gets its variants (9.3).
	tiny := start(t, func(c *config.Config) { c.Files.VariantMemoryMB = 1 })
	id := tiny.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	if r := tiny.Do("GET", variantURL(t, tiny, id, "wide"), nil); r.Status != 200 {
		t.Errorf("a build larger than the whole budget = %d %s, want 200 (built alone)", r.Status, r.Body)
	}
}

// pngBomb is a valid PNG of w x h black pixels: a few KB of zlib that decode to w*h*3 bytes.
func pngBomb(t testing.TB, w, h int) []byte {
	var raw bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&raw, zlib.BestCompression)
	row := make([]byte, 1+w*3)
	for range h {
		zw.Write(row)
	}
	zw.Close()
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		c := append([]byte(typ), data...)
		b.Write(c)
		binary.Write(&b, binary.BigEndian, crc(c))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 2
	chunk("IHDR", ihdr)
	chunk("IDAT", raw.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// Hostile originals: huge dimensions in a small file, truncated bytes, malformed EXIF.
// In a worker process (worker.go) they answer as in the gateway's own.
func TestVariantHostileImages(t *testing.T) {
	t.Parallel()
	for _, worker := range []bool{false, true} {
		t.Run(fmt.Sprint("worker=", worker), func(t *testing.T) {
			t.Parallel()
			opts := func(o *files.Options) {}
			if worker {
				opts = func(o *files.Options) { o.VariantWorker = workerCommand() }
			}
			hostileImages(t, startService(t, "", func(c *config.Config) { c.Files.VariantMaxPixels = 4_000_000 }, nil, opts))
		})
	}
}

func hostileImages(t *testing.T, e *env) {
	bomb := pngBomb(t, 3000, 3000) // 9 MP, 27 MB decoded, in a small file
	if len(bomb) > 100_000 {
		t.Fatalf("the bomb has %d bytes", len(bomb))
	}
	truncated := photo(t, "photo.jpg")
	truncated = truncated[:len(truncated)/2]
	badExif := photo(t, "photo.jpg")
	app1 := append([]byte{0xFF, 0xE1, 0, 26}, []byte("Exif\x00\x00MM\x00\x2a\xff\xff\xff\xf0\x00\x05\x01\x12\x00\x03")...)
	app1 = append(app1, 0, 0)
	badExif = append(append(append([]byte{}, badExif[:2]...), app1...), badExif[2:]...)
	for _, tc := range []struct {
		name, mime string
		body       []byte
		status     int
		code       string
	}{
		{"bomb.png", "image/png", bomb, 422, "VARIANT_TOO_LARGE"},
		{"header-only.png", "image/png", pngHeader(2100, 2000), 422, "VARIANT_TOO_LARGE"},
		{"truncated.jpg", "image/jpeg", truncated, 422, "VARIANT_UNREADABLE"},
		{"truncated.png", "image/png", photo(t, "alpha.png")[:5000], 422, "VARIANT_UNREADABLE"},
		{"truncated.gif", "image/gif", photo(t, "anim.gif")[:3000], 422, "VARIANT_UNREADABLE"},
		{"bad-exif.jpg", "image/jpeg", badExif, 200, ""},
	} {
		id := e.upload(t, secret, tc.name, tc.mime, tc.body)
		r := e.Do("GET", variantURL(t, e, id, "wide"), nil)
		if r.Status != tc.status || r.Code() != tc.code {
			t.Errorf("%s: variant = %d %s, want %d %s", tc.name, r.Status, r.Body, tc.status, tc.code)
		}
	}
}

// The decoded-size estimate of an original is read from its file once and kept: a flood of
// builds refused for want of a slot reads no file. Deleting the file after the first
// estimate leaves the estimate as it was (an unreadable original gets the largest, 8).
func TestSourceHalvesKept(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	id := e.upload(t, secret, "photo.jpg", "image/jpeg", photo(t, "photo.jpg"))
	ctx := context.Background()
	a, err := e.svc.GetAny(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	first := files.SourceHalvesForTest(e.svc, ctx, a)
	if first == 8 {
		t.Fatalf("the estimate of a readable JPEG is the unreadable one (8)")
	}
	if err := os.Remove(filepath.Join(e.Dir, "blobs", filepath.FromSlash(a.StorageKey))); err != nil {
		t.Fatal(err)
	}
	if got := files.SourceHalvesForTest(e.svc, ctx, a); got != first {
		t.Errorf("estimate after the file went: %d, want the kept %d", got, first)
	}
}
