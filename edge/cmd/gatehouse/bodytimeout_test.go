package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStalledBodyIs408: a client that sends the headers and part of a body, then stops, is
// answered 408 {"error":"REQUEST_TIMEOUT"} with the connection closed, never 500 INTERNAL, on
// routes that read their body in each of the ways the gateway does: the records import
// (a streamed line scanner), a record create (JSON through c.Body()), the admin apply (a whole
// document), and a form submit (a limited stream); with a known length (past the first 8 KB
// fasthttp reads itself, and within them) and chunked. The server runs with read_timeout 1s;
// the test waits for the answer, never for a clock.
func TestStalledBodyIs408(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := filepath.Join(data, "gatehouse.yaml")
	if err := os.WriteFile(cfg, []byte("read_timeout: 1s\nlog_level: warn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
	addr := strings.TrimPrefix(p.url, "http://")

	admin := "Authorization: Bearer restart-token\r\n"
	routes := []struct{ name, path, header, ctype, part string }{
		{"import", "/admin/v1/projects/demo/collections/posts/records:import", admin, "application/x-ndjson",
			`{"id":"stall-1","data":{"title":"stalled import"}}` + "\n"},
		{"create", "/admin/v1/projects/demo/collections/posts/records", admin, "application/json", `{"id":"stall-2","data":{"title":"`},
		{"apply", "/admin/v1/apply", admin, "application/yaml", "orgs:\n  - slug: acme\n"},
		{"form", "/forms/forms/contact/submit", "X-API-Key: pk_live_demo_web\r\n", "application/json", `{"email":"a@b.test","message":"`},
	}
	type shape struct {
		name    string
		chunked bool
		pad     int // bytes sent before the stall
	}
	shapes := []shape{{"small", false, 0}, {"past 8 KB", false, 20 << 10}, {"chunked", true, 20 << 10}}
	var wg sync.WaitGroup
	for _, r := range routes {
		for _, s := range shapes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := r.name + "/" + s.name
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				defer conn.Close()
				// The fixed test deadline only ends a hung test; the answer is what is awaited.
				_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
				part := r.part
				if s.pad > 0 {
					// Padding the body keeps it valid up to where it stops: spaces in JSON,
					// blank lines in NDJSON, a comment in YAML.
					switch r.ctype {
					case "application/yaml":
						part = "#" + strings.Repeat("x", s.pad) + "\n" + part
					default:
						part = strings.Repeat(" ", s.pad) + part
						if r.ctype == "application/x-ndjson" {
							part = strings.Repeat("\n", s.pad) + r.part
						}
					}
				}
				head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: %s\r\n", r.path, addr, r.header, r.ctype)
				if s.chunked {
					fmt.Fprintf(conn, "%sTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", head, len(part), part)
				} else {
					fmt.Fprintf(conn, "%sContent-Length: %d\r\n\r\n%s", head, len(part)+1000, part)
				}
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Errorf("%s: no answer to a stalled body: %v", name, err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 408 || !strings.Contains(string(body), `"error":"REQUEST_TIMEOUT"`) {
					t.Errorf("%s: stalled body answered %d %s, want 408 REQUEST_TIMEOUT", name, resp.StatusCode, body)
				}
				if !resp.Close {
					t.Errorf("%s: the connection is kept after a stalled body", name)
				}
			}()
		}
	}
	wg.Wait()
	// The server is still well: a whole request on a new connection is answered.
	if code, _, body := p.send(t, "GET", "/healthz", "", ""); code != 200 {
		t.Errorf("after the stalls /healthz = %d %s", code, body)
	}
	if strings.Contains(p.stderr.String(), "INTERNAL") || strings.Contains(p.stderr.String(), "status=500") {
		t.Errorf("the server logged a 500 for a stalled body:\n%s", p.stderr)
	}
}
