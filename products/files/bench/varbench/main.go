// Command varbench measures image variants on real server processes, from its own process
// (make bench-variants, make bench-variants-flood):
//
//   - -mode compare: Gatehouse's variants beside PocketBase v0.40.4's thumbs (make pocketbase)
//     and, when given, a small libvips server (bench/vipsthumb, the speed ceiling) on the same
//     photographs and sizes, one server after the other, ROUNDS times: first builds (every
//     request a new image/size pair, so nothing is cached), cached serving, the bytes of each
//     size per format and each server's peak RSS (VmHWM).
//   - -mode flood: one Gatehouse process, two projects; project B reads its cached variants and
//     originals, alone and then while project A floods distinct signed ad-hoc variants; B's
//     p50/p99 both times, A's outcomes and the server's VmHWM.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/procstat"
)

func main() {
	var o opts
	flag.StringVar(&o.mode, "mode", "compare", "compare (Gatehouse beside PocketBase and libvips) or flood (fairness between projects)")
	flag.StringVar(&o.gatehouse, "gatehouse", "bin/gatehouse", "the gatehouse binary")
	flag.StringVar(&o.pocketbase, "pocketbase", "bin/pocketbase", "the PocketBase v0.40.4 binary (make pocketbase)")
	flag.StringVar(&o.vips, "vips", "", "the libvips thumbnail server (bench/vipsthumb); empty or missing: not measured")
	flag.StringVar(&o.photos, "photos", "products/files/testdata/photos", "folder of the photographs")
	flag.StringVar(&o.names, "images", "photo.jpg,rotated.jpg,gray.jpg,alpha.png", "the photographs used, in -photos")
	flag.IntVar(&o.copies, "copies", 4, "uploads of each photograph (distinct assets/records, so first builds are distinct)")
	flag.StringVar(&o.sizes, "sizes", "100x100,320x320,480x0", "thumb sizes in PocketBase's spelling (WxH crops to the box, Wx0 keeps the aspect ratio)")
	flag.IntVar(&o.conc, "c", 8, "concurrent clients for first builds")
	flag.IntVar(&o.cachedConc, "cached-c", 16, "concurrent clients for cached serving")
	flag.DurationVar(&o.dur, "duration", 10*time.Second, "cached-serving load, and each flood phase")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds (each server started afresh each round)")
	flag.Parse()
	var err error
	switch o.mode {
	case "compare":
		err = compare(o)
	case "flood":
		err = flood(o)
	default:
		err = fmt.Errorf("unknown -mode %q", o.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "varbench:", err)
		os.Exit(1)
	}
}

type opts struct {
	mode, gatehouse, pocketbase, vips, photos, names, sizes string
	copies, conc, cachedConc, rounds                        int
	dur                                                     time.Duration
}

// size is one thumb size: PocketBase's "WxH" (fill and crop the centre) or "Wx0"/"0xH".
type size struct {
	spec string
	w, h int
}

func parseSizes(s string) ([]size, error) {
	var out []size
	for _, p := range strings.Split(s, ",") {
		ws, hs, ok := strings.Cut(p, "x")
		w, err1 := strconv.Atoi(ws)
		h, err2 := strconv.Atoi(hs)
		if !ok || err1 != nil || err2 != nil || w < 0 || h < 0 || w+h == 0 {
			return nil, fmt.Errorf("bad size %q", p)
		}
		out = append(out, size{p, w, h})
	}
	return out, nil
}

// photo is one source image's bytes.
type photo struct {
	name, mime string
	data       []byte
}

func loadPhotos(o opts) ([]photo, error) {
	var out []photo
	for _, n := range strings.Split(o.names, ",") {
		b, err := os.ReadFile(filepath.Join(o.photos, n))
		if err != nil {
			return nil, err
		}
		out = append(out, photo{n, http.DetectContentType(b), b})
	}
	return out, nil
}

// server is a started child process.
type server struct {
	cmd  *exec.Cmd
	base string
	dir  string
}

