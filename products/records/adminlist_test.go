package records_test

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestAdminCollections(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	r := h.Admin("GET", "/projects/demo/collections", nil)
	if r.Status != 200 {
		t.Fatalf("collections = %d %s", r.Status, r.Body)
	}
	var b listBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range b.Items {
		names = append(names, it["name"].(string))
	}
	if !reflect.DeepEqual(names, []string{"authors", "internal", "posts"}) {
		t.Errorf("collection names = %v", names)
	}
	// The admin view names private fields too.
	if !strings.Contains(string(r.Body), `"name":"internalNote","type":"text","private":true`) {
		t.Errorf("private field missing: %s", r.Body)
	}
	if r := h.Admin("GET", "/projects/other/collections", nil); r.Status != 200 || string(r.Body) != `{"items":[],"pagination":{"nextCursor":null}}` {
		t.Errorf("project without collections = %d %s", r.Status, r.Body)
	}
	if r := h.Admin("GET", "/projects/nope/collections", nil); r.Status != 404 || !strings.Contains(string(r.Body), "PROJECT_NOT_FOUND") {
		t.Errorf("unknown project = %d %s", r.Status, r.Body)
	}
}

func TestAdminListRecords(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	page := func(query string) listBody {
		t.Helper()
		r := h.Admin("GET", adminPosts+"?"+query, nil)
		if r.Status != 200 {
			t.Fatalf("admin list ?%s = %d %s", query, r.Status, r.Body)
		}
		var b listBody
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	// Every record, unpublished post-6 included, with its flag and private fields, in pages.
	var got []string
	flags := map[string]any{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("pagination does not end")
		}
		q := "limit=4"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		b := page(q)
		for _, it := range b.Items {
			got = append(got, it["id"].(string))
			flags[it["id"].(string)] = it["published"]
		}
		if b.Pagination.NextCursor == nil {
			break
		}
		cursor = *b.Pagination.NextCursor
	}
	if want := []string{"post-1", "post-2", "post-3", "post-4", "post-5", "post-6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admin list = %v, want %v", got, want)
	}
	if flags["post-6"] != false || flags["post-1"] != true {
		t.Errorf("published flags = %v", flags)
	}
	if b := page("filter=" + url.QueryEscape("views:gte:100")); !reflect.DeepEqual(ids(b), []string{"post-2", "post-6"}) {
		t.Errorf("filtered admin list = %v", b.Items)
	}
	if b := page("filter=" + url.QueryEscape("internalNote:eq:ship it")); len(b.Items) != 1 || b.Items[0]["internalNote"] != "ship it" {
		t.Errorf("filter on a private field = %v", b.Items)
	}
	for _, tc := range []struct{ path, code string }{
		{adminPosts + "?cursor=bogus", "INVALID_CURSOR"},
		{adminPosts + "?filter=nope:eq:1", "INVALID_FILTER"},
		{adminPosts + "?limit=0", "VALIDATION_FAILED"},
		{"/projects/demo/collections/nope/records", "COLLECTION_NOT_FOUND"},
		{"/projects/nope/collections/posts/records", "PROJECT_NOT_FOUND"},
	} {
		if r := h.Admin("GET", tc.path, nil); r.Status < 400 || !strings.Contains(string(r.Body), tc.code) {
			t.Errorf("GET %s = %d %s, want %s", tc.path, r.Status, r.Body, tc.code)
		}
	}
	// A cursor of one filter is refused by another.
	b := page("limit=1&filter=" + url.QueryEscape("views:gte:1"))
	if r := h.Admin("GET", adminPosts+"?limit=1&cursor="+url.QueryEscape(*b.Pagination.NextCursor), nil); r.Status != 400 {
		t.Errorf("cursor reused without its filter = %d %s", r.Status, r.Body)
	}
}

// The admin list takes q and sort as the public list does, and finds drafts with them (the
// title index and the field indexes hold published records only); its cursors keep q and sort.
func TestAdminListQueryAndSort(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	list := func(query string) listBody {
		t.Helper()
		r := h.Admin("GET", adminPosts+"?"+query, nil)
		if r.Status != 200 {
			t.Fatalf("admin list ?%s = %d %s", query, r.Status, r.Body)
		}
		var b listBody
		if err := json.Unmarshal(r.Body, &b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		query string
		want  []string
	}{
		{"q=hello", []string{"post-1", "post-5", "post-6"}},
		{"q=hello&sort=-views", []string{"post-6", "post-5", "post-1"}},
		{"q=draft", []string{"post-6"}},
		{"sort=-views&limit=3", []string{"post-6", "post-2", "post-3"}},
		{"sort=category,-views", []string{"post-2", "post-3", "post-6", "post-5", "post-1", "post-4"}},
		{"q=hello&filter=" + url.QueryEscape("views:lt:100") + "&sort=views", []string{"post-1", "post-5"}},
	}
	for _, tc := range cases {
		if got := ids(list(tc.query)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("admin list ?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	// Walking -views two at a time gives the whole order, drafts in place.
	var got []string
	cursor := ""
	for pages := 0; pages < 5; pages++ {
		q := "sort=-views&limit=2"
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		b := list(q)
		got = append(got, ids(b)...)
		if b.Pagination.NextCursor == nil {
			break
		}
		cursor = *b.Pagination.NextCursor
	}
	if want := []string{"post-6", "post-2", "post-3", "post-4", "post-5", "post-1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("admin list by -views in pages = %v, want %v", got, want)
	}
	first := list("sort=-views&limit=1")
	for _, tc := range []struct{ path, code string }{
		{adminPosts + "?sort=nope", "INVALID_SORT"},
		{adminPosts + "?q=" + url.QueryEscape("!!"), "VALIDATION_FAILED"},
		// A cursor of one sort is refused by another, and a public list's by the admin list.
		{adminPosts + "?sort=views&limit=1&cursor=" + url.QueryEscape(*first.Pagination.NextCursor), "INVALID_CURSOR"},
	} {
		if r := h.Admin("GET", tc.path, nil); r.Status != 400 || !strings.Contains(string(r.Body), tc.code) {
			t.Errorf("GET %s = %d %s, want 400 %s", tc.path, r.Status, r.Body, tc.code)
		}
	}
}
