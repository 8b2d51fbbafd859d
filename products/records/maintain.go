package records

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/edge/httpx"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/fields"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func withProblems(err error, probs []problem) error {
	e := httpx.As(err)
	e.Details = e.Details[:0]
	for _, p := range probs {
		e.Details = append(e.Details, httpx.FieldProblem{Field: p.field, Problem: p.msg})
	}
	return e
}

// Start brings the title index up to date (a new or incomplete index is rebuilt from the
// store; otherwise the journal of writes it may have missed is replayed), builds the compound
// indexes of a store written before they existed (once) and reconciles the tenants-document
// records.
func (s *Service) Start(ctx context.Context) error {
	if s.titles.Fresh {
		if err := s.rebuildTitles(ctx); err != nil {
			return err
		}
	}
	if err := s.drainTitlesErr(ctx); err != nil {
		return err
	}
	return s.buildCompound(ctx)
}

// Stop is a no-op: writes are indexed before they return.
func (s *Service) Stop(context.Context) error { return nil }

func titleOf(r *record) string {
	if v := r.values(fieldTitle); len(v) == 1 {
		if t, err := fields.Decode(v[0]); err == nil {
			s, _ := t.(string)
			return s
		}
	}
	return ""
}

// createdMsOf is the record's createdAt in epoch milliseconds (0 when unreadable).
func createdMsOf(r *record) float64 {
	if v := r.values(fieldCreatedAt); len(v) == 1 {
		if t, err := fields.Decode(v[0]); err == nil {
			f, _ := t.(float64)
			return f
		}
	}
	return 0
}

// rebuildTitles indexes the title of every published record.
func (s *Service) rebuildTitles(ctx context.Context) error {
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	b := s.titles.NewBatch()
	prefix := store.Prefix(root, "r")
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix}, func(k, v []byte) (bool, error) {
			project, coll, id := cutPath(string(k[len(prefix):]))
			r, err := decodeRecord(id, v)
			if err != nil {
				return false, err
			}
			if r.published {
				if err := b.Put(project, coll, id, titleOf(r), createdMsOf(r)); err != nil {
					return false, err
				}
			}
			if b.Size() >= 5000 {
				if err := b.Commit(); err != nil {
					return false, err
				}
			}
			return ctx.Err() == nil, ctx.Err()
		})
	})
	if err != nil {
		return err
	}
	if err := b.Commit(); err != nil {
		return err
	}
	s.titles.Fresh = false
	return s.titles.MarkComplete()
}

// drainTitles replays the title journal into the index; failures are logged and retried by
// the next write or the next start.
func (s *Service) drainTitles(ctx context.Context) {
	if err := s.drainTitlesErr(ctx); err != nil {
		s.log.Error("records: update title index", "err", err)
	}
}

func (s *Service) drainTitlesErr(ctx context.Context) error {
	s.titleMu.Lock()
	defer s.titleMu.Unlock()
	for {
		var keys [][]byte
		b := s.titles.NewBatch()
		err := s.db.View(ctx, func(txn *store.Txn) error {
			return txn.Iterate(store.IterOptions{Prefix: journalPrefix()}, func(k, v []byte) (bool, error) {
				keys = append(keys, bytes.Clone(k))
				project, coll, id := cutPath(string(v))
				r, err := getRecord(txn, project, coll, id)
				if err != nil {
					return false, err
				}
				if r == nil || !r.published {
					err = b.Delete(project, coll, id)
				} else {
					err = b.Put(project, coll, id, titleOf(r), createdMsOf(r))
				}
				if err != nil {
					return false, err
				}
				return len(keys) < 5000, nil
			})
		})
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			return nil
		}
		if err := b.Commit(); err != nil {
			return err
		}
		wb := s.db.NewBatch()
		for _, k := range keys {
			if err := wb.Delete(k); err != nil {
				wb.Cancel()
				return err
			}
		}
		if err := wb.Flush(); err != nil {
			return err
		}
	}
}

// deletePrefix removes every key below prefix, in batches.
func (s *Service) deletePrefix(ctx context.Context, prefix []byte) error {
	wb := s.db.NewBatch()
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			return true, wb.Delete(bytes.Clone(k))
		})
	})
	if err != nil {
		wb.Cancel()
		return err
	}
	return wb.Flush()
}

// dropCollection removes a deleted collection's records, indexes, counter and titles.
func (s *Service) dropCollection(ctx context.Context, project, coll string) error {
	defer s.invalidate(nil)
	s.titleMu.Lock()
	b := s.titles.NewBatch()
	err := b.DeleteCollection(project, coll)
	if err == nil {
		err = s.deletePrefix(ctx, recPrefix(project, coll))
	}
	if err == nil {
		err = b.Commit()
	}
	s.titleMu.Unlock()
	if err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, idxCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, compoundCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, groupCollPrefix(project, coll)); err != nil {
		return err
	}
	return s.db.Update(ctx, func(txn *store.Txn) error { return txn.Delete(countKey(project, coll)) })
}

// rebuildCollection re-derives every stored record of a collection after its fields changed:
// projections, index entries and the counter. Queries during the rebuild may miss records.
func (s *Service) rebuildCollection(ctx context.Context, project, coll string) error {
	defer s.invalidate(nil)
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, idxCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, compoundCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.deletePrefix(ctx, groupCollPrefix(project, coll)); err != nil {
		return err
	}
	if err := s.db.Update(ctx, func(txn *store.Txn) error { return txn.Delete(countKey(project, coll)) }); err != nil {
		return err
	}
	var after []byte
	for {
		type item struct {
			id  string
			raw []byte
		}
		var chunk []item
		err := s.db.View(ctx, func(txn *store.Txn) error {
			return txn.Iterate(store.IterOptions{Prefix: recPrefix(project, coll), Start: after}, func(k, v []byte) (bool, error) {
				if after != nil && bytes.Equal(k, after) {
					return true, nil
				}
				chunk = append(chunk, item{id: store.LastPart(k), raw: v})
				after = bytes.Clone(k)
				return len(chunk) < 500, nil
			})
		})
		if err != nil || len(chunk) == 0 {
			return err
		}
		err = s.db.Update(ctx, func(txn *store.Txn) error {
			w := newTxWriter(txn)
			for _, it := range chunk {
				old, err := decodeRecord(it.id, it.raw)
				if err != nil {
					return err
				}
				c, u := old.times()
				rec := buildRecord(sch, it.id, old.published, old.data(), c, u)
				if err := txn.Set(recKey(project, coll, it.id), encodeRecord(rec)); err != nil {
					return err
				}
				if rec.published {
					if err := w.index(project, coll, sch, rec, true); err != nil {
						return err
					}
				}
				if err := w.journal(project, coll, it.id); err != nil {
					return err
				}
			}
			return w.flush()
		})
		if err != nil {
			return err
		}
	}
}
