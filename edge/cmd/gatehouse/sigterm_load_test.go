package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Decisions 9.5: SIGTERM under any load exits 0 after the requests in flight are answered (no
// panic). sigtermRuns times, the real binary gets SIGTERM while sigtermClients keep-alive
// clients keep a request each in flight across the five products (record reads, form submits,
// email sends, asset reads, membership config). Every request is either answered in full (a
// complete response of the status its route gives, or 429) or refused before any byte of an
// answer (connection refused, or closed with nothing sent): never a truncated or 5xx answer.
// Before (fasthttp v1.51 and a connection tracking that closed connections fasthttp was
// serving), the process could panic in serveConn and exit with status 2.
const (
	sigtermRuns    = 20
	sigtermClients = 1000
)

// loadReq is one request a client sends again and again, and the status its route answers.
type loadReq struct {
	name string
	raw  []byte
	want int
}

// loadTally is what the clients of one run saw.
type loadTally struct {
	answered  atomic.Int64 // complete answers
	refused   atomic.Int64 // requests refused or closed before any byte of an answer
	inFlight  atomic.Int64 // requests written and not yet answered
	signalled atomic.Bool  // SIGTERM was sent

	mu       sync.Mutex
	problems []string
}

func (lt *loadTally) problem(format string, args ...any) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if len(lt.problems) < 10 {
		lt.problems = append(lt.problems, fmt.Sprintf(format, args...))
	}
}

func TestSIGTERMUnderLoad(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := emptyConfig(t, data)
	var asset string
	var inFlight, answered int64
	for run := range sigtermRuns {
		// The same data folder every run: the demo tenants apply once, and the asset stays.
		p := startProcEnv(t, []string{"GATEHOUSE_FORMS_RATE_PER_MINUTE=1000000000"},
			"--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
		if asset == "" {
			asset = uploadDemoAsset(t, p)
		}
		n, a := sigtermUnderLoad(t, p, run, loadRequests(asset))
		inFlight += n
		answered += a
		if t.Failed() {
			return
		}
	}
	t.Logf("%d runs: %d requests in flight at the signal on average, %d answered in all",
		sigtermRuns, inFlight/sigtermRuns, answered)
}

// uploadDemoAsset uploads one PNG to the demo project and returns its id.
func uploadDemoAsset(t *testing.T, p *proc) string {
	t.Helper()
	return uploadAsset(t, p, "sk_live_demo_server")
}

// uploadAsset uploads one PNG (load.png) with the secret key of a project and returns its id.
func uploadAsset(t *testing.T, p *proc, key string) string {
	t.Helper()
	img := uniquePNG(0)
	var slot struct{ AssetID, UploadURL string }
	body := fmt.Sprintf(`{"filename":"load.png","mimeType":"image/png","size":%d}`, len(img))
	code, raw := do(t, "POST", p.url+"/files/upload/presigned", key, body)
	if err := json.Unmarshal([]byte(raw), &slot); code != 200 || err != nil {
		t.Fatalf("presign = %d %s", code, raw)
	}
	u, err := url.Parse(slot.UploadURL)
	if err != nil {
		t.Fatalf("uploadUrl %q: %v", slot.UploadURL, err)
	}
	req, _ := http.NewRequest("PUT", p.url+u.RequestURI(), strings.NewReader(string(img)))
	req.Header.Set("Content-Type", "image/png")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload PUT = %d", resp.StatusCode)
	}
	if code, raw := do(t, "POST", p.url+"/files/upload/complete", key, `{"assetId":"`+slot.AssetID+`"}`); code != 200 {
		t.Fatalf("complete = %d %s", code, raw)
	}
	return slot.AssetID
}

// loadRequests are the requests of the load: reads and writes of every product.
func loadRequests(asset string) []loadReq {
	get := func(path, key string) []byte {
		return []byte("GET " + path + " HTTP/1.1\r\nHost: x\r\nX-API-Key: " + key + "\r\n\r\n")
	}
	post := func(path, key, body string) []byte {
		return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: x\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			path, key, len(body), body)
	}
	return []loadReq{
		{"record read", get("/records/projects/demo/collections/posts/records/post-2?populate=author", "pk_live_demo_web"), 200},
		{"record list", get("/records/projects/demo/collections/posts/records?limit=5&sort=-views", "pk_live_demo_web"), 200},
		{"form submit", post("/forms/forms/contact/submit", "pk_live_demo_web", `{"data":{"email":"load@acme.test","message":"sent under SIGTERM"}}`), 201},
		{"email send", post("/email/notifications/send", "sk_live_demo_server", `{"to":{"email":"load@x.test"},"subject":"Load","bodyText":"sent under SIGTERM"}`), 202},
		{"asset read", get("/files/assets/"+asset, "pk_live_demo_web"), 200},
		{"membership config", get("/membership/config", "pk_live_demo_web"), 200},
	}
}

