package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/index/fields"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

const compoundTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: c
            public: true
            fields:
              - {name: s, type: select, options: [a, b]}
              - {name: b, type: boolean}
              - {name: n, type: number}
              - {name: tags, type: multiselect, options: [x, y]}
`

func newCompoundService(t testing.TB, db *store.DB, doc string) (*Service, *tenancy.Service) {
	t.Helper()
	ctx := context.Background()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	titles, err := title.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := NewService(Options{DB: db, Tenancy: ten, Titles: titles, Now: func() time.Time { return now0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	if doc != "" {
		d, err := tenancy.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ten.Apply(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return svc, ten
}

// openCompoundService is newCompoundService over a new in-memory store, which is closed after
// the service.
func openCompoundService(t testing.TB, doc string) (*Service, *tenancy.Service, *store.DB) {
	t.Helper()
	db, err := storetest.Open(t, store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	svc, ten := newCompoundService(t, db, doc)
	return svc, ten, db
}

// compoundEntries lists the compound entries of collection p/c as "lead=v order=v id".
func compoundEntries(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	prefix := compoundCollPrefix("p", "c")
	err := db.View(context.Background(), func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			rest := k[len(prefix):]
			parts := bytes.SplitN(rest, []byte{store.Sep}, 3)
			lead, order, encs := string(parts[0]), string(parts[1]), parts[2]
			n, err := fields.Len(encs)
			if err != nil {
				return false, err
			}
			ov, id, err := fields.Split(encs[:n], encs)
			if err != nil {
				return false, err
			}
			lv, ot := fields.Text(encs[:n]), fields.Text(ov)
			if order == fieldCreatedAt {
				ot = "t"
			}
			out = append(out, lead+"="+lv+" "+order+"="+ot+" "+id)
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// checkProjections fails unless every compound entry of p/c belongs to a published record and
// carries that record's projection under the entry's lead; it returns the entries' values as
// "id lead/order: field=values..." for spot checks.
func checkProjections(t *testing.T, db *store.DB) []string {
	t.Helper()
	var out []string
	prefix := compoundCollPrefix("p", "c")
	err := db.View(context.Background(), func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: prefix}, func(k, v []byte) (bool, error) {
			parts := bytes.SplitN(k[len(prefix):], []byte{store.Sep}, 3)
			lead, order, encs := string(parts[0]), string(parts[1]), parts[2]
			n, err := fields.Len(encs)
			if err != nil {
				return false, err
			}
			_, id, err := fields.Split(encs[:n], encs)
			if err != nil {
				return false, err
			}
			r, err := getRecord(txn, "p", "c", id)
			if err != nil {
				return false, err
			}
			if r == nil || !r.published {
				t.Errorf("compound entry %s/%s of %s: no published record", lead, order, id)
				return true, nil
			}
			if want := encodeProjection(r, lead); !bytes.Equal(v, want) {
				t.Errorf("compound entry %s/%s of %s carries %x, want %x", lead, order, id, v, want)
			}
			idx, err := decodeProjection(v, nil)
			if err != nil {
				return false, err
			}
			desc := id + " " + lead + "/" + order + ":"
			for _, x := range idx {
				vals := make([]string, 0, len(x.encs))
				for _, e := range x.encs {
					vals = append(vals, fields.Text(e))
				}
				desc += " " + x.name + "=" + strings.Join(vals, ",")
			}
			out = append(out, desc)
			return true, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestCompoundMaintenance(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, ten, db := openCompoundService(t, compoundTenants)
	if !svc.compoundReady.Load() {
		t.Fatal("compoundReady is false after Start")
	}
	put := func(id string, published bool, data map[string]any) {
		t.Helper()
		if _, _, err := svc.Put(ctx, "p", "c", WriteRecord{ID: id, Published: &published, Data: data}); err != nil {
			t.Fatalf("Put(%s): %v", id, err)
		}
	}
	check := func(step string, want ...string) {
		t.Helper()
		got := compoundEntries(t, db)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: compound entries\n got %q\nwant %q", step, got, want)
		}
		checkProjections(t, db)
	}
	projOf := func(id, lead, order string) string {
		t.Helper()
		for _, d := range checkProjections(t, db) {
			if strings.HasPrefix(d, id+" "+lead+"/"+order+":") {
				return d
			}
		}
		return ""
	}
	// r2 stays as it is throughout: a select without the number, no boolean.
	put("r2", true, map[string]any{"s": "b"})
	r2 := []string{"s=b createdAt=t r2", "s=b n=null r2"}
	put("r1", true, map[string]any{"s": "a", "b": true, "n": 1, "tags": []any{"x"}})
	check("create", append([]string{"s=a createdAt=t r1", "s=a n=1 r1", "b=true createdAt=t r1", "b=true n=1 r1"}, r2...)...)
	// The projection: the groupable fields but the lead, in definition order.
	if got, want := projOf("r1", "s", "n"), "r1 s/n: b=true tags=x"; got != want {
		t.Errorf("projection after create = %q, want %q", got, want)
	}
	if got, want := projOf("r1", "b", "createdAt"), "r1 b/createdAt: s=a tags=x"; got != want {
		t.Errorf("projection after create = %q, want %q", got, want)
	}
	put("r1", true, map[string]any{"s": "b", "b": true, "n": 5, "tags": []any{"x", "y"}})
	check("replace changing the select and the number", append([]string{"s=b createdAt=t r1", "s=b n=5 r1", "b=true createdAt=t r1", "b=true n=5 r1"}, r2...)...)
	if got, want := projOf("r1", "b", "n"), "r1 b/n: s=b tags=x,y"; got != want {
		t.Errorf("projection after replace = %q, want %q", got, want)
	}
	put("r1", true, map[string]any{"s": "b", "b": true, "n": 5})
	// A field without a value is left out of the projection.
	if got, want := projOf("r1", "b", "n"), "r1 b/n: s=b"; got != want {
		t.Errorf("projection after replace dropping tags = %q, want %q", got, want)
	}
	put("r1", true, map[string]any{"b": false, "n": 5})
	check("replace dropping the select", append([]string{"b=false createdAt=t r1", "b=false n=5 r1"}, r2...)...)
	put("r1", false, map[string]any{"s": "a", "b": false, "n": 7})
	check("put unpublished", r2...)
	if _, err := svc.SetPublished(ctx, "p", "c", "r1", true); err != nil {
		t.Fatal(err)
	}
	check("publish", append([]string{"s=a createdAt=t r1", "s=a n=7 r1", "b=false createdAt=t r1", "b=false n=7 r1"}, r2...)...)
	if _, err := svc.SetPublished(ctx, "p", "c", "r1", false); err != nil {
		t.Fatal(err)
	}
	check("unpublish", r2...)
	if _, err := svc.SetPublished(ctx, "p", "c", "r1", true); err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(ctx, "p", "c", "r1"); err != nil {
		t.Fatal(err)
	}
	check("delete", r2...)
	rep, err := svc.Import(ctx, "p", "c", strings.NewReader(`{"id":"r3","data":{"s":"a","n":2}}`+"\n"))
	if err != nil || rep.Imported != 1 {
		t.Fatalf("Import = %+v, %v", rep, err)
	}
	r3 := []string{"s=a createdAt=t r3", "s=a n=2 r3"}
	check("import", append(r3, r2...)...)
	if got, want := projOf("r3", "s", "n"), "r3 s/n:"; got != want {
		t.Errorf("projection after import = %q, want %q", got, want)
	}

	// A store whose entries lack projections (written before them) gets them on start.
	err = db.Update(ctx, func(txn *store.Txn) error {
		if err := txn.Delete(projMarker()); err != nil {
			return err
		}
		return txn.Iterate(store.IterOptions{Prefix: compoundCollPrefix("p", "c"), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			return true, txn.Set(bytes.Clone(k), nil)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	svc1, _ := newCompoundService(t, db, "")
	if !svc1.projReady.Load() {
		t.Fatal("projReady is false after a rebuilding Start")
	}
	check("projections rebuilt on start", append(r3, r2...)...)

	// A store without the entries (written before compound indexes) gets them on start.
	err = db.Update(ctx, func(txn *store.Txn) error {
		if err := txn.Delete(compoundMarker()); err != nil {
			return err
		}
		return txn.Iterate(store.IterOptions{Prefix: compoundCollPrefix("p", "c"), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			return true, txn.Delete(bytes.Clone(k))
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	check("removed")
	svc2, _ := newCompoundService(t, db, "")
	if !svc2.compoundReady.Load() {
		t.Fatal("compoundReady is false after a rebuilding Start")
	}
	check("rebuilt on start", append(r3, r2...)...)

	// A schema change re-derives them: s is no longer a select, n no longer a number.
	d, err := tenancy.Parse([]byte(strings.NewReplacer("{name: s, type: select, options: [a, b]}", "{name: s, type: text}",
		"{name: n, type: number}", "{name: n, type: text}").Replace(compoundTenants)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	check("schema change")
	// Deleting the collection drops them.
	d, err = tenancy.Parse([]byte(compoundTenants))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
	check("schema change back", append(r3, r2...)...)
}

// legacyProjection is encodeProjection as versions before this one wrote it: every groupable
// field but the lead, those without a value (null, empty) too.
func legacyProjection(r *record, lead string) []byte {
	var b []byte
	n := 0
	for _, x := range r.idx {
		if x.group && x.name != lead {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	for _, x := range r.idx {
		if x.group && x.name != lead {
			b = putBytes(b, []byte(x.name))
			b = binary.AppendUvarint(b, uint64(len(x.encs)))
			for _, e := range x.encs {
				b = putBytes(b, e)
			}
		}
	}
	return b
}

// Compound entries written by earlier versions carry the fields without a value in their
// projections; aggregates answered from the compound walk are the same over those entries as
// over the ones written now, which leave them out.
func TestCompoundLegacyProjections(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, db := openCompoundService(t, compoundTenants)
	var nd strings.Builder
	for i := 0; i < 60; i++ {
		line := `{"id":"r` + strconv.Itoa(i) + `","data":{"s":"` + []string{"a", "b"}[i%2] + `","n":` + strconv.Itoa(i%7)
		switch i % 3 {
		case 0: // b and tags without a value
		case 1:
			line += `,"b":true,"tags":["x"]`
		case 2:
			line += `,"b":false,"tags":["x","y"]`
		}
		nd.WriteString(line + "}}\n")
	}
	if _, err := svc.Import(ctx, "p", "c", strings.NewReader(nd.String())); err != nil {
		t.Fatal(err)
	}
	queries := []AggregateQuery{
		{Filters: []string{"s:eq:a"}},
		{Filters: []string{"s:eq:a"}, GroupBy: "b"},
		{Filters: []string{"s:in:a,b"}, GroupBy: "tags"},
		{Filters: []string{"s:eq:a", "b:exists:false"}},
		{Filters: []string{"s:eq:a", "b:exists:true"}, GroupBy: "tags"},
		{Filters: []string{"s:eq:b", "tags:exists:false"}},
		{Filters: []string{"s:eq:b", "tags:ne:x"}, GroupBy: "b"},
		{Filters: []string{"s:eq:b", "tags:nin:y"}},
		{Filters: []string{"s:eq:a", "b:ne:true", "n:gte:2"}, GroupBy: "tags"},
		{Filters: []string{"s:eq:b"}, Distinct: "tags"},
	}
	sch, err := svc.Schema(ctx, "p", "c")
	if err != nil {
		t.Fatal(err)
	}
	answers := func() []string {
		var out []string
		for _, q := range queries {
			q.Project, q.Collection = "p", "c"
			b, err := svc.Aggregate(ctx, q)
			if err != nil {
				t.Fatalf("Aggregate(%+v): %v", q, err)
			}
			out = append(out, string(b))
		}
		return out
	}
	// Every query is answered by the compound walk, which reads the projections.
	for _, q := range queries {
		c, err := compile(sch, false, q.Filters, "", "")
		if err != nil {
			t.Fatal(err)
		}
		group := sch.field(q.GroupBy + q.Distinct)
		err = svc.view(ctx, func(rd *recReader) error {
			st, err := svc.readStats(rd, c, false)
			if p := planVisit(c, st, group); err == nil && p.access != walkCompound {
				t.Errorf("planVisit(%v) = %s, want a compound walk", q.Filters, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	now := answers()
	// Rewrite every entry's value as earlier versions wrote it.
	rewritten := 0
	err = db.Update(ctx, func(txn *store.Txn) error {
		prefix := compoundCollPrefix("p", "c")
		return txn.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			lead := string(bytes.SplitN(k[len(prefix):], []byte{store.Sep}, 2)[0])
			r, err := getRecord(txn, "p", "c", idOfEntry(t, k, prefix))
			if err != nil || r == nil {
				return false, err
			}
			old := legacyProjection(r, lead)
			if !bytes.Equal(old, encodeProjection(r, lead)) {
				rewritten++
			}
			return true, txn.Set(bytes.Clone(k), old)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if rewritten == 0 {
		t.Fatal("no entry differs in the legacy format: the test checks nothing")
	}
	if legacy := answers(); !reflect.DeepEqual(legacy, now) {
		t.Errorf("aggregates over legacy projections\n got %q\nwant %q", legacy, now)
	}
}

// idOfEntry returns the record id of a compound entry key below the collection prefix.
func idOfEntry(t *testing.T, k, prefix []byte) string {
	t.Helper()
	parts := bytes.SplitN(k[len(prefix):], []byte{store.Sep}, 3)
	encs := parts[2]
	n, err := fields.Len(encs)
	if err != nil {
		t.Fatal(err)
	}
	_, id, err := fields.Split(encs[:n], encs)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestCompoundPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, _ := openCompoundService(t, compoundTenants)
	var nd strings.Builder
	for i := 0; i < 200; i++ {
		s := []string{"a", "b"}[i%2]
		nd.WriteString(`{"id":"r` + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + `","data":{"s":"` + s + `","n":` + string(rune('0'+i%7)) + `}}` + "\n")
	}
	if _, err := svc.Import(ctx, "p", "c", strings.NewReader(nd.String())); err != nil {
		t.Fatal(err)
	}
	sch, err := svc.Schema(ctx, "p", "c")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filters []string
		sort    string
		lead    string
	}{
		{[]string{"s:eq:a"}, "-n", "s"},
		{[]string{"s:in:a,b", "n:gte:3"}, "n", "s"},
		{[]string{"b:eq:true"}, "createdAt", "b"},
		{[]string{"s:eq:a"}, "-n,createdAt", ""},
		{[]string{"s:ne:a"}, "-n", ""},
		{[]string{"tags:eq:x"}, "-n", ""},
		{[]string{"s:eq:a"}, "id", ""},
	}
	for _, tc := range cases {
		c, err := compile(sch, false, tc.filters, "", tc.sort)
		if err != nil {
			t.Fatal(err)
		}
		var p *plan
		err = svc.view(ctx, func(rd *recReader) error {
			st, err := svc.readStats(rd, c, true)
			p = planList(c, st, 5, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if p.lead != nil {
			got = p.lead.Field
		}
		if got != tc.lead {
			t.Errorf("planList(%v, sort %s): lead %q, want %q", tc.filters, tc.sort, got, tc.lead)
		}
	}
}