// hwm is the process's peak RSS (VmHWM) in MB, plus its child processes' (Gatehouse's
// variant workers): their peaks summed, an upper bound of the peak they reached together.
func (s *server) hwm() float64 {
	pid := s.cmd.Process.Pid
	kb, _ := procstat.KB(pid, "VmHWM")
	lists, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, l := range lists {
		b, _ := os.ReadFile(l)
		for _, f := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(f); err == nil {
				c, _ := procstat.KB(child, "VmHWM")
				kb += c
			}
		}
	}
	return float64(kb) / 1024
}

func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	for range 100 {
		if s.cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = s.cmd.Process.Kill()
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}, Timeout: 5 * time.Minute}

// call sends a JSON body (when not nil) with the header key: value and decodes a 2xx answer.
func call(method, url, key, value string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(key, value)
	}
	return do(req, out)
}

func do(req *http.Request, out any) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// job is one request of a load phase: its URL and the Accept header.
type job struct {
	url, accept string
	size        int // index into the sizes
	photo       int // index into the photos
	copy        int
}

// outcome is what one request answered.
type outcome struct {
	status int
	bytes  int
	ctype  string
	w, h   int // decoded dimensions, for JPEG and PNG answers
	err    error
	lat    time.Duration
}

func get(j job) outcome {
	req, _ := http.NewRequest("GET", j.url, nil)
	if j.accept != "" {
		req.Header.Set("Accept", j.accept)
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return outcome{err: err, lat: time.Since(t0)}
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	o := outcome{status: resp.StatusCode, bytes: len(b), ctype: resp.Header.Get("Content-Type"), err: err, lat: time.Since(t0)}
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(b)); err == nil {
		o.w, o.h = cfg.Width, cfg.Height
	}
	return o
}

// runJobs requests every job once, conc at a time, and returns each outcome and the time taken.
func runJobs(jobs []job, conc int) ([]outcome, time.Duration) {
	out := make([]outcome, len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				out[i] = get(jobs[i])
			}
		}()
	}
	wg.Wait()
	return out, time.Since(t0)
}

// loadFor requests the jobs round-robin from conc clients for d; it answers the requests per
// second, the latencies and the requests that were not a 200.
func loadFor(jobs []job, conc int, d time.Duration) (float64, []time.Duration, int) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var next atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	bad := 0
	var wg sync.WaitGroup
	t0 := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			myBad := 0
			for ctx.Err() == nil {
				o := get(jobs[int(next.Add(1)-1)%len(jobs)])
				if ctx.Err() != nil {
					break
				}
				mine = append(mine, o.lat)
				if o.err != nil || o.status != 200 {
					myBad++
				}
			}
			mu.Lock()
			lats = append(lats, mine...)
			bad += myBad
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(len(lats)) / time.Since(t0).Seconds(), lats, bad
}

func pct(lats []time.Duration, p float64) time.Duration {
	if len(lats) == 0 {
		return 0
	}
	s := slices.Clone(lats)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64)
}

// result is one server's figures in one round.
type result struct {
	first      map[string]float64 // builds per second, by output format ("webp", "avif", "jpeg/png")
	firstBad   map[string]int
	cached     float64 // requests per second
	cachedP99  time.Duration
	cachedBad  int
	bytes      map[string][]int // by format: the bytes of each size, summed over the photographs (copy 0)
	hwm        float64
	skipCached bool
}

func newResult() *result {
	return &result{first: map[string]float64{}, firstBad: map[string]int{}, bytes: map[string][]int{}}
}

// firstPhase runs one first-build phase, records it under format and answers the jobs that
// succeeded (the cached phase serves only those).
func (r *result) firstPhase(format string, jobs []job, conc, nsizes int, check func(job, outcome) error) []job {
	outs, el := runJobs(jobs, conc)
	var ok []job
	sum := make([]int, nsizes)
	for i, o := range outs {
		if err := check(jobs[i], o); err != nil {
			if r.firstBad[format] == 0 {
				fmt.Fprintf(os.Stderr, "  %s: %s: %v\n", format, jobs[i].url, err)
			}
			r.firstBad[format]++
			continue
		}
		ok = append(ok, jobs[i])
		if jobs[i].copy == 0 {
			sum[jobs[i].size] += o.bytes
		}
	}
	r.first[format] = float64(len(ok)) / el.Seconds()
	r.bytes[format] = sum
	return ok
}

