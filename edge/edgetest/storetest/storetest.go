// Package storetest opens the store a test runs on, following GATEHOUSE_TEST_STORE: badger
// (the default, in the folder the test gives or in memory) or postgres (a fresh database of
// the private PostgreSQL server of edge/store/pgtest). Tests of products and edge packages that
// just need a store open it here, so the same suites run on both backends (`make
// test-postgres`); tests about badger itself keep calling store.Open.
//
// A package whose tests open a store here runs them through Main, which stops the private
// server after them:
//
//	func TestMain(m *testing.M) { storetest.Main(m) }
package storetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// Env names the variable that picks the backend: badger (or empty) or postgres.
const Env = "GATEHOUSE_TEST_STORE"

// urlFile keeps, in a test's store folder, the URL of the database that stands for the folder
// on postgres: a test that reopens the folder (a restart) finds its database again.
const urlFile = ".storetest-postgres-url"

// Backend returns the backend GATEHOUSE_TEST_STORE names (store.BackendBadger when unset); an
// unknown name fails the test.
func Backend(t testing.TB) string {
	t.Helper()
	switch b := strings.TrimSpace(os.Getenv(Env)); b {
	case "", store.BackendBadger:
		return store.BackendBadger
	case store.BackendPostgres:
		return store.BackendPostgres
	default:
		t.Fatalf("%s=%q: want badger or postgres", Env, b)
		return ""
	}
}

// Postgres reports whether the tests run on the postgres backend.
func Postgres(t testing.TB) bool { return Backend(t) == store.BackendPostgres }

// Options turns the badger options a test would open with into those of the backend under
// test: on postgres, a new database dropped when t ends (or the one an earlier call gave for
// the same opts.Dir), the memory knobs and InMemory left aside.
func Options(t testing.TB, opts store.Options) store.Options {
	t.Helper()
	return options(t, opts, t)
}

// ReusedOptions is Options for a folder a test opens more than once, from subtests of its
// own (a restart test): the database of the folder outlives t and is dropped with the private
// server when the test process ends.
func ReusedOptions(t testing.TB, opts store.Options) store.Options {
	t.Helper()
	return options(t, opts, kept{t})
}

// kept is t with its Cleanup dropped: the database pgtest.URL makes for it is not dropped at
// t's end.
type kept struct{ testing.TB }

func (kept) Cleanup(func()) {}

func options(t testing.TB, opts store.Options, owner testing.TB) store.Options {
	t.Helper()
	if !Postgres(t) {
		return opts
	}
	u := ""
	if opts.Dir != "" && !opts.InMemory {
		if raw, err := os.ReadFile(filepath.Join(opts.Dir, urlFile)); err == nil {
			u = string(raw)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if u == "" {
		u = pgtest.URL(owner)
		if opts.Dir != "" && !opts.InMemory {
			if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(opts.Dir, urlFile), []byte(u), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return store.Options{Backend: store.BackendPostgres, PostgresURL: u, SyncWrites: opts.SyncWrites, Log: opts.Log}
}

// Open is store.Open on the backend under test (see Options); the caller closes the store.
func Open(t testing.TB, opts store.Options) (*store.DB, error) {
	t.Helper()
	db, err := store.Open(Options(t, opts))
	if err != nil {
		return nil, fmt.Errorf("storetest: %w", err)
	}
	return db, nil
}

// Main runs a package's tests and stops the private PostgreSQL server after them (when the
// tests started one).
func Main(m *testing.M) { pgtest.Main(m) }

// Backends names both backends, for the tests that run on each whatever GATEHOUSE_TEST_STORE
// says (the multi-node tests, whose "nodes" in one process share one database).
func Backends() []string { return []string{store.BackendBadger, store.BackendPostgres} }

// OpenBackend opens a fresh store of backend (badger in a folder of t's, postgres a new
// database of the private server), closed when t ends.
func OpenBackend(t testing.TB, backend string) *store.DB {
	t.Helper()
	opts := store.Options{Dir: t.TempDir()}
	if backend == store.BackendPostgres {
		opts = store.Options{Backend: store.BackendPostgres, PostgresURL: pgtest.URL(t)}
	}
	db, err := store.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
