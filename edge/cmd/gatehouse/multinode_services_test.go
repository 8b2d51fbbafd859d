package main

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/redistest"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// sharedPostgres starts a PostgreSQL server private to the test (stopped at its end) and
// returns the URL of an empty database on it, for the nodes to share.
func sharedPostgres(t *testing.T) string {
	t.Helper()
	srv, err := pgtest.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	u, err := srv.CreateDatabase(context.Background(), "multinode")
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// sharedRedis starts a redis-server private to the test (the test stops and restarts it).
func sharedRedis(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.Private(t)
}
