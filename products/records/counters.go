package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Counters without a hot key. The published count of a collection and the per-value counts of
// groupable fields are each split into stripes, so that nodes writing one database touch
// different keys (no single key every write of a collection must read and rewrite, which would
// make concurrent transactions of different nodes conflict). A process writes its changes to
// one stripe, its Service's stripe (chooseStripe below): its own writes never conflict with
// each other (its store's one committer runs them one after another), and they read the
// stripe parts from the committer's memory of hot keys (store.Txn.GetHot, exact across the
// commit's pending writes and earlier commits) instead of the store (a store read of a counter
// costs a lookup in every level of the LSM tree: with a stripe per record id, three such reads
// per record write were a fifth of its CPU; with one stripe a node, 5% of it). A count is the sum of its stripes, read with one point read each, plus the
// unstriped key a store written before stripes existed may still hold. A stripe holds the
// signed change its writers made, so it may be negative when they removed records another
// stripe or the unstriped key counted; a stripe that comes back to zero is deleted.

// stripes is how many parts each counter is split into.
const stripes = 8

// Choosing a stripe. Two nodes writing one stripe conflict (issue 17: with three nodes on one
// database and a stripe drawn at random, two of them shared one a third of the time, and
// their writes did not scale), so a Service writes the stripe its node claimed: Start claims
// one in the store (records/k/<stripe> -> a lease held by the node id), the one the
// node held before when it holds one (a restarted node keeps its stripe), else its node's
// preferred stripe (a hash of its id) when free, else the lowest free one; distinct nodes get
// distinct stripes while there are stripes left (then two share one: correct, only slower).
// A running node renews its claim every claimRenew; a claim not renewed for claimExpiry is
// free (its node is gone: nodes on fresh data folders, each with a new id, do not use up the
// stripes). Before Start, and when the claim fails, a Service writes its preferred stripe; a
// Service without a node id (tests, a single node) draws one at random. Counts do not depend
// on the choice: a reader sums every stripe.

// claimRenew is how often a running node renews its stripe claim; claimExpiry how long an
// unrenewed claim holds.
const (
	claimRenew  = time.Minute
	claimExpiry = 10 * time.Minute
)

// claimPrefix holds the stripe claims: records/k/<stripe> -> a lease (edge/lease) whose holder
// is the claiming node's id, running out claimExpiry after the claim or its last renewal.
func claimPrefix() []byte { return store.Prefix(root, "k") }

// preferredStripe is the stripe node id node writes until it claims one: a hash of the id,
// or a random one for no id.
func preferredStripe(node string) int {
	if node == "" {
		return rand.IntN(stripes)
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(node))
	return int(h.Sum32() % stripes)
}

// writeStripe is the stripe this Service writes its counter changes and versions to.
func (s *Service) writeStripe() int { return int(s.stripe.Load()) }

// claimStripe claims the stripe this Service's node writes (see above); without a node id it
// keeps its random stripe.
func (s *Service) claimStripe(ctx context.Context) error {
	if s.node == "" {
		return nil
	}
	chosen := -1
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		chosen = -1
		var held [stripes]bool
		p := claimPrefix()
		t := s.now()
		err := txn.Iterate(store.IterOptions{Prefix: p}, func(k, v []byte) (bool, error) {
			st, err := strconv.Atoi(string(k[len(p):]))
			if err != nil || st < 0 || st >= stripes {
				return true, nil
			}
			l, _, err := lease.Decode(v)
			if err != nil {
				return true, nil // unreadable: nobody's
			}
			if l.Node() == s.node {
				chosen = st
				return false, nil
			}
			held[st] = !l.Expired(t.UnixNano())
			return true, nil
		})
		if err != nil {
			return err
		}
		if chosen >= 0 {
			return lease.Write(txn, store.Key(root, "k", strconv.Itoa(chosen)), lease.Lease{Holder: s.node, Until: t.Add(claimExpiry).UnixNano()})
		}
		if pref := preferredStripe(s.node); !held[pref] {
			chosen = pref
		} else {
			for st := range stripes {
				if !held[st] {
					chosen = st
					break
				}
			}
		}
		if chosen < 0 {
			return nil // every stripe is held: share the preferred one
		}
		return lease.Write(txn, store.Key(root, "k", strconv.Itoa(chosen)), lease.Lease{Holder: s.node, Until: t.Add(claimExpiry).UnixNano()})
	})
	if err != nil {
		return err
	}
	if chosen >= 0 {
		s.stripe.Store(int32(chosen))
	}
	return nil
}

// stripeRoot holds the stripes: records/s/<stripe>/<n or g key below records/>. Its letter is
// its own: below records/d/ (where stripes were first kept) a stripe "3" was one key level away
// from the document's records of a project named "3", and a re-apply of that project pruned
// them as records the document no longer lists (moveStripes moves such a folder's stripes).
const stripeRoot = root + "/s/"

// stripeKey is the key of stripe s of counter k (a key below "records/").
func stripeKey(s int, k []byte) []byte {
	b := make([]byte, 0, len(k)+4)
	b = append(b, stripeRoot...)
	b = append(b, byte('0'+s), store.Sep)
	return append(b, k[len(root)+1:]...)
}

