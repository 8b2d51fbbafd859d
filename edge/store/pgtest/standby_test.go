package pgtest

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A synchronous standby refuses writes, holds every commit its primary acknowledged, and
// takes writes once promoted, with the primary killed.
func TestStandbyPromotedAfterPrimaryKilled(t *testing.T) {
	ctx := context.Background()
	primary, err := Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Stop()
	u, err := primary.CreateDatabase(ctx, "ha")
	if err != nil {
		t.Fatal(err)
	}
	standby, err := primary.StartStandby(t.TempDir(), true)
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Stop()
	exec := func(url, sql string) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	// remote_apply: the commit returns once the standby has applied it, so the standby's
	// refusal below is of the write, not of a table it has yet to see.
	if err := exec(u, "set synchronous_commit = remote_apply; create table t (v int); insert into t values (1)"); err != nil {
		t.Fatal(err)
	}
	var pe *pgconn.PgError
	if err := exec(standby.URL("ha"), "insert into t values (2)"); !errors.As(err, &pe) || pe.Code != "25006" {
		t.Errorf("insert on the standby = %v, want SQLSTATE 25006 (read-only transaction)", err)
	}
	if err := primary.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := standby.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	if err := exec(standby.URL("ha"), "insert into t values (2)"); err != nil {
		t.Errorf("insert on the promoted standby = %v", err)
	}
	conn, err := pgx.Connect(ctx, standby.URL("ha"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "select count(*) from t").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows on the promoted standby = %d (%v), want the primary's acknowledged one and its own", n, err)
	}
}
