package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// pgEnv is the environment of a node on the postgres database url with its blobs in the data
// folder, declared shared.
func pgEnv(url string) []string {
	return []string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL=" + url, "GATEHOUSE_FILES_LOCAL_SHARED=true"}
}

// fakeS3 starts gofakes3 (a real S3 protocol server, in memory) on loopback with the given
// buckets and returns, per bucket, the environment of a node whose blobs live there.
func fakeS3(t *testing.T, buckets ...string) map[string][]string {
	t.Helper()
	mem := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	t.Cleanup(srv.Close)
	out := map[string][]string{}
	for _, b := range buckets {
		if err := mem.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
		out[b] = []string{"GATEHOUSE_FILES_BACKEND=s3", "GATEHOUSE_FILES_S3_ENDPOINT=" + strings.TrimPrefix(srv.URL, "http://"),
			"GATEHOUSE_FILES_S3_BUCKET=" + b, "GATEHOUSE_FILES_S3_ACCESS_KEY=test", "GATEHOUSE_FILES_S3_SECRET_KEY=test-secret",
			"GATEHOUSE_FILES_S3_USE_SSL=false"}
	}
	return out
}

// fill runs operations [from, to) of crashRun against the node at base from 4 clients and
// fails the test on any that is not acknowledged.
func fill(t *testing.T, r *crashRun, base string, from, to int) {
	t.Helper()
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from + c; i < to; i += 4 {
				if !r.op(base, i) {
					t.Errorf("operation %d not acknowledged by %s", i, base)
				}
			}
		}()
	}
	wg.Wait()
}

// TestMigrateToPostgres: a data folder filled through the real binary (a tenants document,
// form submissions with and without files, email sends, records, uploads, a dashboard user)
// is migrated into an empty database; a node started on that database (blobs in the same,
// shared, folder) serves every one of them through the public and admin APIs and takes new
// writes. A second migration into the now full database is refused and changes nothing.
func TestMigrateToPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary twice and a PostgreSQL server")
	}
	t.Parallel()
	work := t.TempDir()
	data := filepath.Join(work, "data")
	cfg := writeFile(t, work, "cfg.yaml", "log_level: warn\nforms:\n  rate_per_minute: 100000\n")
	tenants := writeFile(t, work, "tenants.yaml", crashTenants)
	client := &http.Client{Timeout: 60 * time.Second}
	r := &crashRun{t: t, client: client}

	p := startProc(t, "--data", data, "--config", cfg, "--tenants", tenants)
	fill(t, r, p.url, 0, 48)
	if code, body := p.admin(t, "POST", "/users", `{"email":"ops@crash.test","password":"migrate me please","operator":true}`); code != 201 {
		t.Fatalf("POST /users = %d %s", code, body)
	}
	client.CloseIdleConnections()
	p.stop(t)

	// The private server trusts loopback connections: the password is there to be redacted.
	url := strings.Replace(pgtest.URL(t), "postgres@", "postgres:s3cret-pw@", 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate", "--from", data}, "usage: gatehouse migrate"},
		{[]string{"migrate", "--from", data, "--to", "mysql://u:s3cret@h/db"}, "--to mysql://u:xxxxx@h/db must be a postgres://"},
		{[]string{"migrate", "--from", filepath.Join(work, "none"), "--to", url}, "no store in"},
	} {
		if code, _, stderr := runMain(t, nil, tc.args...); code != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "s3cret") {
			t.Errorf("gatehouse %s: exit %d, stderr %q; want 1 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
	}
	code, stdout, stderr := runMain(t, nil, "migrate", "--from", data, "--to", url)
	if code != 0 {
		t.Fatalf("migrate: exit %d: %s %s", code, stdout, stderr)
	}
	t.Logf("migrate: %s", stdout)
	if strings.Contains(stdout+stderr, "s3cret-pw") || !strings.Contains(stdout, "postgres:xxxxx@") {
		t.Errorf("migrate prints the database password, or not the redacted URL:\n%s", stdout)
	}
	for _, w := range []string{"copied ", "records", "forms", "email", "tenancy", "accounts", "not copied: "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("migrate output lacks %q:\n%s", w, stdout)
		}
	}
	// Into the now full database: refused, with the database untouched (the node below reads
	// the first copy whole).
	if code, _, stderr := runMain(t, []string{"GATEHOUSE_STORAGE_POSTGRES_URL=" + url}, "migrate", "--from", data); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Errorf("a second migrate: exit %d, stderr %q; want a refusal naming the non-empty target", code, stderr)
	}

	q := startProcEnv(t, pgEnv(url), "--data", data, "--config", cfg)
	if !strings.Contains(q.stderr.String(), "storage opened") || strings.Contains(q.stderr.String(), "s3cret-pw") {
		t.Errorf("serve on postgres logs no storage line, or the database password:\n%s", q.stderr)
	}
	r.verify(q.url)
	if code, body := q.admin(t, "GET", "/users", ""); code != 200 || !strings.Contains(string(body), "ops@crash.test") {
		t.Errorf("GET /users on the migrated node = %d %s", code, body)
	}
	// users create --data follows the configuration to the shared database (no folder lock:
	// the node keeps running) and the node signs the user in.
	var out bytes.Buffer
	if err := usersCmd(context.Background(), []string{"create", "--email", "late@crash.test", "--operator", "--data", data},
		strings.NewReader("created offline\n"), &out, pgEnv(url)); err != nil {
		t.Errorf("users create --data on postgres: %v", err)
	} else if got := signIn(t, q.url, "late@crash.test", "created offline"); got != 200 {
		t.Errorf("sign-in as the user created with --data on postgres = %d", got)
	}
	more := &crashRun{t: t, client: client}
	fill(t, more, q.url, 100, 116)
	more.verify(q.url)
	client.CloseIdleConnections()
	q.stop(t)
}

