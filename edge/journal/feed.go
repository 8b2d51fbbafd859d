package journal

import (
	"context"
	"sync"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Func writes changes into the transaction that commits them, and returns the generation it
// recorded them under (0 when it recorded nothing). edge/bus provides it: its change journal in
// the shared store is how the other nodes of a deployment learn of a change, and written in the
// change's own transaction it cannot miss one (a node that crashes after the commit has
// journaled the change all the same).
type Func func(txn *store.Txn, changes []Change) (uint64, error)

// Feed records changes in their transaction (through the Func set with SetJournal) and, after
// the commit, announces them to its listeners. Its zero value records nothing and has no
// listener; edge/tenancy's Service carries one, so every writer of tenancy data reaches it there.
type Feed struct {
	mu        sync.RWMutex
	listeners []func(ctx context.Context, changes []Change)
	journal   Func
}

// SetJournal makes Record write changes with j. Wiring calls it before the first write.
func (f *Feed) SetJournal(j Func) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.journal = j
}

// Record journals changes in txn, the transaction that commits them, when a journal is set,
// and marks each with the generation it got (Change.Gen), so that announcing them after the
// commit writes nothing more. Every writer of changes calls it last in its transaction's
// function, then Notify after the commit: the tenancy apply and key writes do, and so do the
// products that change tenancy data outside an apply.
func (f *Feed) Record(txn *store.Txn, changes []Change) error {
	f.mu.RLock()
	j := f.journal
	f.mu.RUnlock()
	if j == nil || len(changes) == 0 {
		return nil
	}
	gen, err := j(txn, changes)
	if err != nil {
		return err
	}
	for i := range changes {
		changes[i].Gen = gen
	}
	return nil
}

// OnChange registers fn to run after every committed change (cache invalidation). It is called
// after the commit, with what changed.
func (f *Feed) OnChange(fn func(ctx context.Context, changes []Change)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listeners = append(f.listeners, fn)
}

// Notify tells every listener about committed changes. The tenancy apply calls it; so do
// products that change tenancy-owned data outside an apply (an uploaded plugin module), and
// edge/bus with the changes of other nodes.
func (f *Feed) Notify(ctx context.Context, changes []Change) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, fn := range f.listeners {
		fn(ctx, changes)
	}
}