// readCounter reads a counter: its unstriped key plus its stripes, never below zero.
func readCounter(txn *store.Txn, k []byte) (int64, error) {
	n, err := readPart(txn, k)
	if err != nil {
		return 0, err
	}
	for s := 0; s < stripes; s++ {
		d, err := readPart(txn, stripeKey(s, k))
		if err != nil {
			return 0, err
		}
		n += d
	}
	return max(n, 0), nil
}

// readPart reads one stored 8-byte signed count (0 when missing).
func readPart(txn *store.Txn, k []byte) (int64, error) {
	v, err := txn.Get(k)
	return partOf(v, err)
}

// partOf decodes a part read as v, err.
func partOf(v []byte, err error) (int64, error) {
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, errCorrupt
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

// addPart adds d to the stored part at k, deleting it when it comes to zero. Every write of a
// node changes the parts of its stripe, one Update after another on the store's committer, so
// it reads them with GetHot: on badger the committer keeps them in memory, exact whoever
// else writes them (a document apply, a drop, a Batch, a Load: edge/store/hot.go), instead of
// a lookup through every level of the LSM tree per part and write.
func addPart(txn *store.Txn, k []byte, d int64) error {
	n, err := partOf(txn.GetHot(k))
	if err != nil {
		return err
	}
	if n+d == 0 {
		return txn.Delete(k)
	}
	return txn.Set(k, binary.BigEndian.AppendUint64(nil, uint64(n+d)))
}

// renewClaims renews this Service's stripe claim every claimRenew until stop is closed.
func (s *Service) renewClaims(stop <-chan struct{}) {
	defer s.claimWG.Done()
	tick := time.NewTicker(claimRenew)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := s.claimStripe(ctx); err != nil {
				s.log.Warn("records: renewing the counter stripe claim failed", "err", err)
			}
			cancel()
		}
	}
}

// eachCount visits the counters below prefix (a key prefix below "records/") with their
// summed counts, in key order; counts that sum to zero or less are skipped. The suffix passed
// to fn is what follows prefix in the counter's key.
func eachCount(txn *store.Txn, prefix []byte, fn func(suffix []byte, n int64)) error {
	sums := map[string]int64{}
	var order []string
	visit := func(p []byte) error {
		return txn.Iterate(store.IterOptions{Prefix: p}, func(k, v []byte) (bool, error) {
			if len(v) != 8 {
				return true, nil
			}
			suf := string(k[len(p):])
			if _, ok := sums[suf]; !ok {
				order = append(order, suf)
			}
			sums[suf] += int64(binary.BigEndian.Uint64(v))
			return true, nil
		})
	}
	if err := visit(prefix); err != nil {
		return err
	}
	for s := 0; s < stripes; s++ {
		if err := visit(stripeKey(s, prefix)); err != nil {
			return err
		}
	}
	sort.Strings(order)
	for _, suf := range order {
		if n := sums[suf]; n > 0 {
			fn([]byte(suf), n)
		}
	}
	return nil
}

// dropCounters deletes a collection's counters, stripes included.
func dropCounters(txn *store.Txn, stripe int, project, coll string) error {
	n := countKey(project, coll)
	del := [][]byte{n}
	for s := 0; s < stripes; s++ {
		del = append(del, stripeKey(s, n))
	}
	for _, k := range del {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return bumpVersion(txn, stripe, project, coll) // the counters changed (cache.go)
}

// groupStripePrefixes are the prefixes of the striped per-value counts of a collection.
func groupStripePrefixes(project, coll string) [][]byte {
	gp := groupCollPrefix(project, coll)
	out := make([][]byte, 0, stripes)
	for s := 0; s < stripes; s++ {
		out = append(out, bytes.Clone(stripeKey(s, gp)))
	}
	return out
}

// moveStripes moves the counter stripes a store written by an earlier build keeps below
// records/d/<stripe>/ to stripeRoot, a batch of entries a transaction; it is a no-op once they
// are moved (every node may run it at start). A stripe there is told from a document record
// of a project named like a stripe by its shape: an n or g key with an 8-byte value (a record
// copy is a JSON object).
func (s *Service) moveStripes(ctx context.Context) error {
	for {
		moved := 0
		err := s.db.Update(ctx, func(txn *store.Txn) error {
			moved = 0
			var keys, vals [][]byte
			for st := 0; st < stripes; st++ {
				old := []byte(root + "/d/" + string(rune('0'+st)) + "/")
				err := txn.Iterate(store.IterOptions{Prefix: old}, func(k, v []byte) (bool, error) {
					rest := k[len(old):]
					if len(v) == 8 && v[0] != '{' && (bytes.HasPrefix(rest, []byte("n/")) || bytes.HasPrefix(rest, []byte("g/"))) {
						keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
					}
					return len(keys) < 256, nil
				})
				if err != nil {
					return err
				}
			}
			for i, k := range keys {
				nk := append([]byte(stripeRoot), k[len(root)+len("/d/"):]...)
				if err := txn.Set(nk, vals[i]); err != nil {
					return err
				}
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			moved = len(keys)
			return nil
		})
		if err != nil || moved == 0 {
			return err
		}
	}
}
