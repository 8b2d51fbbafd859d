// Command recordsbench measures the records product over loopback: it imports N generated
// records (streamed NDJSON through the service's import), reopens the store to time start-up,
// then drives four query mixes with a Go load generator, each with values varied request by
// request, and, in the same run, bare fiber serving a pre-encoded body of the same size (the
// ceiling). It prints req/s, p50 and p99 per mix, import and start-up times and RSS.
//
//	go run ./products/records/cmd/recordsbench -n 100000
//	go run ./products/records/cmd/recordsbench -n 1000000 -duration 10s
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/procstat"
	"github.com/gatehouse-dev/gatehouse/edge/secrets"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

const tenants = `
orgs:
  - slug: bench
    projects:
      - id: bench
        keys:
          - {name: web, value: pk_live_bench_web, products: [records]}
        collections:
          - name: authors
            public: true
            fields:
              - {name: title, type: text}
              - {name: email, type: text, private: true}
          - name: posts
            public: true
            fields:
              - {name: title, type: text}
              - {name: category, type: select, options: [c0, c1, c2, c3, c4, c5, c6, c7, c8, c9]}
              - {name: tags, type: multiselect, options: [t0, t1, t2, t3, t4, t5, t6, t7]}
              - {name: views, type: number}
              - {name: day, type: date}
              - {name: author, type: relation, collection: authors}
              - {name: related, type: relations, collection: posts}
              - {name: internalNote, type: text, private: true}
`

const vocabSize = 2000

var cpuProfile, memProfile, onlyMix string

func word(i int) string {
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe"}
	var b strings.Builder
	for j := 0; j < 4; j++ {
		b.WriteString(syl[i%len(syl)])
		i /= len(syl)
	}
	return b.String()
}

