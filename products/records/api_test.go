package records_test

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
)

type listBody struct {
	Items      []map[string]any `json:"items"`
	Pagination struct {
		NextCursor *string `json:"nextCursor"`
	} `json:"pagination"`
}

func list(t *testing.T, h *edgetest.Harness, key, path string) listBody {
	t.Helper()
	r := h.Do("GET", path, nil, "X-API-Key", key)
	if r.Status != 200 {
		t.Fatalf("GET %s = %d %s", path, r.Status, r.Body)
	}
	var b listBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, r.Body)
	}
	return b
}

func ids(b listBody) []string {
	out := []string{}
	for _, it := range b.Items {
		out = append(out, it["id"].(string))
	}
	return out
}

func TestErrors(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	h.Run(t, []edgetest.Scenario{
		{Name: "no key", Method: "GET", Path: posts + "/records", Status: 401, Code: "-"},
		{Name: "key without records product", Method: "GET", Path: posts + "/records", Key: "pk_live_demo_forms", Status: 403, Code: "FORBIDDEN"},
		{Name: "unknown project", Method: "GET", Path: "/records/projects/nope/collections/posts/records", Key: pk, Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "key of another project", Method: "GET", Path: posts + "/records", Key: "pk_live_other_web", Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "key of another org", Method: "GET", Path: posts + "/records/post-1", Key: "pk_live_beta_org", Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "another org definition", Method: "GET", Path: posts, Key: "pk_live_beta_org", Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "unknown collection", Method: "GET", Path: base + "/nope/records", Key: pk, Status: 404, Code: "COLLECTION_NOT_FOUND"},
		{Name: "non-public collection, publishable", Method: "GET", Path: base + "/internal/records", Key: pk, Status: 404, Code: "COLLECTION_NOT_FOUND"},
		{Name: "non-public definition, publishable", Method: "GET", Path: base + "/internal", Key: pk, Status: 404, Code: "COLLECTION_NOT_FOUND"},
		{Name: "non-public collection, secret", Method: "GET", Path: base + "/internal/records", Key: sk, Status: 200},
		{Name: "unknown record", Method: "GET", Path: posts + "/records/nope", Key: pk, Status: 404, Code: "RECORD_NOT_FOUND"},
		{Name: "unpublished record", Method: "GET", Path: posts + "/records/post-6", Key: pk, Status: 404, Code: "RECORD_NOT_FOUND"},
		{Name: "unpublished record, secret", Method: "GET", Path: posts + "/records/post-6", Key: sk, Status: 404, Code: "RECORD_NOT_FOUND"},
		{Name: "private filter", Method: "GET", Path: posts + "/records?filter=internalNote:eq:x", Key: pk, Status: 400, Code: "PRIVATE_FIELD_NOT_QUERYABLE"},
		{Name: "private sort", Method: "GET", Path: posts + "/records?sort=-internalNote", Key: pk, Status: 400, Code: "PRIVATE_FIELD_NOT_QUERYABLE"},
		{Name: "private groupBy", Method: "GET", Path: posts + "/aggregate?groupBy=internalNote", Key: pk, Status: 400, Code: "PRIVATE_FIELD_NOT_QUERYABLE"},
		{Name: "private filter, secret", Method: "GET", Path: posts + "/records?filter=internalNote:exists:true&sort=internalNote", Key: sk, Status: 200},
		{Name: "unknown filter field", Method: "GET", Path: posts + "/records?filter=nope:eq:1", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "unknown operator", Method: "GET", Path: posts + "/records?filter=views:like:1", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "malformed filter", Method: "GET", Path: posts + "/records?filter=views", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter with text", Method: "GET", Path: posts + "/records?filter=views:gte:many", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "date filter with text", Method: "GET", Path: posts + "/records?filter=day:gte:soon", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "unsortable array", Method: "GET", Path: posts + "/records?sort=tags", Key: pk, Status: 400, Code: "INVALID_SORT"},
		{Name: "unknown sort", Method: "GET", Path: posts + "/records?sort=nope", Key: pk, Status: 400, Code: "INVALID_SORT"},
		{Name: "limit 0", Method: "GET", Path: posts + "/records?limit=0", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "limit 101", Method: "GET", Path: posts + "/records?limit=101", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "limit text", Method: "GET", Path: posts + "/records?limit=ten", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "limit 100", Method: "GET", Path: posts + "/records?limit=100", Key: pk, Status: 200},
		{Name: "forged cursor", Method: "GET", Path: posts + "/records?cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", Key: pk, Status: 400, Code: "INVALID_CURSOR"},
		{Name: "garbage cursor", Method: "GET", Path: posts + "/records?cursor=%25%25", Key: pk, Status: 400, Code: "INVALID_CURSOR"},
		{Name: "populate non-relation", Method: "GET", Path: posts + "/records?populate=title", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "fields unknown", Method: "GET", Path: posts + "/records?fields=nope", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "fields private, publishable", Method: "GET", Path: posts + "/records?fields=internalNote", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "groupBy and distinct", Method: "GET", Path: posts + "/aggregate?groupBy=category&distinct=category", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "groupBy unknown", Method: "GET", Path: posts + "/aggregate?groupBy=nope", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "aggregate bad filter", Method: "GET", Path: posts + "/aggregate?filter=nope:eq:1", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		// Non-finite numbers parse as floats but are no number a record can hold.
		{Name: "number filter NaN", Method: "GET", Path: posts + "/records?filter=views:gte:NaN", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter nan", Method: "GET", Path: posts + "/records?filter=views:eq:nan", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter Inf", Method: "GET", Path: posts + "/records?filter=views:lte:Inf", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter +Inf", Method: "GET", Path: posts + "/records?filter=views:lt:%2BInf", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter -Infinity", Method: "GET", Path: posts + "/records?filter=views:gt:-Infinity", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter 1e999", Method: "GET", Path: posts + "/records?filter=views:gte:1e999", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter -1e999", Method: "GET", Path: posts + "/records?filter=views:lte:-1e999", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number in-list with NaN", Method: "GET", Path: posts + "/records?filter=views:in:3,NaN", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number nin-list with infinity", Method: "GET", Path: posts + "/records?filter=views:nin:infinity,3", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "aggregate NaN filter", Method: "GET", Path: posts + "/aggregate?filter=views:gte:NaN", Key: pk, Status: 400, Code: "INVALID_FILTER"},
		{Name: "number filter finite exponent", Method: "GET", Path: posts + "/records?filter=views:gte:1e2", Key: pk, Status: 200},
		// A present but empty groupBy or distinct is a mistake, not a count.
		{Name: "empty distinct", Method: "GET", Path: posts + "/aggregate?distinct=", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "bare distinct", Method: "GET", Path: posts + "/aggregate?distinct", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "empty distinct with filter", Method: "GET", Path: posts + "/aggregate?filter=category:eq:news&distinct=", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "empty groupBy", Method: "GET", Path: posts + "/aggregate?groupBy=", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "distinct", Method: "GET", Path: posts + "/aggregate?distinct=category", Key: pk, Status: 200},
		// A q without a letter or digit searches for nothing; it used to answer every record.
		{Name: "q star", Method: "GET", Path: posts + "/records?q=*", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "q punctuation", Method: "GET", Path: posts + "/records?q=%21%3F%25-", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "q spaces", Method: "GET", Path: posts + "/records?q=%20%20", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "q star with a sort", Method: "GET", Path: posts + "/records?q=*&sort=-views", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "q star aggregate", Method: "GET", Path: posts + "/aggregate?q=*", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "q star groupBy", Method: "GET", Path: posts + "/aggregate?q=*&groupBy=category", Key: pk, Status: 400, Code: "VALIDATION_FAILED"},
		{Name: "q with a digit", Method: "GET", Path: posts + "/records?q=*3*", Key: pk, Status: 200},
		{Name: "q non-ASCII letter", Method: "GET", Path: posts + "/records?q=%C3%A9", Key: pk, Status: 200},
		{Name: "q empty", Method: "GET", Path: posts + "/records?q=", Key: pk, Status: 200},
		{Name: "aggregate other project", Method: "GET", Path: posts + "/aggregate", Key: "pk_live_other_web", Status: 404, Code: "PROJECT_NOT_FOUND"},
		{Name: "preflight", Method: "OPTIONS", Path: posts + "/records", Status: 204},
	})
}

func TestCursorOfAnotherQuery(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	b := list(t, h, pk, posts+"/records?limit=1&sort=views")
	if b.Pagination.NextCursor == nil {
		t.Fatal("no next cursor")
	}
	cur := url.QueryEscape(*b.Pagination.NextCursor)
	for _, path := range []string{
		posts + "/records?limit=1&sort=-views&cursor=" + cur,
		posts + "/records?limit=1&sort=views&filter=views:gte:1&cursor=" + cur,
		authors + "/records?limit=1&sort=id&cursor=" + cur,
	} {
		r := h.Do("GET", path, nil, "X-API-Key", pk)
		if r.Status != 400 || r.Code() != "INVALID_CURSOR" {
			t.Errorf("GET %s = %d %s, want 400 INVALID_CURSOR", path, r.Status, r.Body)
		}
	}
	r := h.Do("GET", posts+"/records?limit=1&sort=views&cursor="+cur, nil, "X-API-Key", sk)
	if r.Status != 400 {
		t.Errorf("publishable cursor with a secret key = %d, want 400", r.Status)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	cases := []struct {
		name, query string
		key         string
		want        []string
	}{
		{"default order", "", pk, []string{"post-1", "post-2", "post-3", "post-4", "post-5"}},
		{"eq select", "filter=category:eq:news", pk, []string{"post-1", "post-5"}},
		{"in", "filter=category:in:news,reviews&sort=id", pk, []string{"post-1", "post-4", "post-5"}},
		{"nin", "filter=category:nin:news,reviews", pk, []string{"post-2", "post-3"}},
		{"ne", "filter=category:ne:guides&sort=-id", pk, []string{"post-5", "post-4", "post-1"}},
		{"gte lte numbers", "filter=views:gte:9&filter=views:lte:75&sort=views", pk, []string{"post-5", "post-4", "post-3"}},
		{"gt lt", "filter=views:gt:9&filter=views:lt:120&sort=-views", pk, []string{"post-3", "post-4"}},
		{"numbers not strings", "filter=views:gte:100", pk, []string{"post-2"}},
		{"array membership", "filter=tags:eq:edge&sort=id", pk, []string{"post-2", "post-3", "post-4"}},
		{"array in", "filter=tags:in:wasm,go&sort=id", pk, []string{"post-1", "post-2", "post-3"}},
		{"array nin", "filter=tags:nin:edge&sort=id", pk, []string{"post-1", "post-5"}},
		{"exists", "filter=author:exists:true&sort=id", pk, []string{"post-1", "post-2", "post-3", "post-4"}},
		{"not exists", "filter=author:exists:false", pk, []string{"post-5"}},
		{"dates", "filter=day:lt:2026-01-02", pk, []string{"post-2"}},
		{"date rfc3339", "filter=day:gte:2026-01-02T00:00:00Z", pk, []string{"post-1"}},
		{"relation eq", "filter=author:eq:au-1&sort=-id", pk, []string{"post-3", "post-1"}},
		{"id in", "filter=id:in:post-2,post-4", pk, []string{"post-2", "post-4"}},
		{"sort desc", "sort=-views", pk, []string{"post-2", "post-3", "post-4", "post-5", "post-1"}},
		{"multi sort", "sort=category,-views", pk, []string{"post-2", "post-3", "post-5", "post-1", "post-4"}},
		{"sort nulls first", "sort=day,id", pk, []string{"post-3", "post-4", "post-5", "post-2", "post-1"}},
		{"q prefix", "q=hel", pk, []string{"post-1", "post-5"}},
		{"q case", "q=WASM", pk, []string{"post-3"}},
		{"q two words", "q=hel%20wor", pk, []string{"post-1"}},
		{"q with filter and sort", "q=hello&filter=views:gte:5&sort=-views", pk, []string{"post-5"}},
		{"q nothing", "q=zzz", pk, []string{}},
		{"comma and colon in value", "filter=title:eq:" + url.QueryEscape("Getting started%2C with: Gatehouse"), pk, []string{"post-2"}},
		{"comma in value, in", "filter=title:in:" + url.QueryEscape("Getting started%2C with: Gatehouse,Hello world") + "&sort=id", pk, []string{"post-1", "post-2"}},
		{"private filter secret", "filter=internalNote:eq:secret-3", sk, []string{"post-3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := list(t, h, tc.key, posts+"/records?"+tc.query)
			if got := ids(b); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("GET records?%s = %v, want %v", tc.query, got, tc.want)
			}
		})
	}
}

func TestPrivateFieldsAndProjection(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	r := h.Do("GET", posts+"/records?limit=100", nil, "X-API-Key", pk)
	if strings.Contains(string(r.Body), "internalNote") || strings.Contains(string(r.Body), "secret-3") {
		t.Errorf("publishable list leaks a private field: %s", r.Body)
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("publishable read without CORS header")
	}
	r = h.Do("GET", posts+"/records/post-3", nil, "X-API-Key", sk)
	if !strings.Contains(string(r.Body), `"internalNote":"secret-3"`) {
		t.Errorf("secret read lacks the private field: %s", r.Body)
	}
	r = h.Do("GET", posts+"/records/post-1?populate=author", nil, "X-API-Key", pk)
	if strings.Contains(string(r.Body), "ada@acme.test") {
		t.Errorf("populated author leaks a private field: %s", r.Body)
	}
	r = h.Do("GET", posts, nil, "X-API-Key", pk)
	if r.Status != 200 || strings.Contains(string(r.Body), "internalNote") || !strings.Contains(string(r.Body), `"name":"category"`) {
		t.Errorf("definition = %d %s", r.Status, r.Body)
	}
	r = h.Do("GET", posts, nil, "X-API-Key", sk)
	if !strings.Contains(string(r.Body), "internalNote") {
		t.Errorf("secret definition lacks the private field: %s", r.Body)
	}
}

func TestFieldsAndPopulate(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	r := h.Do("GET", posts+"/records/post-1?fields=title,views", nil, "X-API-Key", pk)
	if got := string(r.Body); got != `{"id":"post-1","title":"Hello world","views":3}` {
		t.Errorf("fields=title,views = %s", got)
	}
	r = h.Do("GET", posts+"/records/post-2?populate=*&fields=title,author.title,related.views", nil, "X-API-Key", pk)
	want := `{"id":"post-2","title":"Getting started, with: Gatehouse","author":{"id":"au-2","title":"Grace Hopper"},"related":[{"id":"post-1","views":3},{"id":"post-3","views":75}]}`
	if got := string(r.Body); got != want {
		t.Errorf("populate=* = %s\nwant %s", got, want)
	}
	// au-3 is unpublished: a single relation populates as null.
	r = h.Do("GET", posts+"/records/post-4?populate=author&fields=author", nil, "X-API-Key", pk)
	if got := string(r.Body); got != `{"id":"post-4","author":null}` {
		t.Errorf("unpublished relation = %s", got)
	}
	// Without populate a relation is a reference.
	r = h.Do("GET", posts+"/records/post-4?fields=author", nil, "X-API-Key", pk)
	if got := string(r.Body); got != `{"id":"post-4","author":"au-3"}` {
		t.Errorf("reference = %s", got)
	}
	b := list(t, h, pk, posts+"/records?populate=related&fields=related&filter=id:eq:post-2")
	rel := b.Items[0]["related"].([]any)
	if len(rel) != 2 || rel[0].(map[string]any)["title"] != "Hello world" {
		t.Errorf("many relation = %v", rel)
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	for _, q := range []string{"sort=views", "sort=-views", "sort=id", "sort=-id", "sort=category,-views", "", "filter=tags:eq:edge&sort=-day", "q=e"} {
		all := ids(list(t, h, pk, posts+"/records?limit=100&"+q))
		var paged []string
		path := posts + "/records?limit=2&" + q
		for i := 0; i < 10; i++ {
			b := list(t, h, pk, path)
			paged = append(paged, ids(b)...)
			if b.Pagination.NextCursor == nil {
				break
			}
			path = posts + "/records?limit=2&" + q + "&cursor=" + url.QueryEscape(*b.Pagination.NextCursor)
		}
		if !reflect.DeepEqual(paged, all) {
			t.Errorf("%s: pages %v, want %v", q, paged, all)
		}
	}
	// A record added before the cursor's position does not shift later pages.
	b := list(t, h, pk, posts+"/records?limit=2&sort=id")
	r := h.Admin("POST", "/projects/demo/collections/posts/records", map[string]any{"id": "post-0", "data": map[string]any{"title": "Zero"}})
	if r.Status != 201 {
		t.Fatalf("create = %d %s", r.Status, r.Body)
	}
	next := list(t, h, pk, posts+"/records?limit=2&sort=id&cursor="+url.QueryEscape(*b.Pagination.NextCursor))
	if got := ids(next); !reflect.DeepEqual(got, []string{"post-3", "post-4"}) {
		t.Errorf("page after insert = %v", got)
	}
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	cases := []struct{ query, want string }{
		{"", `{"total":5}`},
		{"count=true", `{"total":5}`},
		{"filter=category:eq:news", `{"total":2}`},
		{"q=hello", `{"total":2}`},
		{"groupBy=category", `{"groups":{"guides":2,"news":2,"reviews":1}}`},
		{"groupBy=tags", `{"groups":{"edge":3,"go":2,"wasm":1}}`},
		{"groupBy=tags&filter=views:gte:50", `{"groups":{"edge":2,"go":1,"wasm":1}}`},
		{"groupBy=category&q=hel", `{"groups":{"news":2}}`},
		{"distinct=category", `{"values":["guides","news","reviews"]}`},
		{"distinct=views&filter=category:eq:guides", `{"values":[75,120]}`},
		{"distinct=day", `{"values":["2026-01-01T00:00:00.000Z","2026-01-03T00:00:00.000Z"]}`},
	}
	for _, tc := range cases {
		r := h.Do("GET", posts+"/aggregate?"+tc.query, nil, "X-API-Key", pk)
		if r.Status != 200 || string(r.Body) != tc.want {
			t.Errorf("aggregate?%s = %d %s, want %s", tc.query, r.Status, r.Body, tc.want)
		}
	}
}
