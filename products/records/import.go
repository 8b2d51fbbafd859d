package records

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
)

// MaxImportLine is the longest NDJSON line an import accepts.
const MaxImportLine = 1 << 20

// importChunk is how many records one import transaction writes.
const importChunk = 500

// importChunkBytes caps the input bytes of one chunk too, so that a chunk of large records
// stays well inside the store's transaction limit (a fraction of its memtable size).
const importChunkBytes = 256 << 10

// ImportReport says what an import did. Errors lists at most the first 100 bad lines.
type ImportReport struct {
	Imported int           `json:"imported"`
	Created  int           `json:"created"`
	Updated  int           `json:"updated"`
	Failed   int           `json:"failed"`
	Errors   []ImportError `json:"errors"`
}

// ImportError is one line that was not imported.
type ImportError struct {
	Line    int    `json:"line"`
	Problem string `json:"problem"`
}

// Import reads NDJSON records (one WriteRecord a line) from r and writes them in transactions
// of importChunk records (fewer when they are large), holding one chunk in memory at a time. Bad lines are reported and
// skipped; a line over MaxImportLine stops the import (what was written stays).
func (s *Service) Import(ctx context.Context, project, coll string, r io.Reader) (ImportReport, error) {
	rep := ImportReport{Errors: []ImportError{}}
	sch, err := s.Schema(ctx, project, coll)
	if err != nil {
		return rep, err
	}
	fail := func(line int, msg string) {
		rep.Failed++
		if len(rep.Errors) < 100 {
			rep.Errors = append(rep.Errors, ImportError{Line: line, Problem: msg})
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxImportLine)
	chunk := make([]*record, 0, importChunk)
	explicit := make([]bool, 0, importChunk)
	chunkBytes := 0
	// write stores recs in one transaction, or in halves when they are more than one commit
	// takes (records with many indexed fields, or a store with small memtables).
	var write func(recs []*record, explicit []bool) error
	write = func(recs []*record, explicit []bool) error {
		var created, updated int
		var keys []string
		err := s.db.Update(ctx, func(txn *store.Txn) error {
			created, updated = 0, 0
			w := s.txWriter(txn)
			defer func() { keys = w.keys }()
			for i, rec := range recs {
				if !explicit[i] {
					old, err := w.get(project, coll, rec.id)
					if err != nil {
						return err
					}
					if old != nil {
						c, _ := old.times()
						_, u := rec.times()
						recs[i] = buildRecord(sch, rec.id, rec.published, rec.data(), c, u)
					}
				}
				old, err := w.put(project, coll, sch, recs[i])
				if err != nil {
					return err
				}
				if old == nil {
					created++
				} else {
					updated++
				}
			}
			return w.flush()
		})
		s.invalidate(keys)
		if errors.Is(err, store.ErrTooBig) && len(recs) > 1 {
			h := len(recs) / 2
			if err := write(recs[:h], explicit[:h]); err != nil {
				return err
			}
			return write(recs[h:], explicit[h:])
		}
		if err != nil {
			return err
		}
		rep.Imported += len(recs)
		rep.Created += created
		rep.Updated += updated
		return nil
	}
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if err := write(chunk, explicit); err != nil {
			return err
		}
		chunk, explicit, chunkBytes = chunk[:0], explicit[:0], 0
		s.kickTitles()
		return nil
	}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		// Each line is read as strictly as a JSON body (no duplicate keys, valid UTF-8), and a
		// problem is named without encoding/json's Go type names.
		var in WriteRecord
		var bad *strictjson.InvalidError
		if err := strictjson.Unmarshal(b, &in); errors.As(err, &bad) {
			fail(line, "not valid JSON: "+bad.Problem.Error())
			continue
		} else if err != nil {
			p := strictjson.DecodeError(err).Details[0]
			fail(line, p.Field+": "+p.Problem)
			continue
		}
		rec, probs := s.validate(sch, in)
		if probs != nil {
			fail(line, probs[0].field+": "+probs[0].msg)
			continue
		}
		chunk = append(chunk, rec)
		explicit = append(explicit, in.CreatedAt != "")
		chunkBytes += len(b)
		if len(chunk) == importChunk || chunkBytes >= importChunkBytes {
			if err := flush(); err != nil {
				return rep, err
			}
		}
		if err := ctx.Err(); err != nil {
			return rep, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			_ = flush()
			return rep, validation("body", fmt.Sprintf("line %d is longer than %d bytes", line+1, MaxImportLine))
		}
		return rep, err
	}
	return rep, flush()
}
