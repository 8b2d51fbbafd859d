package certs

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// TestStorage runs certmagic's storage contract on both backends: values, listing, stat,
// recursive delete, and locks that exclude another node until unlocked or run out.
func TestStorage(t *testing.T) {
	for _, backend := range storetest.Backends() {
		t.Run(backend, func(t *testing.T) {
			db := storetest.OpenBackend(t, backend)
			ctx := context.Background()
			s := NewStorage(db, lease.NewNode("a"))
			if _, err := s.Load(ctx, "certificates/x/x.crt"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
			}
			for _, k := range []string{"certificates/ca/a.test/a.test.crt", "certificates/ca/a.test/a.test.key", "certificates/ca/b.test/b.test.crt", "acme/ca/users/me/me.json"} {
				if err := s.Store(ctx, k, []byte("v:"+k)); err != nil {
					t.Fatalf("Store(%s): %v", k, err)
				}
			}
			if v, err := s.Load(ctx, "certificates/ca/a.test/a.test.key"); err != nil || string(v) != "v:certificates/ca/a.test/a.test.key" {
				t.Errorf("Load = %q, %v", v, err)
			}
			if !s.Exists(ctx, "acme/ca/users/me/me.json") || s.Exists(ctx, "acme/ca/users/me") {
				t.Error("Exists: a value exists, a prefix does not")
			}
			for _, tc := range []struct {
				path      string
				recursive bool
				want      []string
			}{
				{"certificates/ca", false, []string{"certificates/ca/a.test", "certificates/ca/b.test"}},
				{"certificates/ca/", false, []string{"certificates/ca/a.test", "certificates/ca/b.test"}},
				{"certificates", true, []string{"certificates/ca/a.test/a.test.crt", "certificates/ca/a.test/a.test.key", "certificates/ca/b.test/b.test.crt"}},
			} {
				got, err := s.List(ctx, tc.path, tc.recursive)
				if err != nil || !slices.Equal(got, tc.want) {
					t.Errorf("List(%q, %v) = %q, %v; want %q", tc.path, tc.recursive, got, err, tc.want)
				}
			}
			if _, err := s.List(ctx, "nothing", true); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("List(empty) = %v, want fs.ErrNotExist", err)
			}
			info, err := s.Stat(ctx, "certificates/ca/b.test/b.test.crt")
			if err != nil || !info.IsTerminal || info.Size != int64(len("v:certificates/ca/b.test/b.test.crt")) || time.Since(info.Modified) > time.Hour {
				t.Errorf("Stat(value) = %+v, %v", info, err)
			}
			if info, err := s.Stat(ctx, "certificates/ca"); err != nil || info.IsTerminal {
				t.Errorf("Stat(prefix) = %+v, %v", info, err)
			}
			if err := s.Delete(ctx, "certificates/ca/a.test"); err != nil {
				t.Fatal(err)
			}
			if s.Exists(ctx, "certificates/ca/a.test/a.test.crt") || !s.Exists(ctx, "certificates/ca/b.test/b.test.crt") {
				t.Error("Delete(prefix) must remove what is below it and nothing else")
			}
			if err := s.Delete(ctx, "certificates/ca/a.test"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Delete(missing) = %v, want fs.ErrNotExist", err)
			}
		})
	}
}

// TestLocks: a lock held by one node keeps another out until it is unlocked; a lock whose
// holder died (its lease ran out) is taken over.
func TestLocks(t *testing.T) {
	for _, backend := range storetest.Backends() {
		t.Run(backend, func(t *testing.T) {
			db := storetest.OpenBackend(t, backend)
			ctx := context.Background()
			a, b := NewStorage(db, lease.NewNode("a")), NewStorage(db, lease.NewNode("b"))
			defer a.Close()
			defer b.Close()
			if err := a.Lock(ctx, "issue_cert_x.test"); err != nil {
				t.Fatal(err)
			}
			if ok, err := b.TryLock(ctx, "issue_cert_x.test"); ok || err != nil {
				t.Fatalf("TryLock by b while a holds it = %v, %v", ok, err)
			}
			if ok, err := a.TryLock(ctx, "issue_cert_x.test"); ok || err != nil {
				t.Fatalf("a second claim of a while a holds it = %v, %v", ok, err)
			}
			got := make(chan error, 1)
			go func() { got <- b.Lock(ctx, "issue_cert_x.test") }()
			if err := a.Unlock(ctx, "issue_cert_x.test"); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("b.Lock after a's Unlock: %v", err)
			}
			if err := b.Unlock(ctx, "issue_cert_x.test"); err != nil {
				t.Fatal(err)
			}
			// A holder that died: its lease ran out and nobody renews it.
			dead := NewStorage(db, lease.NewNode("dead"))
			dead.now = func() time.Time { return time.Now().Add(-2 * lockTTL) }
			if ok, err := dead.TryLock(ctx, "renew_cert_y.test"); !ok || err != nil {
				t.Fatal(ok, err)
			}
			dead.Close()
			if ok, err := b.TryLock(ctx, "renew_cert_y.test"); !ok || err != nil {
				t.Fatalf("TryLock of a lock whose lease ran out = %v, %v", ok, err)
			}
			if err := a.Unlock(ctx, "never"); err == nil {
				t.Error("Unlock of a lock not held must fail")
			}
			if err := db.View(ctx, func(tx *store.Txn) error {
				l, ok, err := lease.Read(tx, []byte("tls/lock/renew_cert_y.test"))
				if err != nil || !ok || l.Node() != "b" {
					t.Errorf("lease = %+v %v %v, want b's", l, ok, err)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