func (r *result) cachedPhase(jobs []job, o opts) {
	if len(jobs) == 0 {
		return
	}
	rate, lats, bad := loadFor(jobs, o.cachedConc, o.dur)
	r.cached, r.cachedP99, r.cachedBad = rate, pct(lats, 0.99), bad
}

func statusOK(_ job, o outcome) error {
	if o.err != nil {
		return o.err
	}
	if o.status != 200 {
		return fmt.Errorf("status %d", o.status)
	}
	return nil
}

// boxCheck also checks that a JPEG/PNG answer is the thumb (PocketBase answers the original
// when it cannot make one).
func boxCheck(sizes []size) func(job, outcome) error {
	return func(j job, o outcome) error {
		if err := statusOK(j, o); err != nil {
			return err
		}
		s := sizes[j.size]
		if o.w == 0 || (s.w > 0 && o.w > s.w) || (s.h > 0 && o.h > s.h) {
			return fmt.Errorf("answer %dx%d %s is not a %s thumb", o.w, o.h, o.ctype, s.spec)
		}
		return nil
	}
}

// ---- Gatehouse ----

const (
	keyA = "sk_live_varbench_a"
	keyB = "sk_live_varbench_b"
)

const tenants = `orgs:
  - slug: bench
    name: Variants bench
    projects:
      - id: a
        name: Project A
        keys:
          - {name: server, value: ` + keyA + `, products: [files]}
      - id: b
        name: Project B
        keys:
          - {name: server, value: ` + keyB + `, products: [files]}
`

func startGatehouse(bin string) (*server, error) {
	dir, err := os.MkdirTemp("", "varbench-gatehouse-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tenants.yaml"), []byte(tenants), 0o644); err != nil {
		return nil, err
	}
	cfg := "listen: \"{addr}\"\npublic_url: \"http://{addr}\"\nadmin_token: \"varbench-admin\"\nlog_level: warn\n"
	s, _, err := startServerCfg(dir, cfg, bin)
	return s, err
}

// startServerCfg writes cfg (with {addr} filled in) and starts gatehouse serve on it.
func startServerCfg(dir, cfg, bin string) (*server, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := os.WriteFile(filepath.Join(dir, "gatehouse.yaml"), []byte(strings.ReplaceAll(cfg, "{addr}", addr)), 0o644); err != nil {
		return nil, "", err
	}
	s, base, err := startServerAt(dir, addr, "/readyz", nil, bin, "serve", "--config", filepath.Join(dir, "gatehouse.yaml"),
		"--data", filepath.Join(dir, "data"), "--tenants", filepath.Join(dir, "tenants.yaml"))
	return s, base, err
}

// startServerAt is startServer on a chosen address.
func startServerAt(dir, addr, ready string, env []string, name string, args ...string) (*server, string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, "", err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	s := &server{cmd: cmd, base: base, dir: dir}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return nil, "", fmt.Errorf("%s exited at start:\n%s", name, log)
		default:
		}
		if resp, err := http.Get(base + ready); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s, base, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, "", fmt.Errorf("%s not ready at %s", name, base+ready)
}

// ghUpload uploads one photograph with the project key and answers its asset id and URL.
func ghUpload(base, key string, p photo, name string) (id, url string, err error) {
	var slot struct{ UploadURL, AssetID string }
	if err := call("POST", base+"/files/upload/presigned", "X-API-Key", key,
		map[string]any{"filename": name, "mimeType": p.mime, "size": len(p.data)}, &slot); err != nil {
		return "", "", err
	}
	req, _ := http.NewRequest("PUT", slot.UploadURL, bytes.NewReader(p.data))
	req.Header.Set("Content-Type", p.mime)
	if err := do(req, nil); err != nil {
		return "", "", err
	}
	if err := call("POST", base+"/files/upload/complete", "X-API-Key", key, map[string]any{"assetId": slot.AssetID}, nil); err != nil {
		return "", "", err
	}
	var a struct{ URL string }
	if err := call("GET", base+"/files/assets/"+slot.AssetID, "X-API-Key", key, nil, &a); err != nil {
		return "", "", err
	}
	return slot.AssetID, a.URL, nil
}

