package records

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

func TestStripedCountersSumWithUnstripedKey(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	n := countKey("p", "c")
	gp := groupPrefix("p", "c", "tags")
	a, b := append(append([]byte{}, gp...), 'a'), append(append([]byte{}, gp...), 'b')
	err = db.Update(ctx, func(txn *store.Txn) error {
		// A store written before stripes: unstriped counts.
		for k, v := range map[string]uint64{string(n): 5, string(a): 3, string(b): 1} {
			if err := txn.Set([]byte(k), binary.BigEndian.AppendUint64(nil, v)); err != nil {
				return err
			}
		}
		// Later writes keep signed parts in stripes.
		for _, c := range []struct {
			s int
			k []byte
			d int64
		}{{1, n, -2}, {6, n, 4}, {2, a, -3}, {3, b, 2}, {3, b, -2}, {5, b, 1}} {
			if err := addPart(txn, stripeKey(c.s, c.k), c.d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(txn *store.Txn) error {
		if got, err := readCounter(txn, n); got != 7 || err != nil {
			t.Errorf("readCounter(count) = %d, %v; want 7", got, err)
		}
		if got, err := readCounter(txn, a); got != 0 || err != nil {
			t.Errorf("readCounter(a) = %d, %v; want 0", got, err)
		}
		if ok, _ := txn.Has(stripeKey(3, b)); ok {
			t.Errorf("a stripe back at zero is kept")
		}
		var got []string
		if err := eachCount(txn, gp, func(suf []byte, c int64) { got = append(got, fmt.Sprintf("%s=%d", suf, c)) }); err != nil {
			return err
		}
		if fmt.Sprint(got) != "[b=2]" {
			t.Errorf("eachCount = %v, want [b=2] (a sums to zero)", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStripeKeysStayApart(t *testing.T) {
	t.Parallel()
	for _, node := range []string{"", "a", "node-1"} {
		if st := preferredStripe(node); st < 0 || st >= stripes {
			t.Errorf("preferredStripe(%q) = %d, want one of the %d stripes", node, st, stripes)
		}
	}
	if preferredStripe("node-1") != preferredStripe("node-1") {
		t.Errorf("preferredStripe is not deterministic")
	}
	if got := string(stripeKey(3, countKey("p", "c"))); got != "records/s/3/n/p/c" {
		t.Errorf("stripeKey = %q", got)
	}
}

// TestMoveStripes: stripes an earlier build kept below records/d/ move to stripeRoot, in
// batches, and a document record of a project named like a stripe stays where it is.
func TestMoveStripes(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	eight := binary.BigEndian.AppendUint64(nil, 2)
	doc := []byte(`{"published":true}`)
	err = db.Update(ctx, func(txn *store.Txn) error {
		for i := range 300 {
			if err := txn.Set([]byte(fmt.Sprintf("records/d/%d/n/p/c%03d", i%stripes, i)), eight); err != nil {
				return err
			}
		}
		return txn.Set([]byte("records/d/3/n/post-1"), doc)
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{db: db}
	for range 2 { // a second run finds nothing to move
		if err := s.moveStripes(ctx); err != nil {
			t.Fatal(err)
		}
	}
	err = db.View(ctx, func(txn *store.Txn) error {
		var old, moved int
		if err := txn.Iterate(store.IterOptions{Prefix: []byte("records/d/")}, func(k, v []byte) (bool, error) {
			old++
			if string(k) != "records/d/3/n/post-1" {
				t.Errorf("left behind: %s", k)
			}
			return true, nil
		}); err != nil {
			return err
		}
		if err := txn.Iterate(store.IterOptions{Prefix: []byte(stripeRoot)}, func(k, v []byte) (bool, error) {
			moved++
			return true, nil
		}); err != nil {
			return err
		}
		if old != 1 || moved != 300 {
			t.Errorf("records/d/ holds %d, stripes %d; want 1 and 300", old, moved)
		}
		n, err := readCounter(txn, countKey("p", "c007"))
		if n != 2 || err != nil {
			t.Errorf("count after the move = %d, %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestClaimStripes: nodes claim distinct stripes while there are stripes left, a node keeps
// its claim across restarts, once every stripe is held a node shares its preferred one, and a
// claim not renewed for claimExpiry is taken over while a renewed one is not.
func TestClaimStripes(t *testing.T) {
	t.Parallel()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	clock := time.Unix(1_800_000_000, 0)
	claim := func(node string) int {
		s := &Service{db: db, node: node, now: func() time.Time { return clock }}
		s.stripe.Store(int32(preferredStripe(node)))
		if err := s.claimStripe(ctx); err != nil {
			t.Fatal(err)
		}
		return s.writeStripe()
	}
	got := map[int]string{}
	for i := 0; i < stripes; i++ {
		node := fmt.Sprintf("node-%d", i)
		st := claim(node)
		if other, ok := got[st]; ok {
			t.Errorf("%s claims stripe %d, held by %s", node, st, other)
		}
		got[st] = node
	}
	for st, node := range got {
		if again := claim(node); again != st {
			t.Errorf("%s claims %d again, held %d", node, again, st)
		}
	}
	if st := claim("node-late"); st != preferredStripe("node-late") {
		t.Errorf("node-late claims %d with every stripe held, want its preferred %d", st, preferredStripe("node-late"))
	}
	// Later, every node but node-3 is gone; node-3 renewed its claim.
	clock = clock.Add(claimExpiry / 2)
	kept := claim("node-3")
	clock = clock.Add(claimExpiry/2 + time.Second)
	seen := map[int]bool{kept: true}
	for i := 0; i < stripes-1; i++ {
		node := fmt.Sprintf("new-%d", i)
		st := claim(node)
		if seen[st] {
			t.Errorf("%s claims stripe %d, held by a live node", node, st)
		}
		seen[st] = true
	}
}