// sigtermUnderLoad runs the load against p, sends SIGTERM once every client has had an
// answer, and checks the exit and every answer. It returns the requests in flight at the
// signal and the answers in all.
func sigtermUnderLoad(t *testing.T, p *proc, run int, reqs []loadReq) (int64, int64) {
	t.Helper()
	addr := strings.TrimPrefix(p.url, "http://")
	var lt loadTally
	var ready, done sync.WaitGroup
	ready.Add(sigtermClients)
	done.Add(sigtermClients)
	for i := range sigtermClients {
		go func() {
			defer done.Done()
			loadClient(addr, reqs, i, &lt, ready.Done)
		}()
	}
	allReady := make(chan struct{})
	go func() { ready.Wait(); close(allReady) }()
	select {
	case <-allReady:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("run %d: gatehouse exited (%v) under load before the signal: %s", run, err, p.stderr)
	case <-time.After(2 * time.Minute): // a hang guard, not a threshold
		t.Fatalf("run %d: the clients got no first answer: %v", run, lt.problems)
	}

	lt.signalled.Store(true)
	inFlight := lt.inFlight.Load()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Errorf("run %d: gatehouse exited with %v under load, want status 0", run, err)
		}
	case <-time.After(2 * time.Minute): // a hang guard, not a threshold
		t.Fatalf("run %d: gatehouse did not exit after SIGTERM", run)
	}
	done.Wait() // every client ends: its server is gone
	stderr := p.stderr.String()
	if strings.Contains(stderr, "panic") {
		t.Errorf("run %d: a panic in stderr", run)
	}
	if !strings.Contains(stderr, "storage closed") {
		t.Errorf("run %d: no clean storage close in the log", run)
	}
	for _, pr := range lt.problems {
		t.Errorf("run %d: %s", run, pr)
	}
	if t.Failed() {
		// The log without its access lines (thousands of them).
		var b strings.Builder
		for line := range strings.Lines(stderr) {
			if !strings.Contains(line, " msg=request ") {
				b.WriteString(line)
			}
		}
		t.Logf("run %d: stderr without access lines:\n%s", run, b.String())
	}
	return inFlight, lt.answered.Load()
}

// loadClient sends reqs in turn (starting at the i-th) on a keep-alive connection, dialling
// again when the server closes it, until the server refuses a connection after the signal.
// ready is called after its first answer.
func loadClient(addr string, reqs []loadReq, i int, lt *loadTally, ready func()) {
	var conn net.Conn
	var br *bufio.Reader
	first := true
	defer func() {
		if conn != nil {
			conn.Close()
		}
		if first {
			ready() // never answered: the run's hang guard or the checks report it
		}
	}()
	for n := i; ; n++ {
		req := reqs[n%len(reqs)]
		if conn == nil {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				if !lt.signalled.Load() {
					lt.problem("dial before the signal: %v", err)
				}
				lt.refused.Add(1)
				return
			}
			conn, br = c, bufio.NewReader(c)
			_ = conn.SetDeadline(time.Now().Add(3 * time.Minute)) // a hang guard, not a threshold
		}
		lt.inFlight.Add(1)
		_, werr := conn.Write(req.raw)
		// The answer's first byte, or none: the connection was closed before any answer.
		_, err := br.Peek(1)
		if err != nil {
			lt.inFlight.Add(-1)
			if !lt.signalled.Load() {
				lt.problem("%s: connection closed before the signal: %v (write: %v)", req.name, err, werr)
			}
			lt.refused.Add(1)
			conn.Close()
			conn = nil
			continue
		}
		resp, err := http.ReadResponse(br, nil)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(resp.Body)
		}
		lt.inFlight.Add(-1)
		switch {
		case err != nil:
			lt.problem("%s: truncated answer: %v", req.name, err)
			return
		case resp.StatusCode != req.want && resp.StatusCode != http.StatusTooManyRequests:
			lt.problem("%s: answered %d %s, want %d", req.name, resp.StatusCode, body, req.want)
		case !json.Valid(body):
			lt.problem("%s: answered %d with a body that is not JSON: %q", req.name, resp.StatusCode, body)
		}
		lt.answered.Add(1)
		if first {
			first = false
			ready()
		}
		if resp.Close {
			conn.Close()
			conn = nil
		}
	}
}
