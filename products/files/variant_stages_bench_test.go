package files

import (
	"bytes"
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// BenchmarkVariantStages times the stages of one build apart, in the test process and without
// the store: decoding the original, rendering (crop, shrink, resample, orient), and encoding
// in each format; on testdata/photos/photo.jpg (640x400) at the sizes make bench-variants asks
// PocketBase for, and on a 4096x4096 WebP background when Debian's gnome-backgrounds is there.
func BenchmarkVariantStages(b *testing.B) {
	sources := []struct{ name, path, mime string }{
		{"photo", "testdata/photos/photo.jpg", "image/jpeg"},
		{"adwaita4096", "/usr/share/backgrounds/gnome/adwaita-d.webp", "image/webp"},
	}
	specs := []struct {
		name string
		spec Spec
	}{
		{"100x100", Spec{Width: 100, Height: 100, Fit: "cover", Quality: 80}},
		{"320x320", Spec{Width: 320, Height: 320, Fit: "cover", Quality: 80}},
		{"480x0", Spec{Width: 480, Fit: "inside", Quality: 80}},
	}
	for _, src := range sources {
		data, err := os.ReadFile(src.path)
		if err != nil {
			b.Logf("skipping %s: %v", src.name, err)
			continue
		}
		b.Run(src.name+"/decode", func(b *testing.B) {
			for range b.N {
				if _, err := decodeSource(data, src.mime, 40<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
		m, err := decodeSource(data, src.mime, 40<<20)
		if err != nil {
			b.Fatal(err)
		}
		for _, sp := range specs {
			b.Run(src.name+"/render/"+sp.name, func(b *testing.B) {
				for range b.N {
					render(m, 1, sp.spec)
				}
			})
			out := render(m, 1, sp.spec)
			for _, format := range []string{"jpeg", "webp", "avif"} {
				b.Run(src.name+"/encode/"+sp.name+"/"+format, func(b *testing.B) {
					var buf bytes.Buffer
					for range b.N {
						buf.Reset()
						if err := (codec.Codecs{}).Encode(&buf, out, format, 80); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(buf.Len()), "bytes")
				})
			}
		}
	}
}
