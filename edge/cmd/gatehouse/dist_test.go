package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// distDir is the folder `make dist` filled (GATEHOUSE_DIST_DIR, set by `make test-dist`).
func distDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("GATEHOUSE_DIST_DIR")
	if dir == "" {
		t.Skip("GATEHOUSE_DIST_DIR is not set: `make test-dist` builds dist/ and runs this test on it")
	}
	return dir
}

// TestDistBinaries checks what `make dist` made: the three binaries, static (no ELF
// interpreter: CGO off) for the right machines, their SHA-256 sums, and the stamped version.
func TestDistBinaries(t *testing.T) {
	dir := distDir(t)
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not `<sum>  <file>`", line)
		}
		listed[name] = sum
	}
	for _, tc := range []struct {
		name    string
		elfArch elf.Machine
		macho   bool
	}{
		{"gatehouse-linux-amd64", elf.EM_X86_64, false},
		{"gatehouse-linux-arm64", elf.EM_AARCH64, false},
		{"gatehouse-darwin-arm64", 0, true},
	} {
		path := filepath.Join(dir, tc.name)
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := sha256.Sum256(raw)
		if listed[tc.name] != hex.EncodeToString(got[:]) {
			t.Errorf("SHA256SUMS says %q for %s, the file's sum is %x", listed[tc.name], tc.name, got)
		}
		if tc.macho {
			f, err := macho.NewFile(bytes.NewReader(raw))
			if err != nil || f.Cpu != macho.CpuArm64 {
				t.Errorf("%s: not a Mach-O arm64 binary (%v)", tc.name, err)
			}
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(raw))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if f.Machine != tc.elfArch {
			t.Errorf("%s: machine %v, want %v", tc.name, f.Machine, tc.elfArch)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s: has an ELF interpreter (dynamically linked): CGO must be off", tc.name)
			}
		}
	}
	if want := os.Getenv("GATEHOUSE_DIST_VERSION"); want != "" && runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		out, err := exec.Command(filepath.Join(dir, "gatehouse-linux-amd64"), "version").Output()
		if err != nil || strings.TrimSpace(string(out)) != "gatehouse "+want {
			t.Errorf("gatehouse-linux-amd64 version = %q (%v), want %q", out, err, "gatehouse "+want)
		}
	}
}

// arm64Command returns the command that runs the linux/arm64 binary with args: directly on an
// arm64 Linux host, else through qemu-aarch64-static (no binfmt registration needed).
func arm64Command(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	if runtime.GOOS == "linux" && runtime.GOARCH == "arm64" {
		return exec.Command(bin, args...)
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static cannot run here (Debian package qemu-user-static; `make test-dist` installs it): the linux/arm64 binary is not run")
	}
	return exec.Command(qemu, append([]string{bin}, args...)...)
}

// TestDistArm64UnderQemu runs the linux/arm64 release binary under qemu-user: `version`, then
// `serve` with the demo tenants, and the README's first "Try it" commands against it (the
// health check and the records read).
func TestDistArm64UnderQemu(t *testing.T) {
	bin := filepath.Join(distDir(t), "gatehouse-linux-arm64")
	out, err := arm64Command(t, bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "gatehouse ") {
		t.Fatalf("arm64 version: %q (%v)", out, err)
	}
	if want := os.Getenv("GATEHOUSE_DIST_VERSION"); want != "" && strings.TrimSpace(string(out)) != "gatehouse "+want {
		t.Errorf("arm64 version = %q, want %q", out, "gatehouse "+want)
	}

	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := arm64Command(t, bin, "serve", "--config", "configs/gatehouse.yaml", "--tenants", "configs/demo.tenants.yaml",
		"--listen", "127.0.0.1:0", "--data", t.TempDir())
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GATEHOUSE_LOG_LEVEL=warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	// Emulated, the start takes a while: the banner names the bound address.
	kill := time.AfterFunc(3*time.Minute, func() { _ = cmd.Process.Kill() })
	defer kill.Stop()
	sc := bufio.NewScanner(stdout)
	base := ""
	for base == "" && sc.Scan() {
		if _, a, ok := strings.Cut(sc.Text(), " listening on "); ok && strings.HasPrefix(sc.Text(), "Gatehouse ") {
			base = "http://" + strings.TrimSpace(a)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	go func() { done <- cmd.Wait() }()
	if base == "" {
		t.Fatalf("the arm64 gateway did not start under qemu: %s", stderr.String())
	}
	for _, tc := range []struct {
		name, path, key, want string
	}{
		{"healthz", "/healthz", "", `"status":"ok"`},
		{"records read", "/records/projects/demo/collections/posts/records?filter=category:in:guides&sort=-views&limit=5&populate=author", "pk_live_demo_web", `"items":[{`},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+tc.path, nil)
		if tc.key != "" {
			req.Header.Set("X-API-Key", tc.key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s on the arm64 binary: %d %s, want 200 with %s", tc.name, res.StatusCode, body, tc.want)
		}
	}
}

// TestDistSystemdUnit checks configs/gatehouse.service with `systemd-analyze verify`: every
// warning fails the test. The unit's ExecStart names /usr/local/bin/gatehouse, which verify
// wants to exist: the copy checked runs this test binary instead.
func TestDistSystemdUnit(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian package systemd; `make test-dist` installs it): the unit is not verified")
	}
	unit, err := os.ReadFile("../../../configs/gatehouse.service")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(unit, []byte("ExecStart=/usr/local/bin/gatehouse serve")) {
		t.Fatal("the unit's ExecStart no longer runs /usr/local/bin/gatehouse serve: update docs/deploy.md and this test")
	}
	path := filepath.Join(t.TempDir(), "gatehouse.service")
	if err := os.WriteFile(path, bytes.ReplaceAll(unit, []byte("/usr/local/bin/gatehouse"), []byte(self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sa, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify gatehouse.service: %v\n%s", err, out)
	}
}
