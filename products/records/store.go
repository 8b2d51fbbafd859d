package records

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Key layout. Everything the product stores lives below "records/".
//
//	records/r/<project>/<collection>/<id>           -> stored record (encodeRecord)
//	records/i/<project>/<collection>/<field>/<v><id> -> nil: index entry of a published record
//	records/n/<project>/<collection>                -> 8-byte count of published records
//	records/g/<project>/<collection>/<field>/<v>    -> 8-byte count of published records with
//	                                                   value v (select, multiselect, boolean,
//	                                                   relation and relations fields)
//	records/s/<s>/<n or g key below records/>       -> 8-byte signed part of that count, kept
//	                                                   by the writes of the node writing stripe
//	                                                   s (counters.go); a count is its key's
//	                                                   value plus its stripes' parts
//	records/k/<s>                                   -> lease of the node that claimed stripe s
//	records/x/<project>/<collection>/<lead>/<order>/<lead v><order v><id>
//	                                                -> the record's aggregate projection:
//	                                                   compound index entry (compound.go)
//	records/v/compound                              -> set once compound entries are complete
//	records/v/aggproj                               -> set once they carry their projections
//	records/tj/<time-ordered id>                    -> title journal entry (journalEntry)
const root = "records"

func recKey(project, coll, id string) []byte { return store.Key(root, "r", project, coll, id) }

func recPrefix(project, coll string) []byte { return store.Prefix(root, "r", project, coll) }

func idxPrefix(project, coll, field string) []byte {
	return store.Prefix(root, "i", project, coll, field)
}

func idxCollPrefix(project, coll string) []byte { return store.Prefix(root, "i", project, coll) }

func countKey(project, coll string) []byte { return store.Key(root, "n", project, coll) }

func groupPrefix(project, coll, field string) []byte {
	return store.Prefix(root, "g", project, coll, field)
}

func groupCollPrefix(project, coll string) []byte { return store.Prefix(root, "g", project, coll) }

func journalPrefix() []byte { return store.Prefix(root, "tj") }

// A title journal entry names the record a write changed and, since journalCarries, carries
// what the title index needs of the version written, so that the drain does not read the
// record:
//
//	0x01 <project>/<collection>/<id> 0 <prev createdAt> 0 <createdAt> 0 <title>
//
// <prev createdAt> (epoch milliseconds) is that of the version stored before the write, empty
// when none: the title index names a record's document by its createdAt, so the drain deletes
// the earlier document by name when the createdAt changed, without searching for it.
// <createdAt> is empty when the version written has no document (deleted or unpublished), and
// <title> runs to the end. Entries of earlier versions name the record only, followed, when a
// version was stored before, by a 0 byte and its createdAt; the drain reads their record.
const journalCarries = 0x01

// journalEntry encodes a title journal entry; prev is the record stored before the write (nil
// when none), cur the record written (nil when deleted).
func journalEntry(project, coll, id string, prev, cur *record) []byte {
	var title string
	if cur != nil && cur.published {
		title = titleOf(cur)
	}
	b := make([]byte, 0, len(project)+len(coll)+len(id)+len(title)+40)
	b = append(b, journalCarries)
	b = append(append(append(append(append(b, project...), '/'), coll...), '/'), id...)
	b = append(b, 0)
	if prev != nil {
		b = strconv.AppendFloat(b, createdMsOf(prev), 'f', -1, 64)
	}
	b = append(b, 0)
	if cur != nil && cur.published {
		b = strconv.AppendFloat(b, createdMsOf(cur), 'f', -1, 64)
	}
	return append(append(b, 0), title...)
}

// journalRec is a decoded title journal entry.
type journalRec struct {
	project, coll, id string
	// prevMs is the createdAt of the version stored before the write, when hasPrev.
	prevMs  float64
	hasPrev bool
	// carried says the entry carries the version written (journalCarries): when indexed, a
	// document of title at createdMs; else none. Without it, the drain reads the record.
	carried, indexed bool
	createdMs        float64
	title            string
}

// parseJournalEntry decodes a title journal entry of either format.
func parseJournalEntry(v []byte) journalRec {
	if len(v) > 0 && v[0] == journalCarries {
		var e journalRec
		path, rest, _ := strings.Cut(string(v[1:]), "\x00")
		e.project, e.coll, e.id = cutPath(path)
		prev, rest, _ := strings.Cut(rest, "\x00")
		cur, title, ok := strings.Cut(rest, "\x00")
		e.prevMs, e.hasPrev = parseMs(prev)
		e.createdMs, e.indexed = parseMs(cur)
		e.title, e.carried = title, ok
		return e
	}
	path, prev, hasPrev := strings.Cut(string(v), "\x00")
	var e journalRec
	e.project, e.coll, e.id = cutPath(path)
	if hasPrev {
		e.prevMs, e.hasPrev = parseMs(prev)
	}
	return e
}

