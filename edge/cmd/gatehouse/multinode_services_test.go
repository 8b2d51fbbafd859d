package main

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/redistest"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// sharedPostgres starts a PostgreSQL server private to the test (stopped at its end) and
// returns the URL of an empty database on it, for the nodes to share, and the server.
func sharedPostgres(t *testing.T) (string, *sharedPG) {
	t.Helper()
	pg := &sharedPG{dir: t.TempDir()}
	srv, err := pgtest.Start(pg.dir)
	if err != nil {
		t.Fatal(err)
	}
	pg.srv = srv
	t.Cleanup(func() {
		if err := pg.srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	u, err := srv.CreateDatabase(context.Background(), "multinode")
	if err != nil {
		t.Fatal(err)
	}
	return u, pg
}

// sharedPG is the cluster's PostgreSQL server, which a test may crash and start again.
type sharedPG struct {
	dir string
	srv *pgtest.Server
}

// crashAndRestart SIGKILLs the server and starts it again on its folder and port, as a
// database that crashed and came back (its data kept: fsync is on).
func (pg *sharedPG) crashAndRestart(t *testing.T) {
	t.Helper()
	if err := pg.srv.Kill(); err != nil {
		t.Fatal(err)
	}
	srv, err := pgtest.Start(pg.dir)
	if err != nil {
		t.Fatal(err)
	}
	pg.srv = srv
}

// sharedRedis starts a redis-server private to the test (the test stops and restarts it).
func sharedRedis(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.Private(t)
}
