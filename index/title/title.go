// Package title is the bleve index of record titles that the records product searches with q:
// one index for the whole gateway, each document keyed "<project>/<collection>/<order key>"
// and carrying its title, lower-cased and split into words by Words (so the index and Matches
// agree exactly), each word stored as "<project>/<collection>:<word>" so that a prefix query
// reads one collection's terms only.
// A query matches records whose title has, for every word of the query, a word that starts
// with it ("hel" finds "Hello world").
//
// The index is derived data: the records product writes badger first and then this index, and
// repairs it on start from a journal kept in badger. A committed batch is searchable at once
// and made durable in the background (bleve's persister writes the batches committed
// meanwhile as one snapshot, and no batch waits for a disk write): the caller keeps what it
// needs to redo a batch until Batch.OnDurable says the index holds it. Bleve is imported only
// here.
package title

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/document"
	// Indexes made before format 9 name bleve's keyword analyzer in their mapping (their scope
	// field): it registers itself in bleve's registry when linked, so they open, are found
	// outdated and are rebuilt.
	_ "github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	// Indexes made before wordsTokenizer name bleve's whitespace tokenizer in their mapping:
	// it registers itself in bleve's registry when linked.
	_ "github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	bbolt "go.etcd.io/bbolt"
)

// openTimeout bounds the wait for the index's file lock (another process holding it).
const openTimeout = 5 * time.Second

// closeTimeout bounds Close's wait for the last batches to become durable.
const closeTimeout = 10 * time.Second

// errOutdated marks an index that Open found unfinished or of another format.
var errOutdated = errors.New("title: outdated index")

// ErrTooMany reports a query that matches more documents than the caller's limit.
var ErrTooMany = errors.New("title: too many matches")

const (
	fieldTitle = "t"
	analyzer   = "words"
	// completeKey marks an index whose initial build finished, with the term format.
	completeKey = "complete"
	// formatVersion 2: title terms are "<project>/<collection>:<word>", so a prefix query
	// touches only the terms of one collection. 3: each document carries its record's
	// createdAt (epoch milliseconds) as a sortable number, so SearchSorted orders matches
	// without reading records. 4: that sort key is one keyword term, the zero-padded
	// createdAt and the id (a numeric field keeps 16 prefix-coded terms per document in its
	// doc values, and sorting decompressed all of them for every search: 5 ms at 100k).
	// 5: the same as 4; an index marked 4 may have been refilled under format 3's mapping
	// before outdated indexes were recreated, so none is trusted. 6: the order key is the
	// document id ("<project>/<collection>/<order key>"), and searches sort by id: bleve reads
	// a hit's id from its stored fields, one small read, where a doc-value sort decompressed
	// a 1,024-document chunk per hit (20 ms a search at 1M, 1 ms now). 7: no field "r" (the
	// record reference that a search per write used to find a record's earlier document: the
	// caller now names it by the createdAt it was indexed with, see Batch.Delete), and terms are
	// not lower-cased again (Words did it; the scope keeps its case, as queries give it). The
	// unique term per document cost a third of the index's merge work, the search per write a
	// tenth of its indexing. 8: no composite field "_all" (bleve's default, which every
	// document fed and zap processed although no query reads it: a sixth of the index's
	// per-document work). 9: no scope field "s" (the keyword "<project>/<collection>" that only
	// DeleteCollection read, which now asks for the document ids of the collection's prefix):
	// a sixth of the index's per-document work; documents are built directly, without the
	// mapping's walk of a Go value.
	formatVersion = "9"
)

// Index is an open title index.
type Index struct {
	b bleve.Index
	// words is the title field's analyzer, from the index's mapping (Batch.Put builds
	// documents with it).
	words analysis.Analyzer
	// mem is set for an in-memory index, where a committed batch is as durable as it gets.
	mem bool
	// queries keeps recent SearchSorted answers until the next commit.
	queries *queryCache
	// Fresh is true when Open created the index (or found it incomplete): the caller rebuilds it.
	Fresh bool
}

// msDigits is the width of the zero-padded createdAt in an order key (enough for any epoch
// millisecond up to the year 33658).
const msDigits = 15

