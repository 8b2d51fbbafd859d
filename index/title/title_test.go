package title

import (
	"bytes"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/blevesearch/bleve/v2/document"
)

func TestSearch(t *testing.T) {
	t.Parallel()
	x, err := Open(t.TempDir() + "/t.bleve")
	if err != nil {
		t.Fatal(err)
	}
	if !x.Fresh {
		t.Error("new index not Fresh")
	}
	b := x.NewBatch()
	for id, title := range map[string]string{"1": "Hello world", "2": "Hello again", "3": "Wasm at the EDGE", "4": "Café crème"} {
		n, _ := strconv.Atoi(id)
		if err := b.Put("p", "c", id, title, float64(100-n)); err != nil {
			t.Fatal(err)
		}
	}
	_ = b.Put("q", "c", "9", "Hello elsewhere", 1)
	_ = b.Put("p", "c", "5", "Hello tie", 98) // same createdAt as 2: ties go by id
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		q    string
		want []string
	}{
		{"hel", []string{"1", "2", "5"}},
		{"HELLO wor", []string{"1"}},
		{"edge", []string{"3"}},
		{"caf", []string{"4"}},
		{"orld", []string{}},
	}
	for _, tc := range cases {
		got, err := x.Search("p", "c", Words(tc.q), 10)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Search(%q) = %v, %v; want %v", tc.q, got, err, tc.want)
		}
		for _, id := range tc.want {
			if !Matches(Words(tc.q), map[string]string{"1": "Hello world", "2": "Hello again", "3": "Wasm at the EDGE", "4": "Café crème", "5": "Hello tie"}[id]) {
				t.Errorf("Matches(%q) disagrees with the index on %s", tc.q, id)
			}
		}
	}
	for _, desc := range []bool{false, true} {
		hits, err := x.SearchSorted("p", "c", Words("hel"), nil, 10, desc)
		want := []Hit{{"2", 98}, {"5", 98}, {"1", 99}}
		if desc {
			want = []Hit{{"1", 99}, {"5", 98}, {"2", 98}}
		}
		if err != nil || !reflect.DeepEqual(hits, want) {
			t.Errorf("SearchSorted(hel, desc=%v) = %v, %v; want %v", desc, hits, err, want)
		}
		var paged []Hit
		var after *Hit
		for i := 0; i < 5; i++ {
			page, err := x.SearchSorted("p", "c", Words("hel"), after, 2, desc)
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, page...)
			if len(page) < 2 {
				break
			}
			after = &page[len(page)-1]
		}
		if !reflect.DeepEqual(paged, want) {
			t.Errorf("SearchSorted(hel, desc=%v) in pages of 2 = %v; want %v", desc, paged, want)
		}
	}
	if _, err := x.Search("p", "c", Words("h"), 1); err != ErrTooMany {
		t.Errorf("Search over the limit = %v, want ErrTooMany", err)
	}
	b = x.NewBatch()
	b.Delete("p", "c", "1", 99)
	_ = b.Commit()
	if got, _ := x.Search("p", "c", Words("world"), 10); len(got) != 0 {
		t.Errorf("deleted doc still found: %v", got)
	}
	if err := x.MarkComplete(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir() + "/t2.bleve"
	y, _ := Open(dir)
	_ = y.MarkComplete()
	_ = y.Close()
	y, err = Open(dir)
	if err != nil || y.Fresh {
		t.Errorf("reopened complete index: fresh=%v err=%v", y.Fresh, err)
	}
	_ = y.Close()
	_ = x.Close()
}

func TestOpenLockedIndexFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/t.bleve"
	x, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if _, err := Open(dir); err == nil {
		t.Fatal("second Open of a held index succeeded")
	}
	// The held index is untouched.
	if _, err := x.Search("p", "c", Words("a"), 10); err != nil {
		t.Errorf("Search after a refused Open: %v", err)
	}
}

// TestOutdatedIndexIsRecreated: an index of another format (or an unfinished one) is thrown
// away and created anew with this format's mapping, not refilled with the old mapping (whose
// numeric "c" field would silently drop this format's sort keys).
func TestOutdatedIndexIsRecreated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir() + "/t.bleve"
	for _, marker := range []string{"3", ""} {
		x, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		b := x.NewBatch()
		if err := b.Put("p", "c", "old", "stale title", 1); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
		if marker != "" {
			if err := x.b.SetInternal([]byte(completeKey), []byte(marker)); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		x, err = Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !x.Fresh {
			t.Errorf("marker %q: reopened index not Fresh", marker)
		}
		if ids, _ := x.Search("p", "c", []string{"stale"}, 10); len(ids) != 0 {
			t.Errorf("marker %q: the outdated index was kept: %v", marker, ids)
		}
		b = x.NewBatch()
		_ = b.Put("p", "c", "new", "fresh title", 5)
		_ = b.Commit()
		hits, err := x.SearchSorted("p", "c", []string{"fresh"}, nil, 10, true)
		if err != nil || len(hits) != 1 || hits[0].CreatedMs != 5 {
			t.Errorf("marker %q: SearchSorted = %v, %v; want one hit with its createdAt", marker, hits, err)
		}
		if err := x.MarkComplete(); err != nil {
			t.Fatal(err)
		}
		_ = x.Close()
		if x, err = Open(dir); err != nil || x.Fresh {
			t.Fatalf("complete index reopened: Fresh=%v, %v", x != nil && x.Fresh, err)
		}
		_ = x.Close()
		if marker == "3" {
			_ = os.RemoveAll(dir)
		}
	}
}

