package legacy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/store"
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

// oldKinds are the kinds of the old layout the test stores, in the order the products' converters
// hand them (records after their collections), with the old project value's members.
var oldKinds = []legacy.Converter{
	{Kind: "suppress", Parts: 2}, {Kind: "form", Parts: 2}, {Kind: "template", Parts: 2},
	{Kind: "collection", Parts: 2}, {Kind: "record", Parts: 3},
	{Kind: "captcha", Member: "captcha"}, {Kind: "sender", Member: "email"},
}

// moved collects what converters were given, as "kind parts value".
type moved struct{ got map[string]string }

func (m *moved) conv(fail func(kind string, n int) error) []legacy.Converter {
	var out []legacy.Converter
	for _, c := range oldKinds {
		kind := c.Kind
		c.Move = func(txn *store.Txn, parts []string, v []byte) error {
			if fail != nil {
				if err := fail(kind, len(m.got)); err != nil {
					return err
				}
			}
			m.got[kind+" "+strings.Join(parts, "|")] = string(v)
			return txn.Set(store.Key(append([]string{"new", kind}, parts...)...), v)
		}
		out = append(out, c)
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
func TestMigrateChunksAndResumes(t *testing.T) {
	const n = 700 // more than two chunks
	db := legacyStore(t, n)
	ctx := context.Background()
	crash := errors.New("crash")
	first := &moved{got: map[string]string{}}
	_, err := legacy.Migrate(ctx, db, first.conv(func(kind string, seen int) error {
		if seen == 300 { // in the second chunk
			return crash
		}
		return nil
	}))
	if !errors.Is(err, crash) {
		t.Fatalf("Migrate with a failing converter = %v, want the crash", err)
	}
	if old, nw := count(t, db, "tenancy", "suppress"), count(t, db, "new", "suppress"); old+nw != n || nw != 256 {
		t.Fatalf("after a crash in the second chunk: %d old + %d moved, want %d with the first chunk moved", old, nw, n)
	}

	second := &moved{got: map[string]string{}}
	got, err := legacy.Migrate(ctx, db, second.conv(nil))
	if err != nil || got != n-256+3 {
		t.Fatalf("resumed Migrate = %d, %v; want %d", got, err, n-256+3)
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
	if got, err := legacy.Migrate(ctx, db, nil); err != nil || got != 0 {
		t.Errorf("Migrate once done = %d, %v; want 0, nil", got, err)
	}
}

// A member of the old project value moves out of it; the project keeps its other members in
// their order, compacted as the old release wrote them, and a project without the member is
// neither counted nor rewritten.
func TestMemberMovesOutOfTheProject(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, moved string
	}{
		{"captcha and email", `{"id":"p","org":"o","name":"P","captcha":{"siteKey":"s"},"email":{"from":{"email":"a@b.c"}}}`, `{"id":"p","org":"o","name":"P"}`, `{"siteKey":"s"}`},
		{"captcha only", `{"id":"p","org":"o","captcha":{"siteKey":"s"}}`, `{"id":"p","org":"o"}`, `{"siteKey":"s"}`},
		{"spaces and order", `{ "org": "o", "captcha": {"siteKey": "s"}, "id": "p" }`, `{"org":"o","id":"p"}`, `{"siteKey": "s"}`},
		{"no member", `{"id":"p","org":"o"}`, `{"id":"p","org":"o"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			k := store.Key("tenancy", "project", "p")
			if err := db.Update(ctx, func(txn *store.Txn) error { return txn.Set(k, []byte(tc.in)) }); err != nil {
				t.Fatal(err)
			}
			got := ""
			n, err := legacy.Migrate(ctx, db, []legacy.Converter{
				{Kind: "captcha", Member: "captcha", Move: func(_ *store.Txn, parts []string, v []byte) error {
					got = strings.Join(parts, "|") + " " + string(v)
					return nil
				}},
				{Kind: "sender", Member: "email", Move: func(*store.Txn, []string, []byte) error { return nil }},
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "", false: "p " + tc.moved}[tc.moved == ""]; got != want {
				t.Errorf("the captcha converter got %q, want %q", got, want)
			}
			if strings.Contains(tc.in, `"captcha"`) != (n > 0) {
				t.Errorf("Migrate moved %d entries", n)
			}
			if err := db.View(ctx, func(txn *store.Txn) error {
				v, err := txn.Get(k)
				if err == nil && string(v) != tc.want {
					t.Errorf("project value = %s, want %s", v, tc.want)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An old entry, or a member of the old project value, that no converter moves stops the start
// before anything moved, rather than being lost, and stays; tenancy's own entries stay too.
func TestMigrateRefusesEntriesWithoutOwner(t *testing.T) {
	for _, tc := range []struct{ name, drop, want string }{
		{"entry", "form", "tenancy/form/demo/contact"},
		{"project member", "sender", `member "email"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := legacyStore(t, 1)
			ctx := context.Background()
			if err := db.Update(ctx, func(txn *store.Txn) error {
				return txn.Set(store.Key("tenancy", "org", "acme"), []byte(`{"slug":"acme"}`))
			}); err != nil {
				t.Fatal(err)
			}
			m := &moved{got: map[string]string{}}
			var convs []legacy.Converter
			for _, c := range m.conv(nil) {
				if c.Kind != tc.drop {
					convs = append(convs, c)
				}
			}
			n, err := legacy.Migrate(ctx, db, convs)
			if err == nil || !strings.Contains(err.Error(), "no owner") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Migrate without the %s converter = %v, want an error naming %s", tc.drop, err, tc.want)
			}
			if n != 0 || len(m.got) != 0 || count(t, db, "tenancy", "form") != 1 {
				t.Errorf("Migrate refusing moved %d entries (%v)", n, m.got)
			}
			if n, err := legacy.Migrate(ctx, db, m.conv(nil)); err != nil || n != 4 || count(t, db, "tenancy", "form") != 0 || count(t, db, "tenancy", "org") != 1 {
				t.Errorf("Migrate with every converter = %d, %v", n, err)
			}
		})
	}
}
