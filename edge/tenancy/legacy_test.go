package tenancy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// legacyStore is a store holding n old suppressions of org acme, one old form, and a project whose
// value holds the old captcha and email members.
func legacyStore(t *testing.T, n int) *store.DB {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	err = db.Update(context.Background(), func(txn *store.Txn) error {
		for i := range n {
			addr := fmt.Sprintf("a%04d/x@example.com", i) // the address part may hold the separator
			if err := txn.Set(store.Key("tenancy", "suppress", "acme", addr), []byte(`{"email":"`+addr+`","source":"bounce"}`)); err != nil {
				return err
			}
		}
		if err := txn.Set(store.Key("tenancy", "form", "demo", "contact"), []byte(`{"slug":"contact"}`)); err != nil {
			return err
		}
		return txn.Set(store.Key("tenancy", "project", "demo"), []byte(`{"id":"demo","org":"acme","captcha":{"siteKey":"s"},"email":{"from":{"email":"a@b.c"}}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// moved collects what converters were given, as "kind parts value".
type moved struct{ got map[string]string }

func (m *moved) conv(fail func(kind string, n int) error) map[string]tenancy.LegacyFunc {
	out := map[string]tenancy.LegacyFunc{}
	for _, k := range tenancy.LegacyKinds {
		kind := k.Kind
		out[kind] = func(txn *store.Txn, parts []string, v []byte) error {
			if fail != nil {
				if err := fail(kind, len(m.got)); err != nil {
					return err
				}
			}
			m.got[kind+" "+strings.Join(parts, "|")] = string(v)
			return txn.Set(store.Key(append([]string{"new", kind}, parts...)...), v)
		}
	}
	return out
}

func count(t *testing.T, db *store.DB, prefix ...string) int {
	t.Helper()
	n := 0
	err := db.View(context.Background(), func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(prefix...), KeysOnly: true}, func(_, _ []byte) (bool, error) {
			n++
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The old layout moves in chunks, every entry written anew and deleted in one transaction: a
// crash half-way leaves each entry old or moved, never both or neither, and the next run moves
// the rest; once done, a marker skips the scan.
func TestMigrateLegacyChunksAndResumes(t *testing.T) {
	const n = 700 // more than two chunks
	db := legacyStore(t, n)
	ctx := context.Background()
	crash := errors.New("crash")
	first := &moved{got: map[string]string{}}
	_, err := tenancy.MigrateLegacy(ctx, db, first.conv(func(kind string, seen int) error {
		if seen == 300 { // in the second chunk
			return crash
		}
		return nil
	}))
	if !errors.Is(err, crash) {
		t.Fatalf("MigrateLegacy with a failing converter = %v, want the crash", err)
	}
	if old, nw := count(t, db, "tenancy", "suppress"), count(t, db, "new", "suppress"); old+nw != n || nw != 256 {
		t.Fatalf("after a crash in the second chunk: %d old + %d moved, want %d with the first chunk moved", old, nw, n)
	}

	second := &moved{got: map[string]string{}}
	got, err := tenancy.MigrateLegacy(ctx, db, second.conv(nil))
	if err != nil || got != n-256+3 {
		t.Fatalf("resumed MigrateLegacy = %d, %v; want %d", got, err, n-256+3)
	}
	if old, nw := count(t, db, "tenancy", "suppress"), count(t, db, "new", "suppress"); old != 0 || nw != n {
		t.Errorf("after the resumed run: %d old, %d moved suppressions, want 0, %d", old, nw, n)
	}
	if v := second.got["suppress acme|a0699/x@example.com"]; !strings.Contains(v, `"source":"bounce"`) {
		t.Errorf("suppression with / in its address moved as %q", v)
	}
	if second.got["form demo|contact"] != `{"slug":"contact"}` || second.got["captcha demo"] != `{"siteKey":"s"}` ||
		second.got["sender demo"] != `{"from":{"email":"a@b.c"}}` {
		t.Errorf("moved %v", second.got)
	}
	err = db.View(ctx, func(txn *store.Txn) error {
		v, err := txn.Get(store.Key("tenancy", "project", "demo"))
		if err == nil && !bytes.Equal(v, []byte(`{"id":"demo","org":"acme"}`)) {
			t.Errorf("project value after the move = %s, want its old members gone", v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	// Done: nothing to scan, even an entry written under the old layout afterwards stays.
	if err := db.Update(ctx, func(txn *store.Txn) error {
		return txn.Set(store.Key("tenancy", "form", "demo", "late"), []byte(`{}`))
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := tenancy.MigrateLegacy(ctx, db, nil); err != nil || got != 0 {
		t.Errorf("MigrateLegacy once done = %d, %v; want 0, nil", got, err)
	}
}

// An old entry nobody converts stops the start rather than being lost, and stays.
func TestMigrateLegacyRefusesEntriesWithoutOwner(t *testing.T) {
	db := legacyStore(t, 1)
	m := &moved{got: map[string]string{}}
	conv := m.conv(nil)
	delete(conv, "form")
	if _, err := tenancy.MigrateLegacy(context.Background(), db, conv); err == nil || !strings.Contains(err.Error(), "no owner") {
		t.Fatalf("MigrateLegacy without a form converter = %v, want an error", err)
	}
	if count(t, db, "tenancy", "form") != 1 {
		t.Error("the old form was deleted without being moved")
	}
	if _, err := tenancy.MigrateLegacy(context.Background(), db, m.conv(nil)); err != nil || count(t, db, "tenancy", "form") != 0 {
		t.Errorf("MigrateLegacy with every converter = %v", err)
	}
}
