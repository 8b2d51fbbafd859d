package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// Each URL is a database of its own, empty, that takes writes.
func TestURLGivesFreshDatabases(t *testing.T) {
	ctx := context.Background()
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		u := URL(t)
		if seen[u] {
			t.Fatalf("URL returned %s twice", u)
		}
		seen[u] = true
		conn, err := pgx.Connect(ctx, u)
		if err != nil {
			t.Fatalf("connect to %s: %v", u, err)
		}
		var tables int
		if err := conn.QueryRow(ctx, "select count(*) from pg_tables where schemaname = 'public'").Scan(&tables); err != nil || tables != 0 {
			t.Errorf("new database has %d tables (%v), want 0", tables, err)
		}
		if _, err := conn.Exec(ctx, "create table t (k bytea primary key)"); err != nil {
			t.Errorf("create table: %v", err)
		}
		var fsync string
		if err := conn.QueryRow(ctx, "show fsync").Scan(&fsync); err != nil || fsync != "on" {
			t.Errorf("fsync = %q (%v), want on", fsync, err)
		}
		conn.Close(ctx)
	}
}

// A server started on the folder of a stopped one finds its data again.
func TestStartRestartsACluster(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv, err := Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	u, err := srv.CreateDatabase(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "create table t (v int); insert into t values (42)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	port := srv.Port()
	srv, err = Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if srv.Port() != port {
		t.Errorf("restarted server on port %d, want its former %d (free again)", srv.Port(), port)
	}
	conn, err = pgx.Connect(ctx, srv.URL("kept"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "select v from t").Scan(&v); err != nil || v != 42 {
		t.Errorf("after a kill and restart, select v = %d, %v; want 42", v, err)
	}
}

// The sweep removes the folder of a test process that died without Main's cleanup, and leaves
// a folder another process has just made (no owner.pid yet).
func TestSweepRemovesDeadOwnersFolders(t *testing.T) {
	dead, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dead)
	if err := os.WriteFile(filepath.Join(dead, "owner.pid"), []byte("4194303"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(fresh)
	sweep()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("sweep left the folder of a dead process (%v)", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("sweep removed a folder just made: %v", err)
	}
}
