package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// docBlock is one ```sh block of a Markdown file.
type docBlock struct {
	file string
	line int // line of the opening fence
	text string
}

// shellBlocks returns the ```sh / ```bash blocks of a Markdown file.
func shellBlocks(t *testing.T, path, name string) []docBlock {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []docBlock
	var cur *docBlock
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && (line == "```sh" || line == "```bash"):
			cur = &docBlock{file: name, line: n}
		case cur != nil && strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: unterminated code block", name, cur.line)
	}
	return blocks
}

// firstCommand is the first line of a block that is neither empty nor a comment.
func firstCommand(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

var (
	// httpLine is what the curl wrapper writes to stderr for every answer.
	httpLine = regexp.MustCompile(`(?m)^HTTP (\d{3}) (\S+) (\S+)$`)
	// expectedRefusal finds the statuses a block announces in its comments ("# 403 FORBIDDEN: ...").
	expectedRefusal = regexp.MustCompile(`(?m)^\s*#.*\b([45]\d\d)\b`)
)

// TestDocsCommandsRunAsPrinted runs every shell example of the README and of the product
// docs against the real gateway, started the way `make run` starts it (configs/gatehouse.yaml,
// configs/demo.tenants.yaml), in a folder laid out like a checkout after `make build`
// (configs/, bin/gatehouse). Each block runs on its own under `bash -euo pipefail`, exactly as
// printed except that localhost:8787 becomes the test's port; curl is wrapped only to report
// each answer's status on stderr. A block fails when a command fails or an answer is 4xx/5xx
// without the block announcing that status in a comment.
func TestDocsCommandsRunAsPrinted(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "sed", "awk", "base64", "sha256sum", "cmp", "stat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the documented commands need %s: %v", tool, err)
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// configs/ for the gateway; docs/ for the example that copies docs/examples/go-client.
	for _, dir := range []string{"configs", "docs"} {
		if err := os.Symlink(filepath.Join(repo, dir), filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(work, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nGATEHOUSE_TEST_AS_MAIN=1 exec '%s' \"$@\"\n", os.Args[0])
	if err := os.WriteFile(filepath.Join(work, "bin", "gatehouse"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}

	// A fixed port, so that public_url (upload and asset URLs) names the address served.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	base := fmt.Sprintf("http://localhost:%d", port)
	startProcEnv(t, []string{"GATEHOUSE_PUBLIC_URL=" + base, "GATEHOUSE_ADMIN_TOKEN=dev-admin-token"},
		"--config", filepath.Join(repo, "configs", "gatehouse.yaml"),
		"--tenants", filepath.Join(repo, "configs", "demo.tenants.yaml"),
		"--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--data", filepath.Join(work, "data"))

	// What must show up in each file's output besides the statuses.
	want := map[string][]string{
		"README.md":          {`you@example.com`, `"status":"received"`, `"items":[{"id":`, `"status":"completed"`, "copy.png has the uploaded bytes", "no change"},
		"docs/files.md":      {`{"isDuplicate":false}`, `"status":"completed"`, "copy.png has the uploaded bytes"},
		"docs/forms.md":      {`"status":"received"`, `"items":[{"id":`},
		"docs/membership.md": {"HTTP 304 ", "HTTP 403 ", "HTTP 404 "},
		"docs/email.md":      {`"status":"queued"`, `"status":"spam"`},
		"docs/records.md":    {"2 lines read, 2 stored"},
		"docs/api.md":        {`{"components":{`, "form contact ("},
	}
	files := []string{"README.md", "docs/files.md", "docs/forms.md", "docs/email.md", "docs/membership.md", "docs/records.md", "docs/api.md"}
	requests, ran := 0, 0
	for _, name := range files {
		var out strings.Builder
		for _, b := range shellBlocks(t, filepath.Join(repo, name), name) {
			if cmd := firstCommand(b.text); strings.HasPrefix(cmd, "make ") || strings.HasPrefix(cmd, "go ") {
				continue // build and test commands, not examples against a running gateway
			}
			stdout, stderr := runDocBlock(t, b, work, base, port)
			ran++
			out.WriteString(stdout + stderr)
			allowed := map[string]bool{}
			for _, m := range expectedRefusal.FindAllStringSubmatch(b.text, -1) {
				allowed[m[1]] = true
			}
			for _, m := range httpLine.FindAllStringSubmatch(stderr, -1) {
				requests++
				if m[1] >= "400" && !allowed[m[1]] {
					t.Errorf("%s:%d: %s %s answered %s, and the block does not say it should\n--- stdout\n%s--- stderr\n%s", b.file, b.line, m[2], m[3], m[1], stdout, stderr)
				}
			}
		}
		for _, w := range want[name] {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: the examples' output lacks %q\n%s", name, w, out.String())
			}
		}
	}
	t.Logf("%d blocks ran, %d requests", ran, requests)
	if requests < 40 {
		t.Errorf("the examples sent %d requests; the docs have more than that, so blocks were missed", requests)
	}
}

// runDocBlock runs one block in work and returns its stdout and stderr; a failing command fails the test.
func runDocBlock(t *testing.T, b docBlock, work, base string, port int) (string, string) {
	t.Helper()
	script := "curl() { command curl --write-out '%{stderr}HTTP %{http_code} %{method} %{url_effective}\\n' \"$@\"; }\n" +
		strings.ReplaceAll(b.text, "localhost:8787", fmt.Sprintf("localhost:%d", port))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GATEHOUSE_SERVER="+base)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Errorf("%s:%d: the block failed (%v)\n--- block\n%s--- stdout\n%s\n--- stderr\n%s", b.file, b.line, err, b.text, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}
