package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/records"
)

// startImportServer starts the real binary with the crash tenants (project crash, collection
// posts) and a read_timeout of 2 s, shorter than the imports below take.
func startImportServer(t *testing.T) *proc {
	t.Helper()
	data := t.TempDir()
	cfg, ten := filepath.Join(data, "gatehouse.yaml"), filepath.Join(data, "tenants.yaml")
	if err := os.WriteFile(cfg, []byte("read_timeout: 2s\nlog_level: warn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ten, []byte(recordsCrashTenants), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProc(t, "--data", filepath.Join(data, "d"), "--config", cfg, "--tenants", ten)
}

// postsCount is the number of published posts of project crash (the aggregate count).
func postsCount(t *testing.T, p *proc) int {
	t.Helper()
	code, _, body := p.send(t, "GET", "/records/projects/crash/collections/posts/aggregate?count=true", "", "", "X-API-Key", "sk_live_crash_server")
	var out struct{ Total int }
	if code != 200 || json.Unmarshal([]byte(body), &out) != nil {
		t.Fatalf("count = %d %s", code, body)
	}
	return out.Total
}

// writePosts writes n NDJSON posts with ids imp-000000..., each line made by line(i) when it
// returns one (else a valid post).
func writePosts(t *testing.T, n int, line func(i int) string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "posts.ndjson")
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if l := line(i); l != "" {
			b.WriteString(l + "\n")
			continue
		}
		fmt.Fprintf(&b, `{"id":"imp-%06d","data":{"title":"imported post %d","category":"%c","views":%d}}`+"\n", i, i, 'a'+rune(i%3), i)
	}
	if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func importArgs(p *proc, file string, extra ...string) []string {
	return append([]string{"records", "import", file, "--project", "crash", "--collection", "posts", "--server", p.url, "--token", "restart-token"}, extra...)
}

// TestRecordsImportInterruptedAndRunAgain: `gatehouse records import` of a file several
// requests long, whose import takes longer than the server's read_timeout, is killed
// (SIGKILL) while it runs; the same command run again exits 0, and every line is stored
// once: the count is the file's line count, each record reads back with its line's values.
func TestRecordsImportInterruptedAndRunAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 30,000 records into the real binary twice")
	}
	t.Parallel()
	p := startImportServer(t)
	const n = 30000
	file := writePosts(t, n, func(int) string { return "" })

	// Run 1: killed once part of the file is stored.
	cmd := exec.Command(os.Args[0], importArgs(p, file, "--batch", "2000")...)
	cmd.Env = append(os.Environ(), "GATEHOUSE_TEST_AS_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := false
	for !killed {
		select {
		case err := <-done:
			t.Fatalf("the import ended (%v) before it could be interrupted", err)
		default:
		}
		// Await the event (part of the file stored) by asking the server, not a clock.
		if c := postsCount(t, p); c >= 4000 {
			_ = cmd.Process.Kill()
			killed = true
		}
	}
	<-done
	part := postsCount(t, p)
	if part >= n {
		t.Fatalf("the whole file (%d) was stored before the kill; the test proves nothing", part)
	}

	// Run 2: the same command, to the end.
	code, out, errOut := runMain(t, nil, importArgs(p, file, "--batch", "2000")...)
	if code != 0 {
		t.Fatalf("records import again: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	want := fmt.Sprintf("%d lines read, %d stored", n, n)
	if !strings.Contains(out, want) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("summary = %q, want one line with %q", out, want)
	}
	if got := postsCount(t, p); got != n {
		t.Errorf("after the second run %d posts are stored, want %d (the first run stored %d)", got, n, part)
	}
	for _, i := range []int{0, part - 1, part, n - 1} {
		code, _, body := p.send(t, "GET", fmt.Sprintf("/records/projects/crash/collections/posts/records/imp-%06d", i), "", "", "X-API-Key", "sk_live_crash_server")
		if code != 200 || !strings.Contains(body, fmt.Sprintf(`"views":%d`, i)) {
			t.Errorf("record imp-%06d = %d %s", i, code, body)
		}
	}
}

// TestRecordsImportExitCodes: a file with bad lines (not JSON, not a valid record, over the
// line limit) stores every other line, names each bad line as FILE:LINE and exits 1; a
// server that is down exits 1 and says how to go on; --skip starts after the lines given.
func TestRecordsImportExitCodes(t *testing.T) {
	t.Parallel()
	p := startImportServer(t)
	const n = 3000
	bad := map[int]string{
		10:   `{oops`,
		1500: `{"id":"imp-001500","data":{"views":"many"}}`,
		2999: `{"id":"imp-002999","data":{"title":"` + strings.Repeat("x", records.MaxImportLine) + `"}}`,
	}
	file := writePosts(t, n, func(i int) string { return bad[i] })
	code, out, errOut := runMain(t, nil, importArgs(p, file, "--batch", "500")...)
	if code != 1 {
		t.Errorf("bad lines: exit %d, want 1\nstderr: %s", code, errOut)
	}
	for _, line := range []int{11, 1501, 3000} {
		if !strings.Contains(errOut, fmt.Sprintf("%s:%d: ", file, line)) {
			t.Errorf("stderr does not name line %d:\n%s", line, errOut)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("%d stored", n-len(bad))) || !strings.Contains(out, "3 not stored") {
		t.Errorf("summary = %q", out)
	}
	if !strings.Contains(errOut, "run the same command again") {
		t.Errorf("stderr does not say what to do next:\n%s", errOut)
	}
	if got := postsCount(t, p); got != n-len(bad) {
		t.Errorf("%d posts stored, want %d", got, n-len(bad))
	}

	// --skip past the bad lines: nothing refused, exit 0.
	good := writePosts(t, 100, func(i int) string {
		if i < 5 {
			return "{oops"
		}
		return ""
	})
	if code, out, errOut := runMain(t, nil, importArgs(p, good, "--skip", "5")...); code != 0 || !strings.Contains(out, "95 stored") || !strings.Contains(out, "5 skipped") {
		t.Errorf("--skip 5: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// A server that is down: exit 1, the lines not confirmed and what to do next.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	args := importArgs(p, good)
	args[8] = down // --server
	code, _, errOut = runMain(t, nil, args...)
	if code != 1 || !strings.Contains(errOut, "lines 1-100 of") || !strings.Contains(errOut, "not confirmed") || !strings.Contains(errOut, "run the same command again") {
		t.Errorf("server down: exit %d, stderr %s", code, errOut)
	}

	// A collection the server does not know: refused at once, exit 1.
	args = importArgs(p, good)
	args[6] = "nope" // --collection
	if code, _, errOut := runMain(t, nil, args...); code != 1 || !strings.Contains(errOut, "COLLECTION_NOT_FOUND") {
		t.Errorf("unknown collection: exit %d, stderr %s", code, errOut)
	}
}

// TestLineBatcherKeepsEveryLine: batches hold every line once, in order, with their numbers.
func TestLineBatcherKeepsEveryLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		maxLines int
		want     []string // batches
		tooLong  []int
	}{
		{"empty", "", 2, nil, nil},
		{"no final newline", "a\nb", 5, []string{"a\nb\n"}, nil},
		{"split by lines", "a\nb\nc\n", 2, []string{"a\nb\n", "c\n"}, nil},
		{"blank lines kept", "\n\na\n", 5, []string{"\n\na\n"}, nil},
		{"too long", "abcdefgh\nok\nabcdefghijk", 5, []string{"\nok\n\n"}, []int{1, 3}},
		{"exactly the limit", "abcdefg\n", 5, []string{"abcdefg\n"}, nil},
	} {
		l := newLineBatcher(strings.NewReader(tc.in), 8)
		var got []string
		var long []int
		var buf bytes.Buffer
		next := 1
		for {
			b, err := l.next(&buf, tc.maxLines, 1<<20)
			if err != nil {
				t.Fatalf("%s: next: %v", tc.name, err)
			}
			if b.lines == 0 {
				break
			}
			if b.first != next {
				t.Errorf("%s: batch starts at line %d, want %d", tc.name, b.first, next)
			}
			next += b.lines
			got = append(got, buf.String())
			long = append(long, b.tooLong...)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprint(long) != fmt.Sprint(tc.tooLong) {
			t.Errorf("%s: batches %q too long %v, want %q %v", tc.name, got, long, tc.want, tc.tooLong)
		}
	}
}

// FuzzLineBatcher: whatever the input, the batches are the input's lines in order (each
// ending in a newline, a line over the limit as an empty one), numbered without a gap, each
// batch within its line count.
func FuzzLineBatcher(f *testing.F) {
	for _, s := range []string{"", "\n", "a\nb", `{"id":"x"}` + "\n\n" + `{"id":"y"}`, "abcdefghijklmnop\nq\r\n", strings.Repeat("xy\n", 40)} {
		f.Add([]byte(s), uint8(3), uint8(8))
	}
	f.Fuzz(func(t *testing.T, in []byte, maxLines, maxLine uint8) {
		ml := int(maxLine%32) + 1
		n := int(maxLines%10) + 1
		var want bytes.Buffer
		lines := 0
		for rest := in; len(rest) > 0; lines++ {
			line, after, _ := bytes.Cut(rest, []byte("\n"))
			rest = after
			if len(line)+1 > ml {
				line = nil
			}
			want.Write(line)
			want.WriteByte('\n')
		}
		l := newLineBatcher(bytes.NewReader(in), ml)
		var got, buf bytes.Buffer
		next := 1
		for {
			b, err := l.next(&buf, n, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if b.lines == 0 {
				break
			}
			if b.first != next || b.lines > n || bytes.Count(buf.Bytes(), []byte("\n")) != b.lines {
				t.Fatalf("batch first %d lines %d (%q), want first %d and at most %d lines", b.first, b.lines, buf.Bytes(), next, n)
			}
			next += b.lines
			got.Write(buf.Bytes())
		}
		if next-1 != lines || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("batches %q (%d lines), want %q (%d lines)", got.Bytes(), next-1, want.Bytes(), lines)
		}
		if l.read != int64(len(in)) {
			t.Fatalf("read %d bytes of %d", l.read, len(in))
		}
	})
}
