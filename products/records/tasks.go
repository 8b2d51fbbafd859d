package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Collection tasks: work a document apply asks of the records it does not write itself. When a
// collection's fields change, every stored record of it is re-derived (projections, index
// entries, counters); when a collection is deleted, its records, indexes, counters and titles
// go. Both touch every record of the collection, too much for the apply's one transaction, so
// the apply records a task in its transaction (records/m/<project>/<collection>), and the task
// runs after the commit (Changed) and, when a crash interrupted it, at the next Start. A task
// brings the collection's derived data in line with its definition as stored when it runs: a
// rebuild when the collection exists, a drop when it does not. It is idempotent, and its key is
// deleted only once it finished and only if no later apply recorded it again meanwhile, so the
// task of every committed apply completes.
//
// A collection deleted and created again before its drop ran (a crash in between) keeps the
// old records, re-derived under its new fields.

// collTask is the stored value of a collection task; ID tells one recording from the next.
type collTask struct {
	ID string `json:"id"`
}

func taskKey(project, coll string) []byte { return store.Key(root, "m", project, coll) }

var taskRoot = store.Prefix(root, "m")

// recordTask records in txn that a collection's derived data must follow its definition.
func recordTask(txn *store.Txn, project, coll string) error {
	v, err := json.Marshal(collTask{ID: store.NewID()})
	if err != nil {
		return err
	}
	return txn.Set(taskKey(project, coll), v)
}

// runTasks runs every recorded collection task, oldest key first, and deletes each one that
// finished and was not recorded again meanwhile. It returns the first failure (the others
// still run; a failed task stays recorded for the next call).
func (s *Service) runTasks(ctx context.Context) error {
	type task struct {
		project, coll string
		raw           []byte
	}
	var tasks []task
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: taskRoot}, func(k, v []byte) (bool, error) {
			project, coll, _ := strings.Cut(string(k[len(taskRoot):]), string(store.Sep))
			tasks = append(tasks, task{project: project, coll: coll, raw: bytes.Clone(v)})
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, tk := range tasks {
		if err := s.runTask(ctx, tk.project, tk.coll); err != nil {
			errs = append(errs, err)
			continue
		}
		err := s.db.Update(ctx, func(txn *store.Txn) error {
			cur, err := txn.Get(taskKey(tk.project, tk.coll))
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			if err != nil || !bytes.Equal(cur, tk.raw) {
				return err // recorded again: the next run does it
			}
			return txn.Delete(taskKey(tk.project, tk.coll))
		})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// runTask runs one collection task: a rebuild when the collection exists, else a drop.
func (s *Service) runTask(ctx context.Context, project, coll string) error {
	_, err := s.readCollection(ctx, project, coll)
	switch {
	case errors.Is(err, ErrCollectionNotFound):
		return s.dropCollection(ctx, project, coll)
	case err != nil:
		return err
	}
	return s.rebuildCollection(ctx, project, coll)
}
