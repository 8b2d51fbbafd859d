package records_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/gatehouse-dev/gatehouse/products/records"
)

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"views:gte:3", "category:in:a,b", "title:eq:a%2Cb:c", "x:exists", "x", ":eq:", "a:in:%zz", "tags:nin:,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		field, op, vals, err := records.ParseFilter(raw)
		if err != nil {
			return
		}
		if field == "" || op == "" || len(vals) == 0 {
			t.Fatalf("ParseFilter(%q) = %q, %q, %q without error", raw, field, op, vals)
		}
	})
}

// FuzzListQuery sends arbitrary filter, sort and cursor values through the whole query path:
// every input is a page or a 4xx error, never a crash.
func FuzzListQuery(f *testing.F) {
	f.Add("views:gte:3", "-views", "", "hel")
	f.Add("tags:in:go,edge", "category,-views", "AQEJA8AIAAAAAAAAcG9zdC0xd8M2tKJa-KP88SOgCMCR8A", "")
	f.Add("day:lt:2026-01-02", "day", "AAAA", "x y")
	h, svc := newHarness(f)
	_ = h
	f.Fuzz(func(t *testing.T, filter, sort, cursor, q string) {
		_, err := svc.List(context.Background(), records.Query{Project: "demo", Collection: "posts",
			Filters: []string{filter}, Sort: sort, Cursor: url.QueryEscape(cursor), Q: q, Limit: 3})
		if err != nil {
			if e := asAPI(err); e == nil || e.Status >= 500 {
				t.Fatalf("List(filter=%q sort=%q cursor=%q) = %v", filter, sort, cursor, err)
			}
		}
	})
}
