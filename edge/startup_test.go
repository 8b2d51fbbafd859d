package edge

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// TestStartupAnswersThenHandsOff: while the gateway is built, /healthz answers 200 and
// everything else 503 on the bound port; after Handoff the real server answers on the same
// port, and closing its listener closes the port.
func TestStartupAnswersThenHandsOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewStartup(ln)
	s.Start()
	t.Cleanup(func() { _ = s.Close() })
	base := "http://" + ln.Addr().String()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/healthz", 200, `{"status":"ok"}`},
		{"/readyz", 503, startingBody},
		{"/records/projects/demo/collections/posts/records", 503, startingBody},
	} {
		if code, body := get(tc.path); code != tc.code || body != tc.body {
			t.Errorf("starting: GET %s = %d %s, want %d %s", tc.path, code, body, tc.code, tc.body)
		}
	}

	served := s.Handoff()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "real") })}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(served) }()
	if code, body := get("/readyz"); code != 200 || body != "real" {
		t.Errorf("after Handoff: GET /readyz = %d %s, want the real server's 200", code, body)
	}
	if err := srv.Close(); err != nil { // closes served, and with it the bound listener
		t.Fatal(err)
	}
	<-done
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		_ = c.Close()
		t.Error("the port still accepts after the server closed its listener")
	}
}

// TestStartupCloseBeforeHandoff: a start-up that fails (Close without Handoff) frees the port
// and ends the accept loop.
func TestStartupCloseBeforeHandoff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewStartup(ln)
	s.Start()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		_ = c.Close()
		t.Error("the port still accepts after Close")
	}
}
