package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// TestMain lets tests start this test binary as the real gatehouse process, and stops the
// private PostgreSQL server of the tests on the postgres backend after them.
func TestMain(m *testing.M) {
	if os.Getenv("GATEHOUSE_TEST_AS_MAIN") == "1" {
		main()
		return
	}
	storetest.Main(m)
}

// proc is a gatehouse process started from this test binary.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *bytes.Buffer
	done   chan error
	// stdout holds what the process printed up to the banner's end (generated keys, banner).
	stdout []string
}

// emptyConfig writes an empty configuration file ("{}") in dir and returns its path: a
// server started with it runs on the defaults.
func emptyConfig(t *testing.T, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, nil, args...)
}

// startProcEnv is startProc with extra environment entries (they win over the defaults); with
// GATEHOUSE_LISTEN among them, no --listen flag is given.
func startProcEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startBinEnv(t, os.Args[0], env, args...)
}

// startBinEnv is startProcEnv running the gatehouse binary bin (another release's build).
func startBinEnv(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	listen := []string{"--listen", "127.0.0.1:0"}
	for _, e := range env {
		if strings.HasPrefix(e, "GATEHOUSE_LISTEN=") {
			listen = nil
		}
	}
	cmd := exec.Command(bin, append(append([]string{"serve"}, listen...), args...)...)
	cmd.Env = append(append(append(os.Environ(), "GATEHOUSE_TEST_AS_MAIN=1", "GATEHOUSE_ADMIN_TOKEN=restart-token", "GATEHOUSE_LOG_LEVEL=info"), storeEnv(t, args)...), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for sc.Scan() {
		p.stdout = append(p.stdout, sc.Text())
		if addr, ok := strings.CutPrefix(sc.Text(), "Gatehouse "); ok {
			if _, a, ok := strings.Cut(addr, "listening on "); ok {
				p.url = "http://" + a
				break
			}
		}
	}
	// The rest of the banner (one write) ends with the admin line when a token is set.
	for p.url != "" && sc.Scan() {
		p.stdout = append(p.stdout, sc.Text())
		if strings.HasPrefix(sc.Text(), "Admin API") {
			break
		}
	}
	if p.url == "" {
		_ = cmd.Wait()
		t.Fatalf("gatehouse did not start: %s", p.stderr)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	return p
}

// storeEnv is the environment that puts a node started with args on the backend
// GATEHOUSE_TEST_STORE names: nothing on badger; on postgres, the database that stands for its
// --data folder (the same one when a test restarts the node on that folder), with the folder's
// blobs declared shared.
func storeEnv(t *testing.T, args []string) []string {
	if !storetest.Postgres(t) {
		return nil
	}
	data := "./data"
	for i, a := range args {
		if (a == "--data" || a == "-data") && i+1 < len(args) {
			data = args[i+1]
		}
	}
	o := storetest.ReusedOptions(t, store.Options{Dir: filepath.Join(data, "db")})
	return []string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL=" + o.PostgresURL, "GATEHOUSE_FILES_LOCAL_SHARED=true"}
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("gatehouse exited with %v: %s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("gatehouse did not stop on SIGTERM")
	}
	if !strings.Contains(p.stderr.String(), "storage closed") {
		t.Errorf("no clean storage close in log: %s", p.stderr)
	}
}

func (p *proc) admin(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, p.url+"/admin/v1"+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer restart-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// Apply, SIGTERM, restart on the same data folder: everything acknowledged is there.
func TestRestartKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := emptyConfig(t, data)
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
	if code, body := p.admin(t, "GET", "/orgs/acme/keys", ""); code != 200 || !strings.Contains(string(body), `"name":"web"`) {
		t.Fatalf("keys after start: %d %s", code, body)
	}
	// The CLI against the running server.
	env := []string{"GATEHOUSE_SERVER=" + p.url, "GATEHOUSE_ADMIN_TOKEN=restart-token"}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"keys", "create", "--org", "acme", "--project", "demo", "--name", "ci", "--kind", "secret", "--products", "email"}, &out, &errOut, env); code != 0 {
		t.Fatalf("keys create exit %d: %s", code, errOut.String())
	}
	if !strings.HasPrefix(out.String(), "sk_live_") {
		t.Errorf("keys create printed %q", out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"apply", "-f", "../../../configs/demo.tenants.yaml"}, &out, &errOut, env); code != 0 || !strings.Contains(out.String(), "no change") {
		t.Errorf("apply exit %d: %s %s", code, out.String(), errOut.String())
	}
	if code, body := p.admin(t, "POST", "/orgs/acme/suppressions", `{"email":"Late@Example.com"}`); code != 201 {
		t.Fatalf("add suppression: %d %s", code, body)
	}
	p.stop(t)

	p2 := startProc(t, "--data", data, "--config", cfg)
	code, body := p2.admin(t, "GET", "/orgs/acme/keys", "")
	if code != 200 || !strings.Contains(string(body), `"name":"ci"`) {
		t.Errorf("generated key lost across restart: %d %s", code, body)
	}
	code, body = p2.admin(t, "GET", "/orgs/acme/suppressions", "")
	if code != 200 || !strings.Contains(string(body), "late@example.com") {
		t.Errorf("suppression lost across restart: %d %s", code, body)
	}
	code, body = p2.admin(t, "POST", "/apply", mustRead(t, "../../../configs/demo.tenants.yaml"))
	var rep struct{ Changed bool }
	_ = json.Unmarshal(body, &rep)
	if code != 200 || rep.Changed {
		t.Errorf("re-apply after restart changed something: %d %s", code, body)
	}
	p2.stop(t)
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"version"}, &out, &errOut, nil); code != 0 || !strings.HasPrefix(out.String(), "gatehouse ") {
		t.Errorf("version: %d %q", code, out.String())
	}
	if code := run(context.Background(), []string{"bogus"}, &out, &errOut, nil); code != 2 {
		t.Errorf("unknown command exit %d, want 2", code)
	}
	if code := run(context.Background(), []string{"serve", "--config", "/does/not/exist.yaml"}, &out, &errOut, nil); code != 1 {
		t.Errorf("missing config exit %d, want 1", code)
	}
}
