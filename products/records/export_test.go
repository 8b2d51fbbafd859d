package records

import (
	"context"
	"time"
)

// PruneJournalForTest prunes the title journal now, as the title worker does now and then.
func PruneJournalForTest(s *Service) error { return s.pruneJournal(context.Background()) }

// SetJournalClockForTest sets the clock the journal follower and the pruning read (the wall
// clock of journal ids by default).
func SetJournalClockForTest(s *Service, now func() time.Time) { s.jnow = now }
