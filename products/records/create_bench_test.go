package records

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/strictjson"
)

// BenchmarkCreateWork is the work of a record create before and after its commit, without HTTP
// or the store, for the record shape of bench-records-writes: reading the body (strict, one
// pass), validation and the stored record, the prepared writes, and the answer.
func BenchmarkCreateWork(b *testing.B) {
	sch := compileSchema("bench", Collection{Name: "posts", Public: true, Fields: []CollectionField{
		{Name: "title", Type: "text"},
		{Name: "category", Type: "select", Options: []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"}},
		{Name: "tags", Type: "multiselect", Options: []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}},
		{Name: "views", Type: "number"},
		{Name: "day", Type: "date"},
		{Name: "author", Type: "relation", Collection: "authors"},
		{Name: "related", Type: "relations", Collection: "posts"},
		{Name: "internalNote", Type: "text", Private: true},
	}})
	s := &Service{now: time.Now}
	body := []byte(`{"data":{"title":"rulosaze satosaka","category":"c7","tags":["t3"],"views":412345,"day":"2026-03-15"}}`)
	var in WriteRecord
	var rec *record
	var p *prepared
	steps := []struct {
		name string
		fn   func()
	}{
		{"read", func() { in = WriteRecord{}; _ = strictjson.Unmarshal(body, &in) }},
		// What reading the body cost before strictjson.Unmarshal: Check, then encoding/json.
		{"read-two-passes", func() { in = WriteRecord{}; _ = strictjson.Check(body); _ = json.Unmarshal(body, &in) }},
		{"validate", func() { rec, _ = s.validate(sch, in) }},
		{"prepare", func() { p = prepare("bench", "posts", sch, rec) }},
		{"answer", func() { _ = adminJSON(p.rec) }},
	}
	for _, st := range steps {
		st.fn()
	}
	for _, st := range steps {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st.fn()
			}
		})
	}
}
