// Package lease lets the processes that share one store take turns at a piece of work (an
// email to deliver, a webhook attempt): a lease is a small record in the store naming its
// holder and the time it runs out, taken, renewed and given up inside the caller's store
// transactions, so the database decides between two nodes reaching for the same item (on
// badger the one group committer orders them; on a shared database the transaction that
// loses is retried and sees the winner's lease).
//
// A holder is a node id plus a claim number ("node/17"): a node recognises its own leases
// after a restart with the same id, and a claim recognises itself even when the same node
// took the item again meanwhile. A lease that ran out belongs to nobody: another node may
// take it over, which is how the work of a node killed mid-send is finished by the others.
// Queues that use leases also index each leased item under its expiry time, so the scan
// that finds due work finds the expired leases too (see products/email and edge/webhooks).
package lease

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Lease is the stored record of who holds an item, and until when.
type Lease struct {
	// Holder is the claim that holds the item (Node.Claim).
	Holder string `json:"holder"`
	// Until is when the lease runs out, in unix nanoseconds of the holder's clock.
	Until int64 `json:"until"`
}

// Expired reports whether the lease has run out at now (unix nanoseconds).
func (l Lease) Expired(now int64) bool { return l.Until <= now }

// Node returns the node id part of the lease's holder.
func (l Lease) Node() string {
	n, _, _ := strings.Cut(l.Holder, "/")
	return n
}

// Read returns the lease stored at key; ok is false when there is none. An empty value (a
// marker written before leases had holders) reads as a lease of nobody that ran out long ago.
func Read(txn *store.Txn, key []byte) (l Lease, ok bool, err error) {
	raw, err := txn.Get(key)
	if errors.Is(err, store.ErrNotFound) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, err
	}
	return Decode(raw)
}

// Decode reads a stored lease value (see Read).
func Decode(raw []byte) (l Lease, ok bool, err error) {
	if len(raw) == 0 {
		return Lease{}, true, nil
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return Lease{}, false, fmt.Errorf("lease: decode: %w", err)
	}
	return l, true, nil
}

// Write stores l at key.
func Write(txn *store.Txn, key []byte, l Lease) error {
	raw, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return txn.Set(key, raw)
}

// Node names one process among those sharing a store and numbers its claims.
type Node struct {
	id string
	n  atomic.Uint64
}

// NewNode returns the node with id; an empty id gets a random one (a process that does not
// know itself after a restart: its old leases are taken over when they run out).
func NewNode(id string) *Node {
	if id == "" {
		id = "n" + store.NewID()
	}
	return &Node{id: strings.ReplaceAll(id, "/", "_")}
}

// ID is the node's id.
func (n *Node) ID() string { return n.id }

// Claim returns a new holder name for one claim by this node.
func (n *Node) Claim() string { return n.id + "/" + strconv.FormatUint(n.n.Add(1), 10) }
