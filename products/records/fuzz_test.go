package records_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"views:gte:3", "category:in:a,b", "title:eq:a%2Cb:c", "x:exists", "x", ":eq:", "a:in:%zz", "tags:nin:,,",
		"views:gte:NaN", "views:in:Inf,-Infinity", "views:eq:1e999", "views:lt:%2BInf"} {
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

// FuzzListQuery sends arbitrary filter, sort and page positions (what a checked cursor hands
// the service) through the whole query path: every input is a page or a 4xx error, never a
// crash; a page is never the answer to a
// non-finite number in a filter on the number field views, or to a q without a letter or digit.
func FuzzListQuery(f *testing.F) {
	f.Add("views:gte:3", "-views", "", "hel")
	f.Add("tags:in:go,edge", "category,-views", "AQEJA8AIAAAAAAAAcG9zdC0xd8M2tKJa-KP88SOgCMCR8A", "")
	f.Add("day:lt:2026-01-02", "day", "AAAA", "x y")
	f.Add("views:gte:NaN", "", "", "")
	f.Add("views:in:1,+Inf", "-views", "", "")
	f.Add("views:lte:-Infinity", "views", "", "hel")
	f.Add("views:gt:1e999", "", "", "")
	f.Add("views:nin:-1e999,3", "", "", "")
	f.Add("", "", "", "*")
	f.Add("category:eq:news", "-views", "", "!?")
	f.Add("", "views", "", "  ")
	h, svc := newHarness(f)
	_ = h
	// Real positions of two queries, for the fuzzer to vary.
	for _, q := range []records.Query{{Sort: "-views"}, {Filters: []string{"views:gte:3"}, Sort: "category,-views"}} {
		q.Project, q.Collection, q.Limit = "demo", "posts", 1
		page, err := svc.List(context.Background(), q)
		if err != nil || page.Next == nil {
			f.Fatalf("List(%+v) = next %x, %v; want a next page", q, page.Next, err)
		}
		filter := ""
		if len(q.Filters) > 0 {
			filter = q.Filters[0]
		}
		f.Add(filter, q.Sort, string(page.Next), "")
	}
	f.Fuzz(func(t *testing.T, filter, sort, after, q string) {
		_, err := svc.List(context.Background(), records.Query{Project: "demo", Collection: "posts",
			Filters: []string{filter}, Sort: sort, After: []byte(after), Q: q, Limit: 3})
		if err != nil {
			if e := asAPI(err); e == nil || e.Status >= 500 {
				t.Fatalf("List(filter=%q sort=%q after=%q) = %v", filter, sort, after, err)
			}
			return
		}
		checkAccepted(t, filter, q, true)
	})
}

// checkAccepted fails when a query that was answered breaks an input rule: every value of a
// filter on the number field views is a finite number, and a q (present when hasQ) that is
// not empty has a letter or a digit.
func checkAccepted(t *testing.T, filter, q string, hasQ bool) {
	t.Helper()
	if hasQ && q != "" && len(title.Words(q)) == 0 {
		t.Fatalf("q=%q without a letter or digit was answered", q)
	}
	field, op, vals, err := records.ParseFilter(filter)
	if err != nil || field != "views" || op == "exists" {
		return
	}
	for _, v := range vals {
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			t.Fatalf("filter %q with the value %q was answered", filter, v)
		}
	}
}

// FuzzQueryParams sends arbitrary filter, q, groupBy and distinct parameters to the list and
// aggregate routes over HTTP. present says which of q (1), groupBy (2) and distinct (4) are
// sent even when empty, and 8 picks the aggregate route. Every answer is 200 or 400 with an
// error code in the envelope, never a 5xx; a 200 respects checkAccepted and never answers a
// groupBy or distinct that is present but empty.
func FuzzQueryParams(f *testing.F) {
	f.Add("views:gte:NaN", "", "", "", uint8(8))
	f.Add("views:lte:Inf", "", "", "", uint8(0))
	f.Add("views:in:3,-Infinity", "hello", "", "", uint8(1))
	f.Add("views:gt:1e999", "", "category", "", uint8(10))
	f.Add("", "", "", "", uint8(12))
	f.Add("category:eq:news", "", "", "", uint8(12))
	f.Add("", "", "", "", uint8(10))
	f.Add("", "*", "", "", uint8(1))
	f.Add("", "*", "category", "", uint8(11))
	f.Add("", " - ", "", "category", uint8(13))
	f.Add("views:gte:9", "hel", "tags", "", uint8(11))
	f.Add("", "", "", "category", uint8(12))
	h, _ := newHarness(f)
	f.Fuzz(func(t *testing.T, filter, q, groupBy, distinct string, present uint8) {
		var params []string
		add := func(name, v string, bit uint8) {
			if v != "" || present&bit != 0 {
				params = append(params, name+"="+url.QueryEscape(v))
			}
		}
		if filter != "" {
			params = append(params, "filter="+url.QueryEscape(filter))
		}
		add("q", q, 1)
		route := "/records"
		if present&8 != 0 {
			route = "/aggregate"
			add("groupBy", groupBy, 2)
			add("distinct", distinct, 4)
		}
		path := posts + route + "?" + strings.Join(params, "&")
		if len(path) > 2000 {
			t.Skip("URL longer than servers accept")
		}
		req, err := http.NewRequest("GET", h.URL+path, nil)
		if err != nil {
			t.Skip(err)
		}
		req.Header.Set("X-API-Key", pk)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			var env struct {
				Error string `json:"error"`
			}
			if resp.StatusCode != 400 || json.Unmarshal(body, &env) != nil || env.Error == "" {
				t.Fatalf("GET %s = %d %s, want 200 or 400 with an error code", path, resp.StatusCode, body)
			}
			return
		}
		checkAccepted(t, filter, q, true)
		if route == "/aggregate" && (groupBy == "" && present&2 != 0 || distinct == "" && present&4 != 0) {
			t.Fatalf("GET %s answered an empty groupBy or distinct: %s", path, body)
		}
	})
}
