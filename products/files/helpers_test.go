package files_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/files"
)

const tenants = `
orgs:
  - slug: acme
    keys:
      - {name: org-files, value: pk_live_acme_files_org, products: [files]}
    projects:
      - id: demo
        files:
          variants:
            - {name: thumb, width: 64, height: 64, fit: cover, format: auto, quality: 75}
            - {name: wide, width: 120}
            - {name: box, width: 100, height: 50, fit: contain, format: png}
        keys:
          - {name: web, value: pk_live_demo_web, products: [forms, files, records, membership]}
          - {name: server, value: sk_live_demo_server, products: [email, files, records]}
          - {name: noscope, value: sk_live_demo_noscope, products: [email]}
      - id: other
        keys:
          - {name: server, value: sk_live_acme_other, products: [files]}
  - slug: globex
    projects:
      - id: main
        keys:
          - {name: server, value: sk_live_globex_server, products: [files]}
          - {name: web, value: pk_live_globex_web, products: [files]}
`

const (
	secret = "sk_live_demo_server"
	pub    = "pk_live_demo_web"
)

type env struct {
	*edgetest.Harness
	svc   *files.Service
	clock *edgetest.Clock
}

func start(t testing.TB, edit func(*config.Config)) *env { return startWith(t, edit, nil) }

// startWithDir starts the gateway on an existing data folder (restart tests).
func startWithDir(t testing.TB, dir string) *env { return startOn(t, dir, nil, nil) }

func startWith(t testing.TB, edit func(*config.Config), newBlobs func(t testing.TB, dir string) blob.Store) *env {
	return startOn(t, "", edit, newBlobs)
}

// startOn starts the gateway on dir (a fresh folder when empty) with a blob store from
// newBlobs (a local folder under the data folder when nil).
func startOn(t testing.TB, dir string, edit func(*config.Config), newBlobs func(t testing.TB, dir string) blob.Store) *env {
	return startService(t, dir, edit, newBlobs, nil)
}

// startService is startOn that also edits the service's options (opts may be nil).
func startService(t testing.TB, dir string, edit func(*config.Config), newBlobs func(t testing.TB, dir string) blob.Store, opts func(*files.Options)) *env {
	e := &env{clock: edgetest.NewClock(time.Now().UTC())}
	e.Harness = edgetest.New(t, edgetest.Options{
		Tenants: tenants,
		Dir:     dir,
		Config:  edit,
		Products: func(t testing.TB, d edgetest.Deps) []edge.Product {
			signer, err := files.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			cur, err := cursor.NewCursors([]byte("fedcba9876543210fedcba9876543210"))
			if err != nil {
				t.Fatal(err)
			}
			var blobs blob.Store
			if newBlobs != nil {
				blobs = newBlobs(t, d.Dir)
			} else if blobs, err = blob.NewLocal(d.Dir + "/blobs"); err != nil {
				t.Fatal(err)
			}
			o := files.Options{
				DB: d.DB, Blobs: blobs, Signer: signer, VariantSigner: variantSigner(t),
				FilesBase: d.Config.BaseURL("files"), AssetBase: d.Config.AssetBaseURL(), Now: e.clock.Now, Log: d.Log, Registerer: d.Registry,
				Shared:           d.DB.Backend() == store.BackendPostgres,
				VariantMaxPixels: d.Config.Files.VariantMaxPixels, VariantMemoryMB: d.Config.Files.VariantMemoryMB,
			}
			if opts != nil {
				opts(&o)
			}
			e.svc, err = files.NewService(o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.svc.Close() })
			if err := d.Tenancy.Add(e.svc); err != nil {
				t.Fatal(err)
			}
			return []edge.Product{files.NewAPI(e.svc, d.Auth, cur), files.NewHost(e.svc)}
		},
	})
	return e
}

func variantSigner(t testing.TB) *files.VariantSigner {
	s, err := files.NewVariantSigner([]byte("variant-key-0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pngBytes(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		for y := 0; y < h; y++ {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 13), uint8(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{color.Black, color.White}), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webpBytes builds a lossless WebP whose header declares w x h (only the header is read).
func webpBytes(w, h int) []byte {
	payload := []byte{0x2f, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(payload[1:], uint32(w-1)|uint32(h-1)<<14)
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(4+8+len(payload)))
	b.WriteString("WEBPVP8L")
	binary.Write(&b, binary.LittleEndian, uint32(len(payload)))
	b.Write(payload)
	return b.Bytes()
}

// pngHeader is a PNG signature and IHDR declaring w x h, with no pixel data.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2
	binary.Write(&b, binary.BigEndian, uint32(13))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc(chunk))
	b.Write(make([]byte, 64))
	return b.Bytes()
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
