package tenancy

import "github.com/gatehouse-dev/gatehouse/edge/store"

// Journal writes changes into the transaction that commits them, and returns the generation
// it recorded them under (0 when it recorded nothing). edge/bus provides it: its change
// journal in the shared store is how the other nodes of a deployment learn of a change, and
// written in the change's own transaction it cannot miss one (a node that crashes after the
// commit has journaled the change all the same).
type Journal func(txn *store.Txn, changes []Change) (uint64, error)

// SetJournal makes Record write changes with j. Wiring calls it before the first write.
func (s *Service) SetJournal(j Journal) {
	s.listenMu.Lock()
	defer s.listenMu.Unlock()
	s.journal = j
}

// Record journals changes in txn, the transaction that commits them, when a journal is set,
// and marks each with the generation it got (Change.Gen), so that announcing them after the
// commit writes nothing more. Every writer of changes calls it last in its transaction's
// function, then Notify after the commit: Apply, CreateKey and RevokeKey do, and so do the
// products that change tenancy data outside an apply.
func (s *Service) Record(txn *store.Txn, changes []Change) error {
	s.listenMu.RLock()
	j := s.journal
	s.listenMu.RUnlock()
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
