package records_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

const adminPosts = "/projects/demo/collections/posts/records"

func TestAdminWrites(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	// The title index follows writes in the background: await it before each q.
	search := func(query string) []string {
		t.Helper()
		if err := svc.SyncTitles(context.Background()); err != nil {
			t.Fatal(err)
		}
		return ids(list(t, h, pk, posts+"/records?"+query))
	}
	total := func() string {
		return string(h.Do("GET", posts+"/aggregate", nil, "X-API-Key", pk).Body)
	}
	r := h.Admin("POST", adminPosts, map[string]any{"id": "new-1", "data": map[string]any{"title": "Brand new zebra", "views": 7, "tags": []string{"go"}}})
	if r.Status != 201 || !strings.Contains(string(r.Body), `"published":true`) {
		t.Fatalf("create = %d %s", r.Status, r.Body)
	}
	if got := total(); got != `{"total":6}` {
		t.Errorf("total after create = %s", got)
	}
	if got := search("q=zeb"); !reflect.DeepEqual(got, []string{"new-1"}) {
		t.Errorf("q after create = %v", got)
	}
	// Replace: the title index and field indexes follow.
	r = h.Admin("PUT", adminPosts+"/new-1", map[string]any{"data": map[string]any{"title": "Renamed okapi", "views": 8}})
	if r.Status != 200 {
		t.Fatalf("replace = %d %s", r.Status, r.Body)
	}
	if got := search("q=zeb"); len(got) != 0 {
		t.Errorf("old title still found: %v", got)
	}
	if got := search("q=oka&filter=views:eq:8"); !reflect.DeepEqual(got, []string{"new-1"}) {
		t.Errorf("q after replace = %v", got)
	}
	if got := ids(list(t, h, pk, posts+"/records?filter=views:eq:7")); len(got) != 0 {
		t.Errorf("old index entry still found: %v", got)
	}
	// Unpublish hides it everywhere; publish brings it back.
	r = h.Admin("POST", adminPosts+"/new-1/unpublish", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"published":false`) {
		t.Fatalf("unpublish = %d %s", r.Status, r.Body)
	}
	if got := total(); got != `{"total":5}` {
		t.Errorf("total after unpublish = %s", got)
	}
	if r := h.Do("GET", posts+"/records/new-1", nil, "X-API-Key", pk); r.Status != 404 {
		t.Errorf("unpublished read = %d", r.Status)
	}
	if r := h.Admin("POST", adminPosts+"/new-1/publish", nil); r.Status != 200 {
		t.Fatalf("publish = %d %s", r.Status, r.Body)
	}
	if got := total(); got != `{"total":6}` {
		t.Errorf("total after publish = %s", got)
	}
	if r := h.Admin("DELETE", adminPosts+"/new-1", nil); r.Status != 204 {
		t.Fatalf("delete = %d %s", r.Status, r.Body)
	}
	if got := total(); got != `{"total":5}` {
		t.Errorf("total after delete = %s", got)
	}
	if got := search("q=oka"); len(got) != 0 {
		t.Errorf("deleted record still found: %v", got)
	}
	// Generated ids are time-ordered.
	r = h.Admin("POST", adminPosts, map[string]any{"data": map[string]any{"title": "No id"}, "published": false})
	var out map[string]any
	_ = json.Unmarshal(r.Body, &out)
	if r.Status != 201 || len(out["id"].(string)) != 26 {
		t.Errorf("generated id = %d %s", r.Status, r.Body)
	}
	h.Run(t, []edgetest.Scenario{
		{Name: "no token", Method: "POST", Path: "/admin/v1" + adminPosts, Body: `{}`, Status: 401},
	})
	for _, sc := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"unknown field", "POST", adminPosts, map[string]any{"data": map[string]any{"nope": 1}}, 400, "VALIDATION_FAILED"},
		{"wrong type", "POST", adminPosts, map[string]any{"data": map[string]any{"views": "many"}}, 400, "VALIDATION_FAILED"},
		{"bad option", "POST", adminPosts, map[string]any{"data": map[string]any{"category": "gossip"}}, 400, "VALIDATION_FAILED"},
		{"bad date", "POST", adminPosts, map[string]any{"data": map[string]any{"day": "soon"}}, 400, "VALIDATION_FAILED"},
		{"bad id", "POST", adminPosts, map[string]any{"id": "a/b", "data": map[string]any{}}, 400, "VALIDATION_FAILED"},
		{"not json", "POST", adminPosts, "{", 400, "VALIDATION_FAILED"},
		{"unknown project", "POST", "/projects/nope/collections/posts/records", map[string]any{"data": map[string]any{}}, 404, "PROJECT_NOT_FOUND"},
		{"unknown collection", "POST", "/projects/demo/collections/nope/records", map[string]any{"data": map[string]any{}}, 404, "COLLECTION_NOT_FOUND"},
		{"delete unknown", "DELETE", adminPosts + "/nope", nil, 404, "RECORD_NOT_FOUND"},
		{"publish unknown", "POST", adminPosts + "/nope/publish", nil, 404, "RECORD_NOT_FOUND"},
	} {
		r := h.Admin(sc.method, sc.path, sc.body)
		if r.Status != sc.status || r.Code() != sc.code {
			t.Errorf("%s: %s %s = %d %s, want %d %s", sc.name, sc.method, sc.path, r.Status, r.Body, sc.status, sc.code)
		}
	}
}

func TestImport(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	var b strings.Builder
	for i := 0; i < 1234; i++ {
		fmt.Fprintf(&b, `{"id":"imp-%04d","data":{"title":"Imported %d","views":%d,"category":"news"}}`+"\n", i, i, i)
	}
	b.WriteString("not json\n")
	b.WriteString(`{"id":"bad","data":{"views":"x"}}` + "\n")
	b.WriteString(`{"id":"post-1","data":{"title":"Hello replaced"}}` + "\n")
	r := h.Do("POST", "/admin/v1"+adminPosts+":import", strings.NewReader(b.String()),
		"Authorization", "Bearer "+edgetest.AdminToken, "Content-Type", "application/x-ndjson")
	var rep records.ImportReport
	if err := json.Unmarshal(r.Body, &rep); err != nil || r.Status != 200 {
		t.Fatalf("import = %d %s", r.Status, r.Body)
	}
	if rep.Imported != 1235 || rep.Created != 1234 || rep.Updated != 1 || rep.Failed != 2 || len(rep.Errors) != 2 || rep.Errors[0].Line != 1235 {
		t.Errorf("import report = %+v", rep)
	}
	if got := string(h.Do("GET", posts+"/aggregate", nil, "X-API-Key", pk).Body); got != `{"total":1239}` {
		t.Errorf("total after import = %s", got)
	}
	if got := ids(list(t, h, pk, posts+"/records?filter=views:gte:1230&sort=-views")); !reflect.DeepEqual(got, []string{"imp-1233", "imp-1232", "imp-1231", "imp-1230"}) {
		t.Errorf("imported range = %v", got)
	}
	if err := svc.SyncTitles(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ids(list(t, h, pk, posts+"/records?q=replaced")); !reflect.DeepEqual(got, []string{"post-1"}) {
		t.Errorf("replaced title = %v", got)
	}
}

// An import chunk larger than one commit (here a store of 1 MB memtables: commits of about
// 150 KB, against some 500 KB for 500 records) is written in halves: every line is stored.
func TestImportSplitsChunksPastOneCommit(t *testing.T) {
	t.Parallel()
	h, _ := newHarnessConfig(t, func(c *config.Config) { c.Storage.MemTableMB = 1 })
	var b strings.Builder
	for i := 0; i < 1200; i++ {
		fmt.Fprintf(&b, `{"id":"big-%04d","data":{"title":"Imported %d %s","views":%d,"category":"news"}}`+"\n", i, i, strings.Repeat("x", 200), i)
	}
	r := h.Do("POST", "/admin/v1"+adminPosts+":import", strings.NewReader(b.String()),
		"Authorization", "Bearer "+edgetest.AdminToken, "Content-Type", "application/x-ndjson")
	var rep records.ImportReport
	if err := json.Unmarshal(r.Body, &rep); err != nil || r.Status != 200 {
		t.Fatalf("import = %d %s", r.Status, r.Body)
	}
	if rep.Imported != 1200 || rep.Created != 1200 || rep.Failed != 0 {
		t.Errorf("import report = %+v", rep)
	}
	if got := string(h.Do("GET", posts+"/aggregate", nil, "X-API-Key", pk).Body); got != `{"total":1205}` {
		t.Errorf("total after import = %s", got)
	}
}

// Restart: a title index that lost writes is repaired from the journal, and a lost index is
// rebuilt from the store.
func TestTitleRepairOnStart(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	ctx := context.Background()
	if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: "late", Data: map[string]any{"title": "Late quokka"}}); err != nil {
		t.Fatal(err)
	}
	fresh := newServiceOver(t, h)
	page, err := fresh.List(ctx, records.Query{Project: "demo", Collection: "posts", Q: "quok"})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("after rebuild: %d items, %v", len(page.Items), err)
	}
}

// ReadFilter sees each page once and its output is what is returned.
type redactor struct{ calls int }

func (r *redactor) RecordsRead(_ context.Context, _, _ string, recs []json.RawMessage) ([]json.RawMessage, error) {
	r.calls++
	out := make([]json.RawMessage, len(recs))
	for i := range recs {
		out[i] = json.RawMessage(`{"redacted":true}`)
	}
	return out, nil
}

func TestReadFilter(t *testing.T) {
	t.Parallel()
	rf := &redactor{}
	h, _ := newHarness(t, func(o *records.Options) { o.Plugins = rf })
	r := h.Do("GET", posts+"/records?limit=3", nil, "X-API-Key", pk)
	if !strings.HasPrefix(string(r.Body), `{"items":[{"redacted":true},{"redacted":true},{"redacted":true}]`) || rf.calls != 1 {
		t.Errorf("list with filter = %s (%d calls)", r.Body, rf.calls)
	}
}

// A collection whose fields change is re-derived: a field made private leaves public output.
func TestSchemaChange(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	h.Apply(strings.Replace(tenants, "{name: views, type: number}", "{name: views, type: number, private: true}", 1))
	r := h.Do("GET", posts+"/records/post-1", nil, "X-API-Key", pk)
	if r.Status != 200 || strings.Contains(string(r.Body), "views") {
		t.Errorf("after making views private = %d %s", r.Status, r.Body)
	}
	if r := h.Do("GET", posts+"/records?sort=views", nil, "X-API-Key", pk); r.Code() != "PRIVATE_FIELD_NOT_QUERYABLE" {
		t.Errorf("sort on a field made private = %s", r.Body)
	}
	if got := ids(list(t, h, sk, posts+"/records?filter=views:gte:100")); !reflect.DeepEqual(got, []string{"post-2"}) {
		t.Errorf("secret filter after rebuild = %v", got)
	}
}

// An import body larger than the server's body limit streams through when it is sent chunked
// (as `gatehouse records import` sends a file).
func TestImportStreamsPastBodyLimit(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	pr, pw := io.Pipe()
	const n = 6000
	note := strings.Repeat("x", 2200)
	go func() {
		w := bufio.NewWriter(pw)
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, `{"id":"big-%05d","data":{"title":"Big %d","internalNote":"%s"}}`+"\n", i, i, note)
		}
		_ = w.Flush()
		_ = pw.Close()
	}()
	req, _ := http.NewRequest("POST", h.URL+"/admin/v1"+adminPosts+":import", pr)
	req.Header.Set("Authorization", "Bearer "+edgetest.AdminToken)
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep records.ImportReport
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil || resp.StatusCode != 200 || rep.Imported != n {
		t.Fatalf("chunked import of %d MB = %d %+v %v", n*2250>>20, resp.StatusCode, rep, err)
	}
}

// Array fields (multiselect, many-relations) are arrays even when a record leaves them unset.
func TestUnsetArrayFieldsAreEmptyArrays(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	r := h.Admin("POST", adminPosts, map[string]any{"id": "bare", "data": map[string]any{"title": "Bare", "views": 1}})
	if r.Status != 201 {
		t.Fatalf("create = %d %s", r.Status, r.Body)
	}
	for _, path := range []string{posts + "/records/bare", posts + "/records/bare?populate=related"} {
		body := string(h.Do("GET", path, nil, "X-API-Key", pk).Body)
		if !strings.Contains(body, `"tags":[]`) || !strings.Contains(body, `"related":[]`) {
			t.Errorf("GET %s = %s, want tags and related as []", path, body)
		}
	}
}

// Concurrent admin writes of one collection all succeed and keep the counts exact (the
// counters are striped; the store's committer retries any conflict).
func TestConcurrentAdminWritesKeepCounts(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	ctx := context.Background()
	const writers = 200
	errs := make(chan error, writers)
	for i := 0; i < writers; i++ {
		go func(i int) {
			cat := []string{"news", "guides"}[i%2]
			_, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: fmt.Sprintf("c-%03d", i), Data: map[string]any{"title": "Concurrent", "category": cat}})
			errs <- err
		}(i)
	}
	for i := 0; i < writers; i++ {
		if err := <-errs; err != nil {
			t.Errorf("Put: %v", err)
		}
	}
	for i := 0; i < writers; i += 4 {
		if err := svc.Delete(ctx, "demo", "posts", fmt.Sprintf("c-%03d", i)); err != nil {
			t.Errorf("Delete: %v", err)
		}
	}
	// 5 published before, 200 created (half news, half guides), 50 news deleted.
	if got := string(h.Do("GET", posts+"/aggregate", nil, "X-API-Key", pk).Body); got != `{"total":155}` {
		t.Errorf("total = %s, want 155", got)
	}
	if got := string(h.Do("GET", posts+"/aggregate?groupBy=category", nil, "X-API-Key", pk).Body); got != `{"groups":{"guides":102,"news":52,"reviews":1}}` {
		t.Errorf("groups = %s", got)
	}
}

// A write is readable by the very next request, single read and list, even when the previous
// version sat in the read caches; and the title worker, not a caller, brings it to q.
func TestWriteReadableByNextRequest(t *testing.T) {
	t.Parallel()
	h, _ := newHarness(t)
	read := func() string {
		t.Helper()
		r := h.Do("GET", posts+"/records/post-2", nil, "X-API-Key", pk)
		return fmt.Sprint(r.JSON(t)["title"])
	}
	listed := func() string {
		t.Helper()
		for _, it := range list(t, h, pk, posts+"/records?filter=category:eq:guides").Items {
			if it["id"] == "post-2" {
				return fmt.Sprint(it["title"])
			}
		}
		return ""
	}
	for i := 0; i < 5; i++ {
		// Warm the caches with the current version, then replace it.
		_, _ = read(), listed()
		title := fmt.Sprintf("Version %d ocelot", i)
		r := h.Admin("PUT", adminPosts+"/post-2", map[string]any{"data": map[string]any{"title": title, "category": "guides"}})
		if r.Status != 200 {
			t.Fatalf("replace = %d %s", r.Status, r.Body)
		}
		if got := read(); got != title {
			t.Errorf("read after replace %d = %q", i, got)
		}
		if got := listed(); got != title {
			t.Errorf("list after replace %d = %q", i, got)
		}
	}
	// No SyncTitles here: the background worker indexes the journal on its own.
	for {
		if got := ids(list(t, h, pk, posts+"/records?q=ocelot")); len(got) == 1 && got[0] == "post-2" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTitleFollowsCreatedAtChanges: the title index names a record's document by its
// createdAt; a write that changes the createdAt (in the same journal drain as other writes or
// in one of its own) leaves exactly one document, unpublish and delete leave none.
func TestTitleFollowsCreatedAtChanges(t *testing.T) {
	t.Parallel()
	h, svc := newHarness(t)
	ctx := context.Background()
	put := func(created string, published bool) {
		t.Helper()
		if _, _, err := svc.Put(ctx, "demo", "posts", records.WriteRecord{ID: "moved", Published: &published, CreatedAt: created, Data: map[string]any{"title": "Wandering ibex"}}); err != nil {
			t.Fatal(err)
		}
	}
	search := func() []string {
		t.Helper()
		if err := svc.SyncTitles(ctx); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, q := range []string{"q=ibex", "q=ibex&sort=-createdAt", "q=wand&sort=createdAt"} {
			out = append(out, strings.Join(ids(list(t, h, pk, posts+"/records?"+q)), ","))
		}
		return out
	}
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"create", func() { put("2020-01-01T00:00:00Z", true) }, "moved"},
		{"new createdAt", func() { put("2021-01-01T00:00:00Z", true) }, "moved"},
		{"two createdAts in one drain", func() { put("2022-01-01T00:00:00Z", true); put("2023-01-01T00:00:00Z", true) }, "moved"},
		{"back and forth in one drain", func() { put("2020-06-01T00:00:00Z", true); put("2023-01-01T00:00:00Z", true) }, "moved"},
		{"unpublished with a new createdAt", func() { put("2024-01-01T00:00:00Z", false) }, ""},
		{"published again", func() { put("2024-01-01T00:00:00Z", true) }, "moved"},
		{"replaced keeping createdAt", func() { put("", true) }, "moved"},
		{"deleted", func() {
			if err := svc.Delete(ctx, "demo", "posts", "moved"); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, st := range steps {
		st.do()
		want := []string{st.want, st.want, st.want}
		if got := search(); !reflect.DeepEqual(got, want) {
			t.Errorf("after %s: q answers %q, want %q", st.name, got, want)
		}
	}
}
