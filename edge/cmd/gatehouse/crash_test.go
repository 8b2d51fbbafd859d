package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The crash test of issue 13: crashOps operations (form submissions, email sends, record writes
// and uploads) issued by crashClients concurrent clients against the real binary, which is
// SIGKILLed crashKills times at random points while they are in flight, and restarted on the
// same data folder each time. Then: every acknowledged write is there, every acknowledged
// email is delivered, and every completed asset is served by the asset host on its first read.
const (
	crashOps     = 1000
	crashKills   = 20
	crashClients = 24
)

const crashTenants = `orgs:
  - slug: crash
    name: Crash
    projects:
      - id: site
        name: Site
        keys:
          - {name: web, value: pk_live_crash_web, products: [forms, files, records]}
          - {name: server, value: sk_live_crash_server, products: [email, files, records]}
        email:
          from: {email: hello@crash.test, name: Crash}
        forms:
          - slug: contact
            title: Contact
            published: true
            fields:
              - {name: msg, type: text, required: true}
              - {name: photo, type: file, accept: [image/png]}
        collections:
          - name: notes
            public: true
            fields:
              - {name: title, type: text}
`

// crashPNG is a 1x1 PNG; a per-operation trailer after IEND makes every upload's bytes unique.
var crashPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

func uniquePNG(n int) []byte {
	return append(append([]byte{}, crashPNG...), fmt.Sprintf("op-%06d", n)...)
}

// acked is one acknowledged write: its kind, id, and what must be read back.
type acked struct {
	kind, id, value string
	sum             [32]byte // uploads and form files: the bytes
}

type crashRun struct {
	t      *testing.T
	client *http.Client
	mu     sync.Mutex
	acks   []acked
	failed atomic.Int64 // operations that got no acknowledgement (killed in flight, refused)
}

func (r *crashRun) ack(a acked) {
	r.mu.Lock()
	r.acks = append(r.acks, a)
	r.mu.Unlock()
}

// do sends one request and decodes a JSON answer; ok reports the expected status.
func (r *crashRun) do(method, u, key, ctype string, body io.Reader, want int, out any) bool {
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		r.t.Errorf("request %s %s: %v", method, u, err)
		return false
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if key == "admin" {
		req.Header.Del("X-API-Key")
		req.Header.Set("Authorization", "Bearer restart-token")
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return false // the server was killed: not acknowledged
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		if err == nil && resp.StatusCode < 500 {
			// A complete answer that is not the expected one is a bug, not a crash.
			r.t.Errorf("%s %s = %d %s, want %d", method, u, resp.StatusCode, raw, want)
		}
		return false
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			r.t.Errorf("%s %s: answer %s: %v", method, u, raw, err)
			return false
		}
	}
	return true
}