// ghWarm makes one variant per format of an extra upload, untimed: the first use of each
// encoder compiles its WebAssembly module once per process, which a serving gateway has done
// long before.
func ghWarm(base string, p photo) error {
	id, _, err := ghUpload(base, keyA, p, "warm-"+p.name)
	if err != nil {
		return err
	}
	for _, f := range ghFormats {
		u, err := ghVariantURL(base, keyA, id, size{w: 64}, f, 0)
		if err != nil {
			return err
		}
		if o := get(job{url: u}); o.status != 200 {
			return fmt.Errorf("warm-up %s: %d %v", f, o.status, o.err)
		}
	}
	return nil
}

// ghVariantURL signs an ad-hoc variant: PocketBase's WxH as fit cover, Wx0/0xH as the one side.
func ghVariantURL(base, key, id string, s size, format string, quality int) (string, error) {
	body := map[string]any{"format": format, "fit": "inside"}
	if s.w > 0 {
		body["width"] = s.w
	}
	if s.h > 0 {
		body["height"] = s.h
	}
	if s.w > 0 && s.h > 0 {
		body["fit"] = "cover"
	}
	if quality > 0 {
		body["quality"] = quality
	}
	var out struct{ URL string }
	err := call("POST", base+"/files/assets/"+id+"/variant-url", "X-API-Key", key, body, &out)
	return out.URL, err
}

// ghFormats are the output formats measured; the cached phase serves the WebP variants.
var ghFormats = []string{"webp", "avif", "jpeg"}

func runGatehouse(o opts, photos []photo, sizes []size) (*result, error) {
	s, err := startGatehouse(o.gatehouse)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(s.dir)
	defer s.stop()
	r := newResult()
	ids := make([][]string, len(photos)) // [photo][copy]
	for pi, p := range photos {
		for c := range o.copies {
			id, _, err := ghUpload(s.base, keyA, p, fmt.Sprintf("%d-%s", c, p.name))
			if err != nil {
				return nil, err
			}
			ids[pi] = append(ids[pi], id)
		}
	}
	if err := ghWarm(s.base, photos[0]); err != nil {
		return nil, err
	}
	var cached []job
	for _, f := range ghFormats {
		var jobs []job
		for pi := range photos {
			for c, id := range ids[pi] {
				for si, sz := range sizes {
					u, err := ghVariantURL(s.base, keyA, id, sz, f, 0)
					if err != nil {
						return nil, err
					}
					jobs = append(jobs, job{url: u, size: si, photo: pi, copy: c})
				}
			}
		}
		made := r.firstPhase(f, jobs, o.conc, len(sizes), statusOK)
		if f == "webp" {
			cached = made
		}
	}
	r.cachedPhase(cached, o)
	r.hwm = s.hwm()
	return r, nil
}

// ---- PocketBase ----

const pbEmail, pbPassword = "bench@bench.test", "bench-password-1"