// orderKey is a document's sort key: createdAt (epoch milliseconds, zero-padded so that
// keys compare as the numbers do), a '/', and the record id; keys order as (createdAt, id).
func orderKey(createdMs float64, id string) string {
	ms := int64(0)
	if createdMs > 0 && !math.IsNaN(createdMs) {
		ms = min(int64(createdMs), 999_999_999_999_999)
	}
	b := make([]byte, 0, msDigits+1+len(id))
	d := strconv.AppendInt(nil, ms, 10)
	for range msDigits - len(d) {
		b = append(b, '0')
	}
	b = append(append(b, d...), '/')
	return string(append(b, id...))
}

// parseOrderKey returns the createdAt of an order key, NaN when it is not one.
func parseOrderKey(k string) float64 {
	if len(k) <= msDigits || k[msDigits] != '/' {
		return math.NaN()
	}
	ms, err := strconv.ParseInt(k[:msDigits], 10, 64)
	if err != nil {
		return math.NaN()
	}
	return float64(ms)
}

// newMapping is the mapping of a new index, whose analyzer splits words with tokenizer.
func newMapping(tokenizer string) (mapping.IndexMapping, error) {
	m := bleve.NewIndexMapping()
	err := m.AddCustomAnalyzer(analyzer, map[string]any{
		"type":      custom.Name,
		"tokenizer": tokenizer,
	})
	if err != nil {
		return nil, err
	}
	dm := bleve.NewDocumentStaticMapping()
	t := bleve.NewTextFieldMapping()
	t.Analyzer = analyzer
	t.Store = false
	t.IncludeInAll = false
	t.IncludeTermVectors = false
	t.DocValues = false
	dm.AddFieldMappingsAt(fieldTitle, t)
	// Queries name their field: the composite of all fields, which bleve adds unless its
	// mapping is disabled, would be built for every document and never read.
	dm.AddSubDocumentMapping("_all", bleve.NewDocumentDisabledMapping())
	m.DefaultMapping = dm
	m.DefaultAnalyzer = analyzer
	return m, nil
}

// config is the index's bleve runtime configuration. unsafe_batch: a batch returns once it is
// searchable, before it is on disk (Batch.OnDurable tells when it is), so that the persister
// writes what was committed meanwhile as one snapshot instead of each batch waiting for its
// own segment file, bolt commit and fsyncs.
func config() map[string]any {
	return map[string]any{
		"bolt_timeout": openTimeout.String(),
		"unsafe_batch": true,
	}
}

// Open opens the index in dir, creating it when missing. Close it when done.
func Open(dir string) (*Index, error) {
	cfg := config()
	b, err := bleve.OpenUsing(dir, cfg)
	if err == nil {
		v, gerr := b.GetInternal([]byte(completeKey))
		if gerr == nil && string(v) == formatVersion {
			return opened(b, false, false)
		}
		// Unfinished, or of another format: bleve keeps the mapping an index was created
		// with, so documents of this format must go into a new index, never the old one.
		if err := b.Close(); err != nil {
			return nil, fmt.Errorf("title: close outdated index: %w", err)
		}
		err = errOutdated
	}
	if errors.Is(err, bbolt.ErrTimeout) || strings.Contains(err.Error(), bbolt.ErrTimeout.Error()) {
		return nil, fmt.Errorf("title: %s is in use by another process: %w", dir, err)
	}
	if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		// An unreadable or outdated index is rebuilt from the store, never trusted.
		if rerr := os.RemoveAll(dir); rerr != nil {
			return nil, fmt.Errorf("title: remove broken index: %w", rerr)
		}
	}
	m, err := newMapping(tokenizerName)
	if err != nil {
		return nil, err
	}
	b, err = bleve.NewUsing(dir, m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		return nil, fmt.Errorf("title: create index: %w", err)
	}
	return opened(b, false, true)
}

// OpenMemory opens an in-memory index (tests and benchmarks): bleve's scorch, as on disk, without
// the files (bleve's NewMemOnly is its older engine, whose document ids are not a field that
// DeleteCollection could query).
func OpenMemory() (*Index, error) {
	m, err := newMapping(tokenizerName)
	if err != nil {
		return nil, err
	}
	b, err := bleve.NewUsing("", m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, nil)
	if err != nil {
		return nil, err
	}
	return opened(b, true, true)
}

