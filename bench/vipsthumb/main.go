// Command vipsthumb is the speed ceiling of the variants benchmark (make bench-variants): a
// tiny resize server on libvips (govips), the library imgproxy is built on, which keeps nothing
// and so builds on every request. GET /{name}?w=W&h=H&format=webp|avif|jpeg makes a W x H thumbnail
// of the file name in -dir (both given: crop the centre to the box; one given: keep the
// aspect ratio; never enlarged), WebP (quality 80, effort 4, as Gatehouse's libwebp method 4),
// AVIF (quality 80, the fastest effort, as Gatehouse's libaom speed) or JPEG (quality 80),
// metadata stripped.
// It is its own Go module with cgo and the system libvips (Debian libvips-dev), so neither
// reaches the gateway's build.
package main

import (
	"flag"
	"log"
	"net/http"
	"path/filepath"
	"strconv"

	"github.com/davidbyttow/govips/v2/vips"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8091", "address to serve")
	dir := flag.String("dir", ".", "folder of the originals")
	flag.Parse()
	vips.LoggingSettings(nil, vips.LogLevelError)
	vips.Startup(nil)
	defer vips.Shutdown()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /{name}", func(w http.ResponseWriter, r *http.Request) {
		width, _ := strconv.Atoi(r.URL.Query().Get("w"))
		height, _ := strconv.Atoi(r.URL.Query().Get("h"))
		crop := vips.InterestingCentre
		switch {
		case width == 0 && height == 0:
			http.Error(w, "w or h is required", http.StatusBadRequest)
			return
		case width == 0 || height == 0:
			// One side only: the other is left unbounded, so the given one decides the scale.
			crop = vips.InterestingNone
			if width == 0 {
				width = 1 << 20
			}
			if height == 0 {
				height = 1 << 20
			}
		}
		img, err := vips.NewThumbnailWithSizeFromFile(filepath.Join(*dir, filepath.Base(r.PathValue("name"))), width, height, crop, vips.SizeDown)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		defer img.Close()
		var out []byte
		var ctype string
		switch r.URL.Query().Get("format") {
		case "avif":
			ctype = "image/avif"
			out, _, err = img.ExportAvif(&vips.AvifExportParams{StripMetadata: true, Quality: 80, Bitdepth: 8, Effort: 0})
		case "jpeg":
			ctype = "image/jpeg"
			out, _, err = img.ExportJpeg(&vips.JpegExportParams{StripMetadata: true, Quality: 80})
		default:
			ctype = "image/webp"
			out, _, err = img.ExportWebp(&vips.WebpExportParams{StripMetadata: true, Quality: 80, ReductionEffort: 4})
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	})
	log.Fatal(http.ListenAndServe(*listen, mux))
}
