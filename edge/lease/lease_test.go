package lease

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// A lease written in one transaction reads back in the next; holders name their node and
// differ per claim; an empty value (a marker of an older version) reads as run out long ago.
func TestWriteReadClaim(t *testing.T) {
	db, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := NewNode("host-1/a")
	h1, h2 := n.Claim(), n.Claim()
	if h1 == h2 || n.ID() != "host-1_a" {
		t.Fatalf("claims %q, %q of node %q: want two holders of node host-1_a", h1, h2, n.ID())
	}
	if r := NewNode(""); r.ID() == "" || r.ID() == NewNode("").ID() {
		t.Errorf("NewNode(\"\") ids are not random: %q", r.ID())
	}
	ctx := context.Background()
	k, old := []byte("t/lease/1"), []byte("t/lease/2")
	err = db.Update(ctx, func(txn *store.Txn) error {
		if err := Write(txn, k, Lease{Holder: h1, Until: 100}); err != nil {
			return err
		}
		return txn.Set(old, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		key     []byte
		want    Lease
		ok      bool
		node    string
		expired map[int64]bool
	}{
		{key: k, want: Lease{Holder: h1, Until: 100}, ok: true, node: "host-1_a", expired: map[int64]bool{99: false, 100: true}},
		{key: old, want: Lease{}, ok: true, node: "", expired: map[int64]bool{0: true}},
		{key: []byte("t/lease/none"), want: Lease{}, ok: false, node: ""},
	}
	for _, tc := range cases {
		_ = db.View(ctx, func(txn *store.Txn) error {
			l, ok, err := Read(txn, tc.key)
			if err != nil || ok != tc.ok || l != tc.want || l.Node() != tc.node {
				t.Errorf("Read(%s) = %+v, %v, %v (node %q); want %+v, %v (node %q)", tc.key, l, ok, err, l.Node(), tc.want, tc.ok, tc.node)
			}
			for now, want := range tc.expired {
				if l.Expired(now) != want {
					t.Errorf("%+v.Expired(%d) = %v, want %v", l, now, !want, want)
				}
			}
			return nil
		})
	}
	if _, _, err := Decode([]byte("{")); err == nil {
		t.Error("Decode of a broken value: nil error")
	}
}
