package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMGraceful: on SIGTERM the binary closes a connection that never sent a request and
// an idle keep-alive connection at once, finishes the request in flight (its body completes
// after the signal), and exits 0. Before, the quiet connection held the stop for the whole
// shutdown_timeout and the exit status was 1.
func TestSIGTERMGraceful(t *testing.T) {
	t.Parallel()
	p := startDemo(t)
	addr := strings.TrimPrefix(p.url, "http://")

	// A connection that never sends a request.
	quiet, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close()
	// An idle keep-alive connection after one answered request.
	idle := &http.Client{Transport: &http.Transport{}}
	if resp, err := idle.Get(p.url + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /healthz: %v", err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// A request in flight: headers and half the body now, the rest after the signal.
	body := `{"to":{"email":"late@x.test"},"subject":"In flight","bodyText":"sent across a SIGTERM"}`
	// Its connection first has one request answered, so the server has surely accepted it.
	inflight, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer inflight.Close()
	br := bufio.NewReader(inflight)
	fmt.Fprintf(inflight, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /healthz on the in-flight connection: %v", err)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	// Expect: 100-continue makes the server say when it has read the request's head, so the
	// request is surely in flight when the signal comes.
	fmt.Fprintf(inflight, "POST /email/notifications/send HTTP/1.1\r\nHost: x\r\nX-API-Key: sk_live_demo_server\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("waiting for 100 Continue: %q, %v", line, err)
	}
	if line, err := br.ReadString('\n'); err != nil || line != "\r\n" {
		t.Fatalf("after 100 Continue: %q, %v", line, err)
	}
	if _, err := io.WriteString(inflight, body[:20]); err != nil {
		t.Fatal(err)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The listener closes when the stop begins: wait for that event.
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("gatehouse exited (%v) before the request in flight was answered: %s", err, p.stderr)
		default:
		}
	}
	if _, err := io.WriteString(inflight, body[20:]); err != nil {
		t.Fatalf("finishing the body in flight: %v", err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v\n%s", err, p.stderr)
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 202 {
		t.Errorf("request in flight = %d %s, want 202", resp.StatusCode, raw)
	}
	// The quiet connection is closed by the server (EOF), not left open.
	_ = quiet.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard, not a threshold
	if n, err := quiet.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("quiet connection read = %d, %v, want it closed by the server", n, err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("gatehouse exited with %v, want status 0: %s", err, p.stderr)
		}
	case <-time.After(2 * time.Minute): // a hang guard, not a threshold
		t.Fatalf("gatehouse did not exit after SIGTERM")
	}
	if strings.Contains(p.stderr.String(), "deadline exceeded") {
		t.Errorf("the stop ran into shutdown_timeout: %s", p.stderr)
	}
}
