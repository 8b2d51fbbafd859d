package records

import (
	"bytes"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

var now0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func testCollection() Collection {
	return Collection{Name: "c", Public: true, Fields: []CollectionField{
		{Name: "title", Type: "text"}, {Name: "n", Type: "number"}, {Name: "secret", Type: "text", Private: true},
		{Name: "tags", Type: "multiselect", Options: []string{"a", "b"}}, {Name: "meta", Type: "json"},
	}}
}

func TestStoredRecordRoundTrip(t *testing.T) {
	t.Parallel()
	s := compileSchema("p", testCollection())
	r := buildRecord(s, "r1", true, map[string]any{"title": "Hi \"you\"", "n": 2.5, "secret": "s", "tags": []any{"a", "b", "a"}, "meta": map[string]any{"k": 1}}, now0, now0)
	got, err := decodeRecord("r1", encodeRecord(r))
	if err != nil {
		t.Fatal(err)
	}
	wantPub := `{"id":"r1","title":"Hi \"you\"","n":2.5,"tags":["a","b","a"],"meta":{"k":1},"createdAt":"2026-11-22T12:00:00.000Z","updatedAt":"2026-11-22T12:00:00.000Z"}`
	if pub := got.json(false); string(pub) != wantPub {
		t.Errorf("pub = %s\nwant %s", pub, wantPub)
	}
	if sec := got.json(true); !bytes.Contains(sec, []byte(`"secret":"s"`)) {
		t.Errorf("sec = %s", sec)
	}
	// A value of format 1 (projections stored beside the segments) still reads the same.
	v2 := encodeRecord(r)
	v1 := append([]byte{formatV1}, v2[1:]...)
	v1 = putBytes(putBytes(v1, got.json(false)), got.json(true))
	old, err := decodeRecord("r1", v1)
	if err != nil {
		t.Fatalf("format 1: %v", err)
	}
	if string(old.json(false)) != wantPub || !bytes.Equal(old.json(true), got.json(true)) || old.published != r.published {
		t.Errorf("format 1 record = %s / %s", old.json(false), old.json(true))
	}
	if n := len(got.values("tags")); n != 2 {
		t.Errorf("tags index values = %d, want 2 (deduplicated)", n)
	}
	if got.values("meta") != nil {
		t.Errorf("json field indexed")
	}
	if d := got.data(); d["title"] != "Hi \"you\"" || d["n"] != 2.5 {
		t.Errorf("data() = %v", d)
	}
}

// A title journal entry carries what the title index needs of the version written (none for a
// deletion or an unpublished version) and the createdAt of the version replaced; entries of
// the earlier format (the record's path, then perhaps a 0 byte and that createdAt) still parse.
func TestJournalEntryRoundTrip(t *testing.T) {
	t.Parallel()
	s := compileSchema("p", testCollection())
	earlier := buildRecord(s, "r1", true, map[string]any{"title": "old"}, now0.Add(-time.Hour), now0)
	pub := buildRecord(s, "r1", true, map[string]any{"title": "Zebra \x00 ünïcode/x"}, now0, now0)
	hidden := buildRecord(s, "r1", false, map[string]any{"title": "hidden"}, now0, now0)
	ms, prevMs := float64(now0.UnixMilli()), float64(now0.Add(-time.Hour).UnixMilli())
	for _, tc := range []struct {
		name string
		v    []byte
		want journalRec
	}{
		{"create", journalEntry("p", "c", "r1", nil, pub), journalRec{project: "p", coll: "c", id: "r1", carried: true, indexed: true, createdMs: ms, title: "Zebra \x00 ünïcode/x"}},
		{"replace", journalEntry("p", "c", "r1", earlier, pub), journalRec{project: "p", coll: "c", id: "r1", prevMs: prevMs, hasPrev: true, carried: true, indexed: true, createdMs: ms, title: "Zebra \x00 ünïcode/x"}},
		{"unpublish", journalEntry("p", "c", "r1", earlier, hidden), journalRec{project: "p", coll: "c", id: "r1", prevMs: prevMs, hasPrev: true, carried: true}},
		{"delete", journalEntry("p", "c", "r1", earlier, nil), journalRec{project: "p", coll: "c", id: "r1", prevMs: prevMs, hasPrev: true, carried: true}},
		{"earlier format", []byte("p/c/r1"), journalRec{project: "p", coll: "c", id: "r1"}},
		{"earlier format, replace", []byte("p/c/r1\x001700000000000"), journalRec{project: "p", coll: "c", id: "r1", prevMs: 1700000000000, hasPrev: true}},
	} {
		if got := parseJournalEntry(tc.v); got != tc.want {
			t.Errorf("%s: parseJournalEntry(%q) = %+v, want %+v", tc.name, tc.v, got, tc.want)
		}
	}
}

// TestAppendValues: a field's encodings appended to a record's shared slice, arrays deduped by
// comparison when small and by a set past smallArray elements, non-strings dropped from arrays.
func TestAppendValues(t *testing.T) {
	t.Parallel()
	many := make([]any, 0, 3*smallArray)
	var manyWant [][]byte
	for i := range 3 * smallArray {
		s := string(rune('a' + i%(2*smallArray)))
		many = append(many, s)
		if i < 2*smallArray {
			manyWant = append(manyWant, fields.String(s))
		}
	}
	tags := &Field{Name: "tags", Type: "multiselect", Array: true, Indexed: true}
	for _, c := range []struct {
		name string
		f    *Field
		v    any
		want [][]byte
		ok   bool
	}{
		{"scalar", &Field{Name: "n", Type: "number", Indexed: true}, 2.5, [][]byte{fields.Number(2.5)}, true},
		{"null", &Field{Name: "n", Type: "number", Indexed: true}, nil, [][]byte{fields.Null()}, true},
		{"json", &Field{Name: "m", Type: "json"}, map[string]any{"a": 1.0}, nil, false},
		{"empty array", tags, []any{}, nil, true},
		{"small array", tags, []any{"b", "a", "b", 3.0, "a", map[string]any{}}, [][]byte{fields.String("b"), fields.String("a")}, true},
		{"large array", tags, many, manyWant, true},
	} {
		dst := [][]byte{fields.Null()}
		got, ok := appendValues(dst, c.f, c.v)
		if ok != c.ok || len(got) != 1+len(c.want) {
			t.Fatalf("%s: %d encodings, ok %v; want %d, %v", c.name, len(got)-1, ok, len(c.want), c.ok)
		}
		for i, w := range c.want {
			if !bytes.Equal(got[1+i], w) {
				t.Errorf("%s: encoding %d = %q, want %q", c.name, i, got[1+i], w)
			}
		}
	}
}