// opened wraps an open bleve index of this format; it closes b when its mapping lacks the
// title analyzer.
func opened(b bleve.Index, mem, fresh bool) (*Index, error) {
	words := b.Mapping().AnalyzerNamed(analyzer)
	if words == nil {
		return nil, errors.Join(fmt.Errorf("title: the index's mapping has no analyzer %q", analyzer), b.Close())
	}
	return &Index{b: b, words: words, mem: mem, queries: newQueryCache(), Fresh: fresh}, nil
}

// MarkComplete records that the initial build finished.
func (x *Index) MarkComplete() error {
	return x.b.SetInternal([]byte(completeKey), []byte(formatVersion))
}

// markKey holds the caller's mark (Batch.SetMark).
const markKey = "mark"

// Mark returns the value last stored with Batch.SetMark (nil when none).
func (x *Index) Mark() ([]byte, error) { return x.b.GetInternal([]byte(markKey)) }

// Clear deletes every document (and the mark), leaving an empty index that the caller
// rebuilds: it is Fresh again.
func (x *Index) Clear() error {
	b := x.b.NewBatch()
	b.DeleteInternal([]byte(markKey))
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 10000, 0, false)
		req.Score = "none"
		req.SortBy([]string{"_id"})
		req.SearchAfter = after
		res, err := x.b.Search(req)
		if err != nil {
			return fmt.Errorf("title: list documents: %w", err)
		}
		for _, h := range res.Hits {
			b.Delete(h.ID)
		}
		err = x.b.Batch(b)
		x.queries.changed()
		if err != nil {
			return fmt.Errorf("title: clear: %w", err)
		}
		b = x.b.NewBatch()
		if len(res.Hits) < 10000 {
			x.Fresh = true
			return nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// Sync returns once every batch committed before the call is durable (at once for an
// in-memory index), or with ctx's error.
func (x *Index) Sync(ctx context.Context) error {
	if x.mem {
		return nil
	}
	done := make(chan error, 1)
	b := x.b.NewBatch()
	// An internal operation makes a new snapshot for the persister even when nothing else
	// changed; deleting a key that does not exist changes nothing.
	b.DeleteInternal([]byte(syncKey))
	b.SetPersistedCallback(func(err error) { done <- err })
	if err := x.b.Batch(b); err != nil {
		return fmt.Errorf("title: sync: %w", err)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// syncKey is the internal key Sync deletes (never set).
const syncKey = "sync"

// MemoryUsed is what the index holds in memory, in bytes, for /metrics: its open segments
// (bleve's own estimate: segments not yet persisted, the mapped ones' decoded parts, caches;
// nothing when bleve cannot tell) and its query cache (at most queryCacheBytes).
func (x *Index) MemoryUsed() uint64 {
	used := uint64(x.queries.used())
	adv, err := x.b.Advanced()
	if err != nil {
		return used
	}
	if m, ok := adv.(interface{ MemoryUsed() uint64 }); ok {
		return used + m.MemoryUsed()
	}
	return used
}

// Close makes the committed batches durable (waiting at most closeTimeout) and closes the
// index; it tolerates nil. Batches not yet durable when it gives up are lost, as in a crash.
func (x *Index) Close() error {
	if x == nil || x.b == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	serr := x.Sync(ctx)
	if err := x.b.Close(); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("title: close: last batches not durable: %w", serr)
	}
	return nil
}

// docID is the document id of a record: its collection and order key, so that documents
// sorted by id are sorted by (createdAt, id).
func docID(project, collection, id string, createdMs float64) string {
	return project + "/" + collection + "/" + orderKey(createdMs, id)
}

// recordID returns the record id and createdAt of a document id of collection prefix pre.
func recordID(pre, doc string) (string, float64) {
	k := strings.TrimPrefix(doc, pre)
	ms := parseOrderKey(k)
	if math.IsNaN(ms) {
		return k, ms
	}
	return k[msDigits+1:], ms
}

// Batch groups index changes. Within a batch, the last change of a document wins.
type Batch struct {
	x *Index
	b *bleve.Batch
	// durable is the OnDurable callback of the next Commit.
	durable func()
}

// NewBatch starts a batch.
func (x *Index) NewBatch() *Batch { return &Batch{x: x, b: x.b.NewBatch()} }

// Put indexes (or re-indexes) the title of a record created at createdMs (epoch milliseconds).
// A record's document is named by its createdAt: when that changed since the record was
// indexed, the caller deletes the earlier document (Delete with the earlier createdAt).
func (b *Batch) Put(project, collection, id, title string, createdMs float64) error {
	return b.b.IndexAdvanced(b.x.document(project, collection, id, title, createdMs))
}

// document is the index's document of a record's title: its field holds the title's words,
// each prefixed with the record's scope, and is analyzed as the mapping's title field is.
func (x *Index) document(project, collection, id, title string, createdMs float64) *document.Document {
	d := document.NewDocument(docID(project, collection, id, createdMs))
	d.AddField(document.NewTextFieldCustom(fieldTitle, nil, titleTerms(project, collection, title), titleOptions, x.words))
	return d
}

// titleTerms is the text of a title's field: its words, each prefixed with the record's scope
// "<project>/<collection>:", separated by spaces.
func titleTerms(project, collection, title string) []byte {
	scope := project + "/" + collection + ":"
	var t []byte
	for i, w := range Words(title) {
		if i > 0 {
			t = append(t, ' ')
		}
		t = append(append(t, scope...), w...)
	}
	return t
}

// titleOptions are the indexing options of the title field: what the mapping's field gives
// (newMapping; TestPutMatchesMapping checks the two agree), indexed only.
const titleOptions = index.IndexField

// Delete removes the document of a record indexed with createdAt createdMs (none is fine).
func (b *Batch) Delete(project, collection, id string, createdMs float64) {
	b.b.Delete(docID(project, collection, id, createdMs))
}

// DeleteCollection queues the deletion of every document of a collection: those whose id starts
// with "<project>/<collection>/" (names hold no '/', so no other collection's ids do).
func (b *Batch) DeleteCollection(project, collection string) error {
	q := bleve.NewPrefixQuery(project + "/" + collection + "/")
	q.SetField("_id")
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(q, 10000, 0, false)
		req.Score = "none"
		req.SortBy([]string{"_id"})
		req.SearchAfter = after
		res, err := b.x.b.Search(req)
		if err != nil {
			return fmt.Errorf("title: list collection: %w", err)
		}
		for _, h := range res.Hits {
			b.b.Delete(h.ID)
		}
		if len(res.Hits) < 10000 {
			return nil
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
}

// SetMark stores v with the batch's documents, in the same commit: the caller's place in what
// it indexes from (the records service keeps its place in the store's journal there), read
// back by Index.Mark.
func (b *Batch) SetMark(v []byte) { b.b.SetInternal([]byte(markKey), v) }

// Size is the number of queued operations.
func (b *Batch) Size() int { return b.b.Size() }

// OnDurable asks for f to be called once the changes of the batch's next Commit are durable:
// after the callbacks of every batch committed before it, from bleve's persister (possibly
// before Commit returns; within Commit for an in-memory index). It is not called when the index closes first (a crash, or a
// Close whose wait ran out): the caller then redoes the batch from its own records.
func (b *Batch) OnDurable(f func()) { b.durable = f }

// Commit applies the batch: when it returns, searches see its changes. They are durable a
// little later (OnDurable, Index.Sync), in commit order: after a crash the index holds the
// batches committed up to some point, never a batch without the ones before it.
func (b *Batch) Commit() error {
	f := b.durable
	b.durable = nil
	if f != nil && b.b.Size() == 0 && !b.x.mem {
		// Nothing to persist, but f waits for the batches before it: a no-op makes a snapshot.
		b.b.DeleteInternal([]byte(syncKey))
	}
	if b.b.Size() == 0 {
		if f != nil {
			f()
		}
		return nil
	}
	if f != nil && !b.x.mem {
		b.b.SetPersistedCallback(func(err error) {
			if err == nil {
				f()
			}
		})
	}
	err := b.x.b.Batch(b.b)
	b.x.queries.changed()
	// A new batch rather than Reset: the in-memory index's analysis goroutine may still be
	// reading the old one's map after Batch returned (a data race the race detector reports).
	b.b = b.x.b.NewBatch()
	if err == nil && f != nil && b.x.mem {
		f()
	}
	return err
}

// Words splits text as the index does: lower-cased runs of letters and digits.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Matches reports whether title matches q under the index's rule (every query word is the
// prefix of a title word); the records product uses it where it filters without the index.
func Matches(q []string, title string) bool {
	words := Words(title)
	for _, w := range q {
		ok := false
		for _, t := range words {
			if strings.HasPrefix(t, w) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Search returns the ids (in id order) of the records of project/collection whose title matches words
// (from Words). More than limit matches gives ErrTooMany.
func (x *Index) Search(project, collection string, words []string, limit int) ([]string, error) {
	// A first page of firstPage hits: bleve allocates a match per requested hit, so asking
	// for limit+1 up front would cost megabytes per query; the total says whether more exist.
	res, err := x.search(project, collection, words, min(limit+1, firstPage), []string{"_id"}, nil)
	if err != nil {
		return nil, err
	}
	if res.Total > uint64(limit) {
		return nil, ErrTooMany
	}
	if int(res.Total) > len(res.Hits) {
		if res, err = x.search(project, collection, words, int(res.Total), []string{"_id"}, nil); err != nil {
			return nil, err
		}
	}
	pre := project + "/" + collection + "/"
	ids := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, _ := recordID(pre, h.ID)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// firstPage is the size of Search's first request.
const firstPage = 1024

// Hit is a match of SearchSorted: a record id and the createdAt (epoch milliseconds) the
// index holds for it.
type Hit struct {
	ID        string
	CreatedMs float64
}

// SearchSorted returns up to size matches ordered by createdAt then id (both descending with
// desc), the order of the records product's default sort, from the index's doc values. With
// after, only the matches past that position are returned, so a caller pages through any
// number of matches. An answer is kept until the next commit (queryCache): the same call
// before then is answered without a search.
func (x *Index) SearchSorted(project, collection string, words []string, after *Hit, size int, desc bool) ([]Hit, error) {
	key := queryKey(project, collection, words, after, size, desc)
	gen := x.queries.gen.Load()
	if hits, ok := x.queries.get(key, gen); ok {
		return hits, nil
	}
	hits, err := x.searchSorted(project, collection, words, after, size, desc)
	if err == nil {
		x.queries.put(key, gen, hits)
	}
	return hits, err
}

func (x *Index) searchSorted(project, collection string, words []string, after *Hit, size int, desc bool) ([]Hit, error) {
	order := []string{"_id"}
	if desc {
		order = []string{"-_id"}
	}
	var sa []string
	if after != nil {
		sa = []string{docID(project, collection, after.ID, after.CreatedMs)}
	}
	res, err := x.search(project, collection, words, size, order, sa)
	if err != nil {
		return nil, err
	}
	pre := project + "/" + collection + "/"
	hits := make([]Hit, 0, len(res.Hits))
	for _, h := range res.Hits {
		id, c := recordID(pre, h.ID)
		hits = append(hits, Hit{ID: id, CreatedMs: c})
	}
	return hits, nil
}

func (x *Index) search(project, collection string, words []string, size int, order, after []string) (*bleve.SearchResult, error) {
	var q query.Query
	qs := []query.Query{}
	for _, w := range words {
		pq := bleve.NewPrefixQuery(project + "/" + collection + ":" + w)
		pq.SetField(fieldTitle)
		qs = append(qs, pq)
	}
	if len(qs) == 1 {
		q = qs[0]
	} else {
		q = bleve.NewConjunctionQuery(qs...)
	}
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	req.Score = "none"
	req.SortBy(order)
	req.SearchAfter = after
	res, err := x.b.Search(req)
	if err != nil {
		return nil, fmt.Errorf("title: search: %w", err)
	}
	return res, nil
}