func runPocketBase(o opts, photos []photo, sizes []size) (*result, error) {
	dir, err := os.MkdirTemp("", "varbench-pocketbase-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "data")
	if out, err := exec.Command(o.pocketbase, "superuser", "upsert", pbEmail, pbPassword, "--dir", data).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pocketbase superuser upsert: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s, base, err := startServerAt(dir, addr, "/api/health", nil, o.pocketbase, "serve", "--dir", data, "--http", addr)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	var auth struct{ Token string }
	if err := call("POST", base+"/api/collections/_superusers/auth-with-password", "", "",
		map[string]string{"identity": pbEmail, "password": pbPassword}, &auth); err != nil {
		return nil, err
	}
	var thumbs []string
	for _, sz := range sizes {
		thumbs = append(thumbs, sz.spec)
	}
	if err := call("POST", base+"/api/collections", "Authorization", auth.Token, map[string]any{
		"name": "photos", "type": "base", "listRule": "", "viewRule": "",
		"fields": []any{map[string]any{"name": "image", "type": "file", "maxSelect": 1, "maxSize": 50 << 20, "thumbs": thumbs}},
	}, nil); err != nil {
		return nil, err
	}
	r := newResult()
	var jobs []job
	for pi, p := range photos {
		for c := range o.copies {
			var rec struct{ ID, Image string }
			if err := pbUpload(base, auth.Token, p, fmt.Sprintf("%d-%s", c, p.name), &rec); err != nil {
				return nil, err
			}
			for si, sz := range sizes {
				jobs = append(jobs, job{url: base + "/api/files/photos/" + rec.ID + "/" + rec.Image + "?thumb=" + sz.spec, size: si, photo: pi, copy: c})
			}
		}
	}
	r.cachedPhase(r.firstPhase("pb", jobs, o.conc, len(sizes), boxCheck(sizes)), o)
	r.hwm = s.hwm()
	return r, nil
}

func pbUpload(base, token string, p photo, name string, out any) error {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="image"; filename="`+name+`"`)
	h.Set("Content-Type", p.mime)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	part.Write(p.data)
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/collections/photos/records", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", token)
	return do(req, out)
}

// ---- libvips ----

// runVips measures the libvips server: it keeps nothing, so every request is a build.
func runVips(o opts, photos []photo, sizes []size) (*result, error) {
	dir, err := os.MkdirTemp("", "varbench-vips-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s, base, err := startServerAt(dir, addr, "/healthz", nil, o.vips, "-listen", addr, "-dir", o.photos)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	r := newResult()
	for _, f := range ghFormats {
		var jobs []job
		for pi, p := range photos {
			for c := range o.copies {
				for si, sz := range sizes {
					jobs = append(jobs, job{url: fmt.Sprintf("%s/%s?w=%d&h=%d&format=%s&copy=%d", base, p.name, sz.w, sz.h, f, c), size: si, photo: pi, copy: c})
				}
			}
		}
		r.firstPhase(f, jobs, o.conc, len(sizes), statusOK)
	}
	r.skipCached = true
	r.hwm = s.hwm()
	return r, nil
}

// ---- compare ----

func compare(o opts) error {
	photos, err := loadPhotos(o)
	if err != nil {
		return err
	}
	sizes, err := parseSizes(o.sizes)
	if err != nil {
		return err
	}
	vips := o.vips != ""
	if vips {
		if _, err := os.Stat(o.vips); err != nil {
			fmt.Printf("libvips: %s is missing (libvips-dev not installed?): the libvips ceiling is not measured\n", o.vips)
			vips = false
		}
	}
	fmt.Printf("bench-variants: %d photographs (%s) x %d copies x sizes %s; first builds %d concurrent, cached %d concurrent for %s; %d cores\n",
		len(photos), o.names, o.copies, o.sizes, o.conc, o.cachedConc, o.dur, numCPU())
	var gh, pb, vp []*result
	for round := 1; round <= o.rounds; round++ {
		fmt.Printf("round %d, load average %s\n", round, loadavg())
		g, err := runGatehouse(o, photos, sizes)
		if err != nil {
			return fmt.Errorf("gatehouse: %w", err)
		}
		printRound("gatehouse", g, sizes)
		p, err := runPocketBase(o, photos, sizes)
		if err != nil {
			return fmt.Errorf("pocketbase: %w", err)
		}
		printRound("pocketbase", p, sizes)
		gh, pb = append(gh, g), append(pb, p)
		if vips {
			v, err := runVips(o, photos, sizes)
			if err != nil {
				return fmt.Errorf("libvips: %w", err)
			}
			printRound("libvips", v, sizes)
			vp = append(vp, v)
		}
	}
	fmt.Printf("load average after: %s\n\n", loadavg())
	fmt.Println("summary over the rounds: min-max (median); ratios are Gatehouse / PocketBase of the same round")
	for _, f := range ghFormats {
		fmt.Printf("first builds/s   gatehouse %-5s %s   pocketbase %s   ratio %s\n", f,
			spread(gh, func(r *result) float64 { return r.first[f] }),
			spread(pb, func(r *result) float64 { return r.first["pb"] }),
			ratios(gh, pb, func(r *result) float64 { return r.first[f] }, func(r *result) float64 { return r.first["pb"] }))
		if vips {
			fmt.Printf("first builds/s   libvips   %-5s %s\n", f, spread(vp, func(r *result) float64 { return r.first[f] }))
		}
	}
	fmt.Printf("cached req/s     gatehouse webp  %s   pocketbase %s   ratio %s\n",
		spread(gh, func(r *result) float64 { return r.cached }), spread(pb, func(r *result) float64 { return r.cached }),
		ratios(gh, pb, func(r *result) float64 { return r.cached }, func(r *result) float64 { return r.cached }))
	fmt.Printf("cached p99 ms    gatehouse %s   pocketbase %s\n",
		spread(gh, func(r *result) float64 { return float64(r.cachedP99.Microseconds()) / 1000 }),
		spread(pb, func(r *result) float64 { return float64(r.cachedP99.Microseconds()) / 1000 }))
	fmt.Println("bytes per size (summed over the photographs, round 1):")
	for si, sz := range sizes {
		g, p := gh[0].bytes, pb[0].bytes["pb"][si]
		fmt.Printf("  %-8s pocketbase %7d", sz.spec, p)
		for _, f := range ghFormats {
			fmt.Printf("   gatehouse %s %7d (%.2fx)", f, g[f][si], float64(g[f][si])/float64(p))
		}
		if vips {
			fmt.Printf("   libvips webp %7d", vp[0].bytes["webp"][si])
		}
		fmt.Println()
	}
	fmt.Printf("peak RSS (VmHWM) MB  gatehouse %s   pocketbase %s", spread(gh, func(r *result) float64 { return r.hwm }),
		spread(pb, func(r *result) float64 { return r.hwm }))
	if vips {
		fmt.Printf("   libvips %s", spread(vp, func(r *result) float64 { return r.hwm }))
	}
	fmt.Println()
	return nil
}

func printRound(name string, r *result, sizes []size) {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-10s first builds/s:", name)
	for _, f := range sortedKeys(r.first) {
		fmt.Fprintf(&b, " %s %.2f", f, r.first[f])
		if r.firstBad[f] > 0 {
			fmt.Fprintf(&b, " (%d failed)", r.firstBad[f])
		}
	}
	if !r.skipCached {
		fmt.Fprintf(&b, "; cached %.0f req/s p99 %.1f ms", r.cached, float64(r.cachedP99.Microseconds())/1000)
		if r.cachedBad > 0 {
			fmt.Fprintf(&b, " (%d not 200)", r.cachedBad)
		}
	}
	fmt.Fprintf(&b, "; bytes")
	for _, f := range sortedKeys(r.bytes) {
		fmt.Fprintf(&b, " %s", f)
		for si := range sizes {
			fmt.Fprintf(&b, " %s=%d", sizes[si].spec, r.bytes[f][si])
		}
	}
	fmt.Fprintf(&b, "; VmHWM %.0f MB", r.hwm)
	fmt.Println(b.String())
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func spread(rs []*result, f func(*result) float64) string {
	var v []float64
	for _, r := range rs {
		v = append(v, f(r))
	}
	return minMaxMedian(v)
}

func ratios(a, b []*result, fa, fb func(*result) float64) string {
	var v []float64
	for i := range a {
		if d := fb(b[i]); d > 0 {
			v = append(v, fa(a[i])/d)
		}
	}
	return minMaxMedian(v) + "x"
}

func minMaxMedian(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := slices.Clone(v)
	slices.Sort(s)
	f := func(x float64) string {
		if x >= 100 {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return fmt.Sprintf("%s-%s (%s)", f(s[0]), f(s[len(s)-1]), f(s[len(s)/2]))
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return max(1, strings.Count(string(b), "processor\t:"))
}

// ---- flood ----

// flood measures project B's reads alone and under project A's flood of distinct variants.
func flood(o opts) error {
	photos, err := loadPhotos(o)
	if err != nil {
		return err
	}
	fmt.Printf("bench-variants-flood: project B: %d clients on its cached variants and originals; project A: %d clients requesting distinct signed variants; %s each phase; %d cores\n",
		o.cachedConc/4, o.cachedConc, o.dur, numCPU())
	type row struct {
		baseP50, baseP99, floodP50, floodP99 time.Duration
		baseRate, floodRate                  float64
		bBad                                 int
		built, distinct, busy, other         int64
		hwm                                  float64
	}
	var rows []row
	for round := 1; round <= o.rounds; round++ {
		fmt.Printf("round %d, load average %s\n", round, loadavg())
		s, err := startGatehouse(o.gatehouse)
		if err != nil {
			return err
		}
		err = func() error {
			defer os.RemoveAll(s.dir)
			defer s.stop()
			// Project B: its originals and a cached 320 px WebP of each.
			var bJobs []job
			for _, p := range photos {
				id, orig, err := ghUpload(s.base, keyB, p, p.name)
				if err != nil {
					return err
				}
				u, err := ghVariantURL(s.base, keyB, id, size{w: 320}, "webp", 0)
				if err != nil {
					return err
				}
				if o := get(job{url: u}); o.status != 200 {
					return fmt.Errorf("B's variant: %d %v", o.status, o.err)
				}
				bJobs = append(bJobs, job{url: u}, job{url: orig})
			}
			// Project A: distinct signed variants (widths and qualities) of its uploads.
			var aJobs []job
			for c := range o.copies {
				for _, p := range photos {
					id, _, err := ghUpload(s.base, keyA, p, fmt.Sprintf("%d-%s", c, p.name))
					if err != nil {
						return err
					}
					for i := range 100 { // more than A gets built in a phase: every build is a new one
						u, err := ghVariantURL(s.base, keyA, id, size{w: 200 + 4*i}, ghFormats[i%2], 70+c)
						if err != nil {
							return err
						}
						aJobs = append(aJobs, job{url: u})
					}
				}
			}
			bc := max(1, o.cachedConc/4)
			var rw row
			var lats []time.Duration
			rw.baseRate, lats, rw.bBad = loadFor(bJobs, bc, o.dur)
			rw.baseP50, rw.baseP99 = pct(lats, 0.5), pct(lats, 0.99)
			ctx, cancel := context.WithCancel(context.Background())
			var next atomic.Int64
			var wg sync.WaitGroup
			made := make([]atomic.Bool, len(aJobs)) // A's variants answered 200 at least once
			for range o.cachedConc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						i := int(next.Add(1)-1) % len(aJobs)
						out := get(aJobs[i])
						switch {
						case out.status == 200:
							atomic.AddInt64(&rw.built, 1)
							if !made[i].Swap(true) {
								atomic.AddInt64(&rw.distinct, 1)
							}
						case out.status == 503:
							atomic.AddInt64(&rw.busy, 1)
						default:
							atomic.AddInt64(&rw.other, 1)
						}
					}
				}()
			}
			time.Sleep(time.Second) // the flood's queue fills
			var bad int
			rw.floodRate, lats, bad = loadFor(bJobs, bc, o.dur)
			rw.bBad += bad
			rw.floodP50, rw.floodP99 = pct(lats, 0.5), pct(lats, 0.99)
			cancel()
			wg.Wait()
			rw.hwm = s.hwm()
			fmt.Printf("  B alone: %.0f req/s p50 %s p99 %s ms; B under A's flood: %.0f req/s p50 %s p99 %s ms (p99 %.2fx); B not 200: %d; A: %d answered 200 (%d distinct variants of %d), %d 503 VARIANT_BUSY, %d other; VmHWM %.0f MB\n",
				rw.baseRate, ms(rw.baseP50), ms(rw.baseP99), rw.floodRate, ms(rw.floodP50), ms(rw.floodP99),
				float64(rw.floodP99)/float64(max(1, rw.baseP99)), rw.bBad, rw.built, rw.distinct, len(aJobs), rw.busy, rw.other, rw.hwm)
			rows = append(rows, rw)
			return nil
		}()
		if err != nil {
			return err
		}
	}
	var r99, hw []float64
	for _, rw := range rows {
		r99 = append(r99, float64(rw.floodP99)/float64(max(1, rw.baseP99)))
		hw = append(hw, rw.hwm)
	}
	fmt.Printf("summary: B's p99 under the flood / alone %sx; VmHWM %s MB; load average after %s\n", minMaxMedian(r99), minMaxMedian(hw), loadavg())
	return nil
}
