package records

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// benchPostsTenants is the posts collection of recordsbench and bench-records-writes.
const benchPostsTenants = `
orgs:
  - slug: o
    projects:
      - id: p
        collections:
          - name: authors
            public: true
            fields:
              - {name: title, type: text}
          - name: c
            public: true
            fields:
              - {name: title, type: text}
              - {name: category, type: select, options: [c0, c1, c2, c3]}
              - {name: tags, type: multiselect, options: [t0, t1, t5]}
              - {name: views, type: number}
              - {name: day, type: date}
              - {name: author, type: relation, collection: authors}
              - {name: related, type: relations, collection: c}
              - {name: internalNote, type: text, private: true}
`

// One create of the write benchmark's record (bench/writes.lua: no author, related or
// internalNote) writes, besides its counter parts and title journal entry: the record, one
// field index entry per scalar field and per array element (a null scalar too: a sort walk
// visits it; an empty array none), and one compound entry per order field under the select,
// whose projection holds only the groupable fields with a value. The test lists what each
// writes, so a change of the layout shows here.
func TestCreateKeyLayout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, _, db := openCompoundService(t, benchPostsTenants)
	_, _, err := svc.Put(ctx, "p", "c", WriteRecord{ID: "r1", Data: map[string]any{"title": "kalomine rusatovi",
		"category": "c3", "tags": []any{"t5"}, "views": 482913.0, "day": "2026-04-17"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	values := 0
	for _, prefix := range [][]byte{recPrefix("p", "c"), idxCollPrefix("p", "c"), compoundCollPrefix("p", "c")} {
		err := db.View(ctx, func(txn *store.Txn) error {
			return txn.Iterate(store.IterOptions{Prefix: prefix}, func(k, v []byte) (bool, error) {
				// records/<kind>/p/c/<field>[/<order>]/...: the kind and the field names.
				parts := strings.SplitN(string(k), string(store.Sep), 7)
				name := parts[1]
				switch parts[1] {
				case "i":
					name += " " + parts[4]
				case "x":
					name += " " + parts[4] + "/" + parts[5]
					values += len(v)
				}
				got = append(got, name)
				return true, nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(got)
	want := []string{"i author", "i category", "i createdAt", "i day", "i internalNote", "i tags", "i title",
		"i updatedAt", "i views", "r", "x category/createdAt", "x category/day", "x category/views"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("one create wrote\n%q\nwant\n%q", got, want)
	}
	// Each projection: count 1, "tags", 1 value, the encoded "t5": 13 bytes.
	if values != 3*13 {
		t.Errorf("compound values hold %d bytes, want %d", values, 3*13)
	}
}
