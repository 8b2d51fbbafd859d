package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/backup"
)

// runMain runs the test binary as gatehouse with args (another process, like an operator's
// shell) and returns its exit code and output.
func runMain(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "GATEHOUSE_TEST_AS_MAIN=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

func TestBackupRestoreHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"backup", "--help"}, []string{"-to", "-server", "-token", "-config", "-data", "GATEHOUSE_ADMIN_TOKEN"}},
		{[]string{"restore", "-h"}, []string{"-from", "-data", "-to", "-config", "missing or empty", "GATEHOUSE_*"}},
		{[]string{"migrate", "--help"}, []string{"-from", "-to", "GATEHOUSE_STORAGE_POSTGRES_URL", "empty"}},
		{[]string{"help"}, []string{"gatehouse backup --to FILE", "gatehouse restore --from FILE", "--data DIR | --to postgres://", "gatehouse migrate --from DATA_DIR --to postgres://"}},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut, []string{"GATEHOUSE_ADMIN_TOKEN=never-printed"})
		if code != 0 {
			t.Errorf("gatehouse %s: exit %d, want 0 (stderr %q)", strings.Join(tc.args, " "), code, errOut.String())
		}
		if strings.Contains(out.String(), "never-printed") {
			t.Errorf("gatehouse %s: --help prints the admin token", strings.Join(tc.args, " "))
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("gatehouse %s: stdout lacks %q:\n%s", strings.Join(tc.args, " "), w, out.String())
			}
		}
	}
}

// TestBackupUnderLoadRestores: writes across products (form submissions with and without a
// file, email sends, records, uploads) are acknowledged; a backup is taken through a running
// node's admin route while a writer keeps writing; the archive restores into an empty folder,
// and a node started on it serves every write acknowledged before the backup started.
func TestBackupUnderLoadRestores(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary twice")
	}
	t.Parallel()
	work := t.TempDir()
	data, restored := filepath.Join(work, "data"), filepath.Join(work, "restored")
	cfg := writeFile(t, work, "cfg.yaml", "log_level: warn\nforms:\n  rate_per_minute: 100000\n")
	tenants := writeFile(t, work, "tenants.yaml", crashTenants)
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", tenants)

	client := &http.Client{Timeout: 60 * time.Second}
	before := &crashRun{t: t, client: client}
	const n = 64 // 16 of each kind, 8 submissions with a file
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < n; i += 4 {
				if !before.op(p.url, i) {
					t.Errorf("operation %d not acknowledged", i)
				}
			}
		}()
	}
	wg.Wait()

	// A writer keeps writing while the backup runs (its writes may or may not be in it).
	during := &crashRun{t: t, client: client}
	stop, underway := make(chan struct{}), make(chan struct{})
	var written atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1000; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if during.op(p.url, i) && written.Add(1) == 8 {
				close(underway)
			}
		}
	}()
	<-underway // the writer is under way before the backup starts
	archive := filepath.Join(work, "node.tar.gz")
	// An offline backup of a running node's folder fails (badger's lock) and says what to do.
	code, _, stderr := runMain(t, nil, "backup", "--to", archive, "--data", data, "--config", cfg)
	if code == 0 || !strings.Contains(stderr, "--server") {
		t.Errorf("offline backup of a running node: exit %d, stderr %q; want a failure naming --server", code, stderr)
	}
	if _, err := os.Stat(archive); !os.IsNotExist(err) {
		t.Errorf("a failed backup left %s (%v)", archive, err)
	}
	code, stdout, stderr := runMain(t, nil, "backup", "--to", archive, "--server", p.url, "--token", "restart-token")
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("backup --server: exit %d: %s %s", code, stdout, stderr)
	}
	t.Logf("backup: %s(%d writes by the writer while it ran)", stdout, written.Load())
	// A wrong token is refused before anything is written.
	if code, _, stderr := runMain(t, nil, "backup", "--to", filepath.Join(work, "x.tar.gz"), "--server", p.url, "--token", "wrong"); code == 0 || !strings.Contains(stderr, "401") {
		t.Errorf("backup with a wrong token: exit %d, stderr %q", code, stderr)
	}
	client.CloseIdleConnections()
	p.stop(t)

	// Restore refuses a folder that holds anything, then restores into an empty one.
	if code, _, stderr := runMain(t, nil, "restore", "--from", archive, "--data", data); code == 0 || !strings.Contains(stderr, "not empty") {
		t.Errorf("restore into a non-empty folder: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := runMain(t, nil, "restore", "--from", archive, "--data", restored); code != 0 {
		t.Fatalf("restore: exit %d: %s %s", code, stdout, stderr)
	}
	q := startProc(t, "--data", restored, "--config", cfg)
	before.verify(q.url) // every acknowledged write before the backup, files and emails included
	// What the writer wrote during the backup is there whole or not at all: a submission
	// restored with a file has its bytes.
	inSnapshot := during.checkWhole(q.url)
	t.Logf("%d of the writer's submissions with a file are in the snapshot", inSnapshot)
	client.CloseIdleConnections()
	q.stop(t)

	// The stopped original backs up offline from the same config and flags as serve.
	offline := filepath.Join(work, "offline.tar.gz")
	if code, stdout, stderr := runMain(t, nil, "backup", "--to", offline, "--data", data, "--config", cfg); code != 0 || !strings.Contains(stdout, "blobs: local") {
		t.Fatalf("offline backup: exit %d: %s %s", code, stdout, stderr)
	}
	if code, stdout, stderr := runMain(t, nil, "restore", "--from", offline, "--data", filepath.Join(work, "offline")); code != 0 {
		t.Fatalf("restore of the offline backup: exit %d: %s %s", code, stdout, stderr)
	}
}

// An archive cut short (a node that stopped streaming) is refused and leaves no file; usage
// errors exit 1.
func TestBackupRefusesIncompleteArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tar.gz")
	var full bytes.Buffer
	zw := gzip.NewWriter(&full)
	tw := tar.NewWriter(zw)
	m := `{"format":1,"backend":"badger"}`
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "manifest.json", Size: int64(len(m)), Mode: 0o600})
	_, _ = tw.Write([]byte(m))
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "db.badger", Size: 4096, Mode: 0o600})
	_, _ = tw.Write(make([]byte, 4096))
	_ = tw.Close()
	_ = zw.Close()
	cut := full.Bytes()[:full.Len()/2]
	_, err := writeVerified(path, func(w io.Writer) error { _, err := w.Write(cut); return err })
	if !errors.Is(err, backup.ErrInvalid) {
		t.Errorf("writeVerified(a truncated archive) = %v, want ErrInvalid", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused archive left %v", entries)
	}
	if _, err := writeVerified(path, func(w io.Writer) error { _, err := w.Write(full.Bytes()); return err }); err != nil {
		t.Errorf("writeVerified(a complete archive) = %v", err)
	}
	for _, args := range [][]string{{"backup"}, {"backup", "--to", path, "--server", "http://x", "--data", dir}, {"restore", "--from", path}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, &out, &errOut, nil); code != 1 {
			t.Errorf("gatehouse %s: exit %d, want 1 (stderr %q)", strings.Join(args, " "), code, errOut.String())
		}
	}
}