// TestBackupUnderLoadRestoresPostgres is TestBackupUnderLoadRestores on a postgres node with
// its blobs in S3: writes across products are acknowledged; backups are taken while a writer
// keeps writing, one opening the database itself (the node keeps running: no lock on
// postgres) and one through the node; the first restores into another, empty database and
// another bucket, and a node started there serves every write acknowledged before the backup;
// what the writer wrote meanwhile is there whole or not at all.
func TestBackupUnderLoadRestoresPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary twice and a PostgreSQL server")
	}
	t.Parallel()
	work := t.TempDir()
	cfg := writeFile(t, work, "cfg.yaml", "log_level: warn\nforms:\n  rate_per_minute: 100000\n")
	tenants := writeFile(t, work, "tenants.yaml", crashTenants)
	s3 := fakeS3(t, "live", "restored")
	env := append(append([]string{}, s3["live"]...), "GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL="+pgtest.URL(t))
	envRestored := append(append([]string{}, s3["restored"]...), "GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL="+pgtest.URL(t))
	data := filepath.Join(work, "data")
	p := startProcEnv(t, env, "--data", data, "--config", cfg, "--tenants", tenants)

	client := &http.Client{Timeout: 60 * time.Second}
	before := &crashRun{t: t, client: client}
	fill(t, before, p.url, 0, 64)

	during := &crashRun{t: t, client: client}
	stop, underway := make(chan struct{}), make(chan struct{})
	var written atomic.Int64
	var wg sync.WaitGroup
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
	<-underway
	archive := filepath.Join(work, "offline.tar.gz")
	code, stdout, stderr := runMain(t, env, "backup", "--to", archive, "--data", data, "--config", cfg)
	if code != 0 || !strings.Contains(stdout, "(postgres, ") || !strings.Contains(stdout, "blobs: s3") {
		t.Fatalf("backup of a running postgres node: exit %d: %s %s", code, stdout, stderr)
	}
	online := filepath.Join(work, "online.tar.gz")
	if code, stdout, stderr := runMain(t, nil, "backup", "--to", online, "--server", p.url, "--token", "restart-token"); code != 0 || !strings.Contains(stdout, "blobs: s3") {
		t.Errorf("backup --server of a postgres node: exit %d: %s %s", code, stdout, stderr)
	}
	close(stop)
	wg.Wait()
	t.Logf("backup: %s(%d writes by the writer while it ran)", stdout, written.Load())
	client.CloseIdleConnections()
	p.stop(t)

	// Restore needs an empty database: the live one is refused, untouched.
	if code, _, stderr := runMain(t, env, "restore", "--from", archive, "--to", envValue(env, "GATEHOUSE_STORAGE_POSTGRES_URL")); code == 0 || !strings.Contains(stderr, "not empty") {
		t.Errorf("restore into a full database: exit %d, stderr %q", code, stderr)
	}
	restoredURL := envValue(envRestored, "GATEHOUSE_STORAGE_POSTGRES_URL")
	if code, stdout, stderr := runMain(t, envRestored, "restore", "--from", archive, "--to", restoredURL); code != 0 {
		t.Fatalf("restore: exit %d: %s %s", code, stdout, stderr)
	}
	q := startProcEnv(t, envRestored, "--data", filepath.Join(work, "restored"), "--config", cfg)
	before.verify(q.url)
	inSnapshot := during.checkWhole(q.url)
	t.Logf("%d of the writer's submissions with a file are in the snapshot", inSnapshot)
	client.CloseIdleConnections()
	q.stop(t)
}