// TestRecordMovesWhenCreatedAtChanges: a record's document id carries its createdAt, so a
// re-put with the same createdAt replaces its document, and a record whose createdAt changed
// is moved by deleting the document of the earlier createdAt (in the same batch or not);
// DeleteCollection finds every document of a collection.
func TestRecordMovesWhenCreatedAtChanges(t *testing.T) {
	t.Parallel()
	x, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	commit := func(b *Batch) {
		t.Helper()
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	put := func(b *Batch, id string, ms float64) {
		t.Helper()
		if err := b.Put("p", "c", id, "Hello "+id, ms); err != nil {
			t.Fatal(err)
		}
	}
	b := x.NewBatch()
	put(b, "a", 10)
	put(b, "b", 15)
	commit(b)
	b = x.NewBatch()
	b.Delete("p", "c", "a", 10)
	put(b, "a", 20)
	commit(b)
	b = x.NewBatch()
	put(b, "a", 20)             // same document again
	b.Delete("p", "c", "b", 99) // no such document: nothing happens
	commit(b)
	hits, err := x.SearchSorted("p", "c", []string{"hello"}, nil, 10, true)
	if err != nil || len(hits) != 2 || hits[0] != (Hit{ID: "a", CreatedMs: 20}) || hits[1] != (Hit{ID: "b", CreatedMs: 15}) {
		t.Fatalf("SearchSorted = %v, %v; want a@20, b@15", hits, err)
	}
	if ids, _ := x.Search("p", "c", []string{"hello"}, 10); !reflect.DeepEqual(ids, []string{"a", "b"}) {
		t.Errorf("Search = %v, want [a b]", ids)
	}
	b = x.NewBatch()
	b.Delete("p", "c", "a", 20)
	commit(b)
	if ids, _ := x.Search("p", "c", []string{"hello"}, 10); !reflect.DeepEqual(ids, []string{"b"}) {
		t.Errorf("after Delete(a): %v, want [b]", ids)
	}
	// Neighbours whose names extend p or c keep their documents; a document without words is
	// deleted with its collection.
	b = x.NewBatch()
	for _, sc := range [][2]string{{"p", "cc"}, {"pp", "c"}, {"p", "c-2"}} {
		if err := b.Put(sc[0], sc[1], "n", "Hello neighbour", 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Put("p", "c", "empty", "", 30); err != nil {
		t.Fatal(err)
	}
	commit(b)
	b = x.NewBatch()
	if err := b.DeleteCollection("p", "c"); err != nil {
		t.Fatal(err)
	}
	commit(b)
	if ids, _ := x.Search("p", "c", []string{"hello"}, 10); len(ids) != 0 {
		t.Errorf("after DeleteCollection: %v", ids)
	}
	if n, err := x.b.DocCount(); err != nil || n != 3 {
		t.Errorf("after DeleteCollection: %d documents (%v), want the 3 neighbours'", n, err)
	}
	for _, sc := range [][2]string{{"p", "cc"}, {"pp", "c"}, {"p", "c-2"}} {
		if ids, _ := x.Search(sc[0], sc[1], []string{"neighbour"}, 10); !reflect.DeepEqual(ids, []string{"n"}) {
			t.Errorf("after DeleteCollection(p, c): Search(%s/%s) = %v, want [n]", sc[0], sc[1], ids)
		}
	}
}

// TestScopeKeepsItsCase: terms are not lower-cased after Words, so a project or collection
// name with capitals is found as queries spell it.
func TestScopeKeepsItsCase(t *testing.T) {
	t.Parallel()
	x, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	b := x.NewBatch()
	if err := b.Put("Proj", "Posts", "1", "Hello World", 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if ids, err := x.Search("Proj", "Posts", Words("WORLD"), 10); err != nil || !reflect.DeepEqual(ids, []string{"1"}) {
		t.Errorf("Search(Proj/Posts, WORLD) = %v, %v; want [1]", ids, err)
	}
	if ids, _ := x.Search("proj", "posts", Words("world"), 10); len(ids) != 0 {
		t.Errorf("Search(proj/posts) = %v; want none (another scope)", ids)
	}
}

// The index holds the title field only: no composite "_all" field (format 8), which bleve builds
// for every document unless disabled and no query reads, and no scope field (format 9).
func TestNoCompositeField(t *testing.T) {
	t.Parallel()
	x, err := Open(t.TempDir() + "/t.bleve")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	b := x.NewBatch()
	if err := b.Put("p", "c", "1", "Hello world", 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	fields, err := x.b.Fields()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(fields)
	if want := []string{"_id", fieldTitle}; !slices.Equal(fields, want) {
		t.Errorf("index fields = %v, want %v", fields, want)
	}
}

// TestPutMatchesMapping: the document Put builds directly is the one the index's mapping makes
// of the same title: the same fields, options and analysis.
func TestPutMatchesMapping(t *testing.T) {
	t.Parallel()
	x, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, title := range []string{"Hello wide World", "", "ünïcode 42 x", "a\u00a0b"} {
		direct := x.document("p", "c", "1", title, 7)
		mapped := document.NewDocument(direct.ID())
		if err := x.b.Mapping().MapDocument(mapped, map[string]any{fieldTitle: string(titleTerms("p", "c", title))}); err != nil {
			t.Fatal(err)
		}
		if len(direct.Fields) != len(mapped.Fields) {
			t.Fatalf("%q: %d fields, the mapping makes %d", title, len(direct.Fields), len(mapped.Fields))
		}
		for i, f := range direct.Fields {
			m := mapped.Fields[i]
			f.Analyze()
			m.Analyze()
			if f.Name() != m.Name() || f.Options() != m.Options() || !slices.Equal(f.ArrayPositions(), m.ArrayPositions()) ||
				!bytes.Equal(f.Value(), m.Value()) || f.AnalyzedLength() != m.AnalyzedLength() ||
				!reflect.DeepEqual(f.AnalyzedTokenFrequencies(), m.AnalyzedTokenFrequencies()) {
				t.Errorf("%q: field %s (%v, %q, %v) differs from the mapping's %s (%v, %q, %v)", title,
					f.Name(), f.Options(), f.Value(), f.AnalyzedTokenFrequencies(), m.Name(), m.Options(), m.Value(), m.AnalyzedTokenFrequencies())
			}
		}
	}
}

// MemoryUsed reports what the segments of an index holding titles keep in memory.
func TestMemoryUsed(t *testing.T) {
	x, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	b := x.NewBatch()
	for i := range 100 {
		if err := b.Put("p", "posts", "r"+strconv.Itoa(i), "kalomi nerusa tovize", float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if x.MemoryUsed() == 0 {
		t.Error("MemoryUsed is 0 for an index holding 100 titles")
	}
}

// SearchSorted keeps an answer until the next change: the same search is answered from the
// cache (a caller changing its copy changes nothing kept), every commit or Clear is seen at
// once, and the cache stays within its bound.
func TestQueryCache(t *testing.T) {
	t.Parallel()
	x, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	put := func(id, title string, ms float64) {
		t.Helper()
		b := x.NewBatch()
		if err := b.Put("p", "c", id, title, ms); err != nil {
			t.Fatal(err)
		}
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		t.Helper()
		hits, err := x.SearchSorted("p", "c", []string{"hel"}, nil, 10, true)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for i := range hits {
			out = append(out, hits[i].ID)
			hits[i].ID = "changed by the caller"
		}
		return out
	}
	put("1", "Hello one", 1)
	for round, want := range [][]string{{"1"}, {"1"}} {
		if got := ids(); !slices.Equal(got, want) {
			t.Fatalf("round %d: %v, want %v", round, got, want)
		}
	}
	if x.queries.lru.Len() != 1 {
		t.Errorf("kept answers = %d, want 1", x.queries.lru.Len())
	}
	put("2", "Hello two", 2)
	if got := ids(); !slices.Equal(got, []string{"2", "1"}) {
		t.Errorf("after a commit: %v", got)
	}
	b := x.NewBatch()
	b.Delete("p", "c", "2", 2)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []string{"1"}) {
		t.Errorf("after a delete: %v", got)
	}
	if err := x.Clear(); err != nil {
		t.Fatal(err)
	}
	if got := ids(); len(got) != 0 {
		t.Errorf("after Clear: %v", got)
	}
	// Distinct searches past the bound evict the oldest answers.
	put("3", "Hello three", 3)
	for i := 0; i < 20000; i++ {
		if _, err := x.SearchSorted("p", "c", []string{"hel", strconv.Itoa(i)}, nil, 10, false); err != nil {
			t.Fatal(err)
		}
	}
	if used := x.queries.used(); used > queryCacheBytes || used < queryCacheBytes/2 {
		t.Errorf("cache holds %d bytes, bound %d", used, queryCacheBytes)
	}
	if x.MemoryUsed() < uint64(x.queries.used()) {
		t.Errorf("MemoryUsed %d leaves out the query cache", x.MemoryUsed())
	}
}