// op runs operation n against the server at base and records it when acknowledged.
func (r *crashRun) op(base string, n int) bool {
	value := fmt.Sprintf("op %d", n)
	var got struct{ ID, Status string }
	switch n % 4 {
	case 0: // a form submission, every other one with a file part
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		_ = w.WriteField("msg", value)
		var sum [32]byte
		if n%8 == 0 {
			img := uniquePNG(n)
			sum = sha256.Sum256(img)
			h := make(map[string][]string)
			h["Content-Disposition"] = []string{`form-data; name="photo"; filename="p.png"`}
			h["Content-Type"] = []string{"image/png"}
			pw, _ := w.CreatePart(h)
			_, _ = pw.Write(img)
		}
		_ = w.Close()
		if !r.do("POST", base+"/forms/forms/contact/submit", "pk_live_crash_web", w.FormDataContentType(), &body, 201, &got) {
			return false
		}
		r.ack(acked{kind: "form", id: got.ID, value: value, sum: sum})
	case 1: // an email send
		body := fmt.Sprintf(`{"to":{"email":"r%d@example.com"},"subject":%q,"bodyText":"hello"}`, n, value)
		if !r.do("POST", base+"/email/notifications/send", "sk_live_crash_server", "application/json", strings.NewReader(body), 202, &got) {
			return false
		}
		r.ack(acked{kind: "email", id: got.ID, value: value})
	case 2: // a record write
		id := fmt.Sprintf("note-%d", n)
		body := fmt.Sprintf(`{"data":{"title":%q}}`, value)
		if !r.do("PUT", base+"/admin/v1/projects/site/collections/notes/records/"+id, "admin", "application/json", strings.NewReader(body), 201, nil) {
			return false
		}
		r.ack(acked{kind: "record", id: id, value: value})
	case 3: // an upload: presign, PUT, complete
		img := uniquePNG(n)
		var slot struct{ AssetID, UploadURL string }
		body := fmt.Sprintf(`{"filename":"op-%d.png","mimeType":"image/png","size":%d}`, n, len(img))
		if !r.do("POST", base+"/files/upload/presigned", "sk_live_crash_server", "application/json", strings.NewReader(body), 200, &slot) {
			return false
		}
		u, err := url.Parse(slot.UploadURL)
		if err != nil {
			r.t.Errorf("uploadUrl %q: %v", slot.UploadURL, err)
			return false
		}
		if !r.do("PUT", base+u.RequestURI(), "", "image/png", bytes.NewReader(img), 200, nil) {
			return false
		}
		if !r.do("POST", base+"/files/upload/complete", "sk_live_crash_server", "application/json", strings.NewReader(`{"assetId":"`+slot.AssetID+`"}`), 200, &got) {
			return false
		}
		if got.Status != "completed" {
			r.t.Errorf("complete %s = %+v", slot.AssetID, got)
			return false
		}
		a := acked{kind: "asset", id: slot.AssetID, sum: sha256.Sum256(img)}
		r.ack(a)
		// Served by the asset host on the first read right after the complete (unless the
		// process is killed before the read).
		r.firstRead(base, a, false)
	}
	return true
}

// kill SIGKILLs the process and waits for it to be gone (safe from any goroutine).
func (p *proc) kill(t *testing.T) {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Error(err)
	}
	err := <-p.done
	p.done <- err // for the cleanup of startProc
}

func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills the real binary 21 times")
	}
	t.Parallel()
	data := t.TempDir()
	cfg := filepath.Join(data, "crash.yaml")
	tenants := filepath.Join(data, "tenants.yaml")
	// The submission rate limit (60 per minute per key and form) is not under test here.
	if err := os.WriteFile(cfg, []byte("log_level: warn\nforms:\n  rate_per_minute: 100000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tenants, []byte(crashTenants), 0o600); err != nil {
		t.Fatal(err)
	}
	run := &crashRun{t: t, client: &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: crashClients, DisableCompression: true},
	}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 13))
	next := 0 // the next operation number to issue
	for round := 0; round <= crashKills; round++ {
		args := []string{"--data", data, "--config", cfg}
		if round == 0 {
			args = append(args, "--tenants", tenants)
		}
		p := startProc(t, args...)
		// This round's share of the operations still to issue; the last process (no kill)
		// issues what is left.
		budget := crashOps - next
		if round < crashKills {
			budget /= crashKills + 1 - round
		}
		first := next
		next += budget
		// The kill comes after a random number of answers, between a tenth and nine tenths of
		// the round's operations: always with operations in flight, never at a fixed time.
		killAt := int64(budget/10 + rng.IntN(budget*8/10+1))
		var answered atomic.Int64
		killed := make(chan struct{})
		var once sync.Once
		ops := make(chan int)
		var wg sync.WaitGroup
		for c := 0; c < crashClients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range ops {
					if !run.op(p.url, n) {
						run.failed.Add(1)
					}
					if answered.Add(1) == killAt && round < crashKills {
						once.Do(func() { p.kill(t); close(killed) })
					}
				}
			}()
		}
		for n := first; n < first+budget; n++ {
			select {
			case <-killed:
				next = n
				n = first + budget
				continue
			default:
			}
			select {
			case ops <- n:
			case <-killed:
				// Not issued before the kill: carried over to the next process.
				next = n
				n = first + budget
			}
		}
		close(ops)
		wg.Wait()
		if round == crashKills {
			run.verify(p.url)
			run.client.CloseIdleConnections()
			p.stop(t)
		}
	}
	counts := map[string]int{}
	for _, a := range run.acks {
		counts[a.kind]++
	}
	t.Logf("crash test: %d operations issued across %d SIGKILLs, %d acknowledged (%v), %d unacknowledged (in flight at a kill, or sent to the killed process)",
		next, crashKills, len(run.acks), counts, run.failed.Load())
	if next != crashOps {
		t.Errorf("issued %d operations, want %d", next, crashOps)
	}
}