// checkWhole checks that each of r's acknowledged submissions with a file that the node at
// base serves has its bytes (a write made while a backup ran is there whole or not at all),
// and returns how many it serves.
func (r *crashRun) checkWhole(base string) int {
	t := r.t
	n := 0
	for _, a := range r.acks {
		if a.kind != "form" || a.sum == [32]byte{} {
			continue
		}
		req, _ := http.NewRequest("GET", base+"/admin/v1/projects/site/forms/contact/submissions/"+a.id, nil)
		req.Header.Set("Authorization", "Bearer restart-token")
		resp, err := r.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var sub struct{ Files []struct{ URL string } }
		err = json.NewDecoder(resp.Body).Decode(&sub)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			continue // written after the snapshot
		}
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("GET submission %s = %d %v", a.id, resp.StatusCode, err)
		}
		n++
		if len(sub.Files) != 1 {
			t.Errorf("restored submission %s: files %+v", a.id, sub.Files)
		} else if sum, _ := r.sum(sub.Files[0].URL, base, "admin"); sum != a.sum {
			t.Errorf("restored submission %s: its file is not the uploaded bytes", a.id)
		}
	}
	return n
}

// TestBackupAcrossBackends: a badger node's backup restores into an empty postgres database
// (blobs into the folder of --data); the node started there serves everything and takes more
// writes; its backup (manifest backend postgres) restores into an empty badger folder, and the
// node started there serves the writes of both.
func TestBackupAcrossBackends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the real binary three times and a PostgreSQL server")
	}
	t.Parallel()
	work := t.TempDir()
	cfg := writeFile(t, work, "cfg.yaml", "log_level: warn\nforms:\n  rate_per_minute: 100000\n")
	tenants := writeFile(t, work, "tenants.yaml", crashTenants)
	client := &http.Client{Timeout: 60 * time.Second}
	first := &crashRun{t: t, client: client}

	badgerDir := filepath.Join(work, "badger")
	p := startProc(t, "--data", badgerDir, "--config", cfg, "--tenants", tenants)
	fill(t, first, p.url, 0, 32)
	client.CloseIdleConnections()
	p.stop(t)
	fromBadger := filepath.Join(work, "from-badger.tar.gz")
	if code, stdout, stderr := runMain(t, nil, "backup", "--to", fromBadger, "--data", badgerDir, "--config", cfg); code != 0 || !strings.Contains(stdout, "(badger, ") {
		t.Fatalf("backup of the badger node: exit %d: %s %s", code, stdout, stderr)
	}

	url := pgtest.URL(t)
	pgDir := filepath.Join(work, "pg")
	// Blobs in the archive and no folder for them: refused before anything is written.
	if code, _, stderr := runMain(t, nil, "restore", "--from", fromBadger, "--to", url); code != 1 || !strings.Contains(stderr, "--data DIR") {
		t.Errorf("restore --to without a blob folder: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := runMain(t, nil, "restore", "--from", fromBadger, "--to", url, "--data", pgDir); code != 0 || !strings.Contains(stdout, "restored the badger backup") {
		t.Fatalf("restore of the badger backup into postgres: exit %d: %s %s", code, stdout, stderr)
	}
	q := startProcEnv(t, pgEnv(url), "--data", pgDir, "--config", cfg)
	first.verify(q.url)
	second := &crashRun{t: t, client: client}
	fill(t, second, q.url, 100, 132)
	client.CloseIdleConnections()
	q.stop(t)

	fromPostgres := filepath.Join(work, "from-postgres.tar.gz")
	// From a folder that is not the node's (no blob folder): refused, not an archive without files.
	if code, _, stderr := runMain(t, pgEnv(url), "backup", "--to", fromPostgres, "--data", filepath.Join(work, "elsewhere"), "--config", cfg); code != 1 || !strings.Contains(stderr, "no blob folder") {
		t.Errorf("backup of a postgres node from another folder: exit %d, stderr %q", code, stderr)
	}
	if code, stdout, stderr := runMain(t, pgEnv(url), "backup", "--to", fromPostgres, "--data", pgDir, "--config", cfg); code != 0 || !strings.Contains(stdout, "(postgres, ") {
		t.Fatalf("backup of the postgres node: exit %d: %s %s", code, stdout, stderr)
	}
	backDir := filepath.Join(work, "back")
	if code, stdout, stderr := runMain(t, nil, "restore", "--from", fromPostgres, "--data", backDir); code != 0 || !strings.Contains(stdout, "restored the postgres backup") {
		t.Fatalf("restore of the postgres backup into badger: exit %d: %s %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(backDir, "db")); err != nil {
		t.Fatalf("restore --data wrote no badger store: %v", err)
	}
	b := startProc(t, "--data", backDir, "--config", cfg)
	first.verify(b.url)
	second.verify(b.url)
	client.CloseIdleConnections()
	b.stop(t)
}