// parseMs reads an epoch-milliseconds number of a journal entry; ok is false when s is empty
// or unreadable.
func parseMs(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	ms, err := strconv.ParseFloat(s, 64)
	return ms, err == nil
}

// errCorrupt reports a stored value this version cannot read.
var errCorrupt = errors.New("records: corrupt stored record")

// Stored record formats: 1 kept the public and secret projections as well as the field
// segments they are spliced from (three copies of the data); 2 keeps the segments only and
// splices the projections when a record is first rendered. Both are read.
const (
	formatV1      = 1
	formatVersion = 2
)

// idxVal is one field's index encodings in a stored record.
type idxVal struct {
	name string
	encs [][]byte
	// group marks a field whose per-value counts are kept (groupable types).
	group bool
}

// segment is one field's raw JSON in a stored record.
type segment struct {
	name    string
	private bool
	raw     []byte
}

// record is a decoded stored record; its byte slices point into the stored value. A record
// may be shared by concurrent readers (the hot cache): its projections are rendered once and
// published atomically.
type record struct {
	id        string
	published bool
	idx       []idxVal
	segs      []segment
	pub, sec  atomic.Pointer[[]byte]
	// raw is the stored encoding the record was decoded from, kept by the read cache of a
	// shared store to check a cached record against the store (recReader.getShared).
	raw []byte
}

// json returns the record's public or secret projection: id, fields in definition order,
// createdAt, updatedAt, private fields only when secret.
func (r *record) json(secret bool) []byte {
	p := &r.pub
	if secret {
		p = &r.sec
	}
	if b := p.Load(); b != nil {
		return *b
	}
	b := renderFields(r, secret, nil, nil)
	p.Store(&b)
	return b
}

// values returns the index encodings of field name (nil when none).
func (r *record) values(name string) [][]byte {
	for i := range r.idx {
		if r.idx[i].name == name {
			return r.idx[i].encs
		}
	}
	return nil
}

func (r *record) segment(name string) ([]byte, bool) {
	for i := range r.segs {
		if r.segs[i].name == name {
			return r.segs[i].raw, true
		}
	}
	return nil, false
}

func putBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func encodeRecord(r *record) []byte {
	n := 16
	for _, s := range r.segs {
		n += len(s.name) + len(s.raw) + 8
	}
	for _, x := range r.idx {
		n += len(x.name) + 4
		for _, e := range x.encs {
			n += len(e) + 2
		}
	}
	b := make([]byte, 0, n)
	b = append(b, formatVersion)
	if r.published {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(r.idx)))
	for _, x := range r.idx {
		b = putBytes(b, []byte(x.name))
		if x.group {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.AppendUvarint(b, uint64(len(x.encs)))
		for _, e := range x.encs {
			b = putBytes(b, e)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(r.segs)))
	for _, s := range r.segs {
		b = putBytes(b, []byte(s.name))
		if s.private {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = putBytes(b, s.raw)
	}
	return b
}

type reader struct {
	b   []byte
	err bool
}

func (r *reader) uvarint() int {
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > uint64(len(r.b)) {
		r.err = true
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if r.err || n > len(r.b) {
		r.err = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte1() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// encodings reads a field's index encodings: a count, then each one's bytes.
func (r *reader) encodings() [][]byte {
	m := r.uvarint()
	if m > len(r.b) {
		r.err = true
		return nil
	}
	encs := make([][]byte, 0, m)
	for j := 0; j < m && !r.err; j++ {
		encs = append(encs, r.bytes())
	}
	return encs
}

// decodeRecord reads a stored value; the result's slices alias b.
func decodeRecord(id string, b []byte) (*record, error) {
	rd := &reader{b: b}
	version := rd.byte1()
	if version != formatVersion && version != formatV1 {
		return nil, errCorrupt
	}
	rec := &record{id: id, published: rd.byte1() == 1}
	n := rd.uvarint()
	if n > 4096 {
		return nil, errCorrupt
	}
	rec.idx = make([]idxVal, 0, n)
	for i := 0; i < n && !rd.err; i++ {
		name := string(rd.bytes())
		group := rd.byte1() == 1
		rec.idx = append(rec.idx, idxVal{name: name, encs: rd.encodings(), group: group})
	}
	n = rd.uvarint()
	if n > 4096 {
		return nil, errCorrupt
	}
	rec.segs = make([]segment, 0, n)
	for i := 0; i < n && !rd.err; i++ {
		name := string(rd.bytes())
		priv := rd.byte1() == 1
		rec.segs = append(rec.segs, segment{name: name, private: priv, raw: rd.bytes()})
	}
	if version == formatV1 {
		pub, sec := rd.bytes(), rd.bytes()
		rec.pub.Store(&pub)
		rec.sec.Store(&sec)
	}
	if rd.err {
		return nil, errCorrupt
	}
	return rec, nil
}

// buildRecord makes the stored form of a record from its data under schema s. Fields the schema
// does not define are dropped; missing fields are null.
func buildRecord(s *Schema, id string, published bool, data map[string]any, created, updated time.Time) *record {
	rec := &record{id: id, published: published,
		idx: make([]idxVal, 0, len(s.Fields)+2), segs: make([]segment, 0, len(s.Fields)+2)}
	ca, ua := created.UTC().Truncate(time.Millisecond), updated.UTC().Truncate(time.Millisecond)
	// encs holds every field's encodings; each field's are a slice of it with no spare room.
	encs := make([][]byte, 0, len(s.Fields)+2)
	encs = append(encs, encodeTime(ca), encodeTime(ua))
	rec.idx = append(rec.idx, idxVal{name: fieldCreatedAt, encs: encs[0:1:1]},
		idxVal{name: fieldUpdatedAt, encs: encs[1:2:2]})
	for _, f := range s.Fields {
		v := data[f.Name]
		raw := []byte("null")
		if f.Array {
			raw = []byte("[]") // array fields are arrays, empty when unset
		}
		if v != nil {
			if b, err := json.Marshal(v); err == nil {
				raw = b
			}
		}
		rec.segs = append(rec.segs, segment{name: f.Name, private: f.Private, raw: raw})
		start := len(encs)
		var ok bool
		if encs, ok = appendValues(encs, f, v); ok {
			rec.idx = append(rec.idx, idxVal{name: f.Name, encs: encs[start:len(encs):len(encs)], group: f.Groupable()})
		}
	}
	// The times' JSON strings: digits, letters and punctuation json.Marshal leaves as they are.
	cb, ub := quotedTime(ca), quotedTime(ua)
	rec.segs = append(rec.segs, segment{name: fieldCreatedAt, raw: cb}, segment{name: fieldUpdatedAt, raw: ub})
	return rec
}

// quotedTime is t in the interface's timestamp form, between double quotes: a JSON string.
func quotedTime(t time.Time) []byte {
	b := make([]byte, 0, len(apitime.Layout)+8)
	b = append(b, '"')
	b = t.AppendFormat(b, apitime.Layout)
	return append(b, '"')
}

// data decodes the record's fields back into a map (for rebuilds after a schema change).
func (r *record) data() map[string]any {
	out := map[string]any{}
	for _, s := range r.segs {
		if s.name == fieldCreatedAt || s.name == fieldUpdatedAt {
			continue
		}
		var v any
		if json.Unmarshal(s.raw, &v) == nil && v != nil {
			out[s.name] = v
		}
	}
	return out
}

// times returns the record's createdAt and updatedAt.
func (r *record) times() (time.Time, time.Time) {
	var c, u time.Time
	if raw, ok := r.segment(fieldCreatedAt); ok {
		var s string
		_ = json.Unmarshal(raw, &s)
		c, _ = time.Parse(time.RFC3339Nano, s)
	}
	if raw, ok := r.segment(fieldUpdatedAt); ok {
		var s string
		_ = json.Unmarshal(raw, &s)
		u, _ = time.Parse(time.RFC3339Nano, s)
	}
	return c, u
}

// readCount reads a collection's published count.
func readCount(txn *store.Txn, project, coll string) (int64, error) {
	return readCounter(txn, countKey(project, coll))
}

// cutPath splits "<project>/<collection>/<id>" (or fewer parts): the tail of a record key and a
// title journal entry.
func cutPath(p string) (project, coll, id string) {
	project, rest, _ := strings.Cut(p, "/")
	coll, id, _ = strings.Cut(rest, "/")
	return project, coll, id
}