// verify reads back every acknowledged write from the last process.
func (r *crashRun) verify(base string) {
	t := r.t
	for _, a := range r.acks {
		switch a.kind {
		case "form":
			var sub struct {
				Data  map[string]any
				Files []struct{ URL string }
			}
			if !r.do("GET", base+"/admin/v1/projects/site/forms/contact/submissions/"+a.id, "admin", "", nil, 200, &sub) || sub.Data["msg"] != a.value {
				t.Errorf("acknowledged submission %s (%s) lost or changed: %+v", a.id, a.value, sub)
				continue
			}
			if a.sum != [32]byte{} {
				if len(sub.Files) != 1 {
					t.Errorf("acknowledged submission %s: file lost (%+v)", a.id, sub.Files)
				} else if sum, _ := r.sum(sub.Files[0].URL, base, "admin"); sum != a.sum {
					t.Errorf("acknowledged submission %s: file changed (%+v)", a.id, sub.Files)
				}
			}
		case "record":
			var rec map[string]any
			if !r.do("GET", base+"/records/projects/site/collections/notes/records/"+a.id, "pk_live_crash_web", "", nil, 200, &rec) || rec["title"] != a.value {
				t.Errorf("acknowledged record %s (%s) lost or changed: %+v", a.id, a.value, rec)
			}
		case "asset":
			// The first read of the asset host in this process: no retry.
			r.firstRead(base, a, true)
		}
	}
	// Every acknowledged email is there and ends delivered (to the outbox) once the last
	// process's worker has run; no acknowledged send is lost.
	deadline := time.Now().Add(60 * time.Second)
	for _, a := range r.acks {
		if a.kind != "email" {
			continue
		}
		for {
			var m struct{ Status, Subject string }
			if !r.do("GET", base+"/admin/v1/email/messages/"+a.id, "admin", "", nil, 200, &m) || m.Subject != a.value {
				t.Errorf("acknowledged email %s (%s) lost: %+v", a.id, a.value, m)
				break
			}
			if m.Status == "delivered" {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("acknowledged email %s is still %s a minute after the last restart", a.id, m.Status)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// firstRead reads a completed asset's public URL on the asset host once: it must be the
// uploaded bytes. A connection error (the process was killed) is an error only when final.
func (r *crashRun) firstRead(base string, a acked, final bool) {
	var as struct{ Status, URL string }
	if !r.do("GET", base+"/files/assets/"+a.id, "pk_live_crash_web", "", nil, 200, &as) || as.Status != "completed" || as.URL == "" {
		if final {
			r.t.Errorf("acknowledged upload %s lost or not completed: %+v", a.id, as)
		}
		return
	}
	sum, answered := r.sum(as.URL, base, "")
	if answered && sum != a.sum || !answered && final {
		r.t.Errorf("completed asset %s: the asset host's first read of %s is not the uploaded bytes", a.id, as.URL)
	}
}

// sum fetches a URL (its path and query, against base) once and returns the body's SHA-256
// (the zero sum when the answer is not 200), and whether the server answered at all.
func (r *crashRun) sum(raw, base, key string) ([32]byte, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		r.t.Errorf("url %q: %v", raw, err)
		return [32]byte{}, true
	}
	req, _ := http.NewRequest("GET", base+u.RequestURI(), nil)
	if key == "admin" {
		req.Header.Set("Authorization", "Bearer restart-token")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return [32]byte{}, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return [32]byte{}, false
	}
	if resp.StatusCode != 200 {
		r.t.Errorf("GET %s = %d %s", raw, resp.StatusCode, b)
		return [32]byte{}, true
	}
	return sha256.Sum256(b), true
}