func main() {
	n := flag.Int("n", 100000, "records to import")
	dur := flag.Duration("duration", 5*time.Second, "load per mix")
	conns := flag.Int("c", 16, "concurrent connections")
	dir := flag.String("dir", "", "data folder (a temporary one when empty; kept when given)")
	skipImport := flag.Bool("reuse", false, "reuse the data in -dir instead of importing")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the load phase to this file")
	only := flag.String("only", "", "run only the mixes whose name contains this")
	mprof := flag.String("memprofile", "", "write a heap profile after the load to this file")
	ndjson := flag.String("ndjson", "", "write tenants.yaml, authors.ndjson and posts.ndjson (n posts) to this folder and exit")
	authors := flag.Int("authors", 1000, "authors written by -ndjson")
	flag.Parse()
	cpuProfile, memProfile, onlyMix = *profile, *mprof, *only
	if *ndjson != "" {
		if err := writeNDJSON(*ndjson, *n, *authors); err != nil {
			fmt.Fprintln(os.Stderr, "recordsbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *dur, *conns, *dir, *skipImport); err != nil {
		fmt.Fprintln(os.Stderr, "recordsbench:", err)
		os.Exit(1)
	}
}

type env struct {
	db     *store.DB
	ten    *tenancy.Service
	svc    *records.Service
	keys   *auth.Authenticator
	titles *title.Index
	// cursors signs the list routes' cursors.
	cursors *cursor.Cursors
}

func open(dir string, log *slog.Logger) (*env, error) {
	db, err := store.Open(store.Options{Dir: filepath.Join(dir, "db"), Log: log})
	if err != nil {
		return nil, err
	}
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		return nil, err
	}
	titles, err := title.Open(filepath.Join(dir, "title.bleve"))
	if err != nil {
		return nil, err
	}
	secret, err := secrets.Get(context.Background(), db, "cursor-key", 32)
	if err != nil {
		return nil, err
	}
	cur, err := cursor.NewCursors(secret)
	if err != nil {
		return nil, err
	}
	svc, err := records.NewService(records.Options{DB: db, Tenancy: ten, Titles: titles, Log: log})
	if err != nil {
		return nil, err
	}
	if err := ten.Add(svc); err != nil {
		return nil, err
	}
	keys := auth.New(auth.Options{Lookup: ten, Size: 1000})
	return &env{db: db, ten: ten, svc: svc, keys: keys, titles: titles, cursors: cur}, nil
}

func (e *env) close() {
	_ = e.svc.Close()
	_ = e.db.Close()
}

func run(n int, dur time.Duration, conns int, dir string, reuse bool) error {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if dir == "" {
		d, err := os.MkdirTemp("", "recordsbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	fmt.Printf("recordsbench: %d records, %d connections, %s per mix, GOMAXPROCS %d\n", n, conns, dur, runtime.GOMAXPROCS(0))
	if !reuse {
		e, err := open(dir, log)
		if err != nil {
			return err
		}
		doc, err := tenancy.Parse([]byte(tenants))
		if err != nil {
			return err
		}
		if _, err := e.ten.Apply(ctx, doc); err != nil {
			return err
		}
		if err := e.svc.Start(ctx); err != nil {
			return err
		}
		start := time.Now()
		if err := importAll(ctx, e.svc, n); err != nil {
			return err
		}
		took := time.Since(start)
		fmt.Printf("import: %d records in %s (%.0f records/s), RSS %d MB\n", n+1000, took.Round(time.Millisecond), float64(n+1000)/took.Seconds(), rssMB())
		// The folder is left at rest, its LSM tree compacted, so that a benchmark on it (the
		// mixes below, bench-records-writes) does not pay the import's pending compaction.
		if err := e.db.Compact(); err != nil {
			return err
		}
		e.close()
	}
	runtime.GC()
	start := time.Now()
	e, err := open(dir, log)
	if err != nil {
		return err
	}
	if err := e.svc.Start(ctx); err != nil {
		return err
	}
	fmt.Printf("start-up (open store, open title index, repair, reconcile): %s\n", time.Since(start).Round(time.Millisecond))
	defer e.close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cfg := config.Default()
	cfg.PublicURL = "http://" + ln.Addr().String()
	srv, err := edge.New(edge.Options{Config: cfg, Log: log, Products: []edge.Product{records.NewAPI(e.svc, e.keys, e.cursors)}})
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Shutdown(ctx)
	base := cfg.PublicURL + "/records/projects/bench/collections/posts"

	r := rand.New(rand.NewSource(1))
	var rmu sync.Mutex
	rnd := func(k int) int {
		rmu.Lock()
		defer rmu.Unlock()
		return r.Intn(k)
	}
	mixes := []struct {
		name string
		url  func() string
	}{
		{"(a) two filters + sort + limit 25", func() string {
			return fmt.Sprintf("%s/records?filter=category:eq:c%d&filter=views:gte:%d&sort=-views&limit=25", base, rnd(10), rnd(n))
		}},
		{"(b) q search", func() string {
			return fmt.Sprintf("%s/records?q=%s&limit=25", base, word(rnd(vocabSize))[:6])
		}},
		{"(c) populate=*", func() string {
			return fmt.Sprintf("%s/records?filter=category:eq:c%d&filter=views:lte:%d&sort=-views&populate=*&limit=25", base, rnd(10), rnd(n))
		}},
		{"(d) groupBy", func() string {
			return fmt.Sprintf("%s/aggregate?groupBy=tags&filter=category:eq:c%d&filter=views:gte:%d", base, rnd(10), n-rnd(n/10))
		}},
		{"(d') groupBy, no filter", func() string {
			return fmt.Sprintf("%s/aggregate?groupBy=%s", base, []string{"tags", "category"}[rnd(2)])
		}},
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	var sizeA int
	for i, m := range mixes {
		if onlyMix != "" && !strings.Contains(m.name, onlyMix) {
			continue
		}
		res, err := load(m.url, dur, conns)
		if err != nil {
			return err
		}
		if i == 0 {
			sizeA = res.avgSize
		}
		fmt.Printf("%-36s %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  (%d requests, %d errors, avg body %d B)\n",
			m.name, res.rps, ms(res.p50), ms(res.p99), res.count, res.errors, res.avgSize)
	}
	// The ceiling: bare fiber serving a pre-encoded body of the size of mix (a).
	body := []byte(`{"items":[` + strings.Repeat(" ", max(sizeA-40, 0)) + `],"pagination":{"nextCursor":null}}`)
	bare, stopBare, err := serveBare(body)
	if err != nil {
		return err
	}
	defer stopBare()
	res, err := load(func() string { return bare }, dur, conns)
	if err != nil {
		return err
	}
	fmt.Printf("%-36s %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  (%d requests, body %d B)\n",
		"ceiling: bare fiber, same body size", res.rps, ms(res.p50), ms(res.p99), res.count, len(body))
	if memProfile != "" {
		f, err := os.Create(memProfile)
		if err != nil {
			return err
		}
		runtime.GC()
		_ = pprof.WriteHeapProfile(f)
		_ = f.Close()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("RSS after load: %d MB (anonymous %d MB, file-backed %d MB; Go heap in use %d MB, Go runtime total %d MB)\n",
		rssMB(), statusMB("RssAnon"), statusMB("RssFile"), ms.HeapInuse>>20, (ms.Sys-ms.HeapReleased)>>20)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// importAll streams n posts and 1000 authors through Import without building the file.
func importAll(ctx context.Context, svc *records.Service, n int) error {
	if err := importGen(ctx, svc, "authors", 1000, authorLine); err != nil {
		return err
	}
	return importGen(ctx, svc, "posts", n, postLine(n, 1000))
}

// authorLine writes author i's NDJSON line.
func authorLine(w *bufio.Writer, i int, _ *rand.Rand) {
	fmt.Fprintf(w, `{"id":"au-%d","data":{"title":"Author %s","email":"a%d@bench.test"}}`+"\n", i, word(i), i)
}

// postLine returns the writer of post i's NDJSON line, one of n posts by authors authors.
func postLine(n, authors int) func(w *bufio.Writer, i int, r *rand.Rand) {
	return func(w *bufio.Writer, i int, r *rand.Rand) {
		rec := map[string]any{
			"id":        fmt.Sprintf("p-%07d", i),
			"createdAt": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			"data": map[string]any{
				"title":        word(r.Intn(vocabSize)) + " " + word(r.Intn(vocabSize)) + " " + word(r.Intn(vocabSize)),
				"category":     fmt.Sprintf("c%d", r.Intn(10)),
				"tags":         []string{fmt.Sprintf("t%d", r.Intn(8)), fmt.Sprintf("t%d", r.Intn(8))},
				"views":        r.Intn(n),
				"day":          time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.Intn(365)).Format("2006-01-02"),
				"author":       fmt.Sprintf("au-%d", r.Intn(authors)),
				"related":      []string{fmt.Sprintf("p-%07d", r.Intn(n)), fmt.Sprintf("p-%07d", r.Intn(n))},
				"internalNote": "note " + word(i%vocabSize),
			},
		}
		b, _ := json.Marshal(rec)
		w.Write(b)
		w.WriteByte('\n')
	}
}

// writeNDJSON writes the benchmark's tenants document and its n posts and authors authors as
// files in dir (tenants.yaml, authors.ndjson, posts.ndjson), for importing into a real server
// (make bench-footprint).
func writeNDJSON(dir string, n, authors int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tenants.yaml"), []byte(tenants), 0o644); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		count int
		line  func(*bufio.Writer, int, *rand.Rand)
	}{{"authors.ndjson", authors, authorLine}, {"posts.ndjson", n, postLine(n, authors)}} {
		out, err := os.Create(filepath.Join(dir, f.name))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(out, 1<<16)
		r := rand.New(rand.NewSource(int64(f.count)))
		for i := 0; i < f.count; i++ {
			f.line(w, i, r)
		}
		if err := errors.Join(w.Flush(), out.Close()); err != nil {
			return err
		}
	}
	return nil
}

func importGen(ctx context.Context, svc *records.Service, coll string, n int, line func(*bufio.Writer, int, *rand.Rand)) error {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 1<<16)
		r := rand.New(rand.NewSource(int64(n)))
		for i := 0; i < n; i++ {
			line(w, i, r)
		}
		_ = w.Flush()
		_ = pw.Close()
	}()
	rep, err := svc.Import(ctx, "bench", coll, pr)
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		return fmt.Errorf("import %s: %d lines failed: %+v", coll, rep.Failed, rep.Errors[0])
	}
	return nil
}

func rssMB() int { return statusMB("VmRSS") }

// statusMB reads one kB line of /proc/self/status in MB (-1 when unavailable).
func statusMB(field string) int {
	kb, ok := procstat.KB(0, field)
	if !ok {
		return -1
	}
	return int(kb / 1024)
}
