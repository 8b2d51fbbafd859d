package files

import (
	"io"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
)

// openObjects keeps the objects of the most recently served variants open, so that serving a
// variant made before reads its bytes at an offset (pread) instead of opening, checking and
// closing its file on every request: on the local blob store those three system calls were a
// third of the gateway's CPU serving cached thumbnails (docs/performance.md, Variants). It
// holds file descriptors, not bytes (those stay in the kernel's page cache), at most n of
// them; objects that cannot be read at an offset (S3) are not kept. A variant's bytes never
// change; a variant forgotten or deleted is dropped here too (forget).
type openObjects struct {
	mu  sync.Mutex // orders lookups with evictions, so no reader gets an object being closed
	lru *lru.Cache[string, *heldObject]
}

// heldObject is one open object, closed when neither the cache nor a reader holds it.
type heldObject struct {
	r    io.ReaderAt
	c    io.Closer
	size int64
	refs atomic.Int64 // the cache's own while it is kept, and one per reader
}

func (h *heldObject) release() {
	if h.refs.Add(-1) == 0 {
		_ = h.c.Close()
	}
}

func newOpenObjects(n int) *openObjects {
	o := &openObjects{}
	o.lru, _ = lru.NewWithEvict(max(1, n), func(_ string, h *heldObject) { h.release() })
	return o
}

// open answers a reader of the object at key: of the one kept open, else of the one open
// opens (kept when it reads at offsets). The reader's Close releases it.
func (o *openObjects) open(key string, open func() (blob.Object, error)) (blob.Object, error) {
	o.mu.Lock()
	h, ok := o.lru.Get(key)
	if ok {
		h.refs.Add(1)
	}
	o.mu.Unlock()
	if ok {
		return h.reader(), nil
	}
	obj, err := open()
	if err != nil {
		return nil, err
	}
	ra, ok := obj.(io.ReaderAt)
	if !ok {
		return obj, nil
	}
	h = &heldObject{r: ra, c: obj, size: obj.Size()}
	h.refs.Store(2) // the cache's and this reader's
	o.mu.Lock()
	if prev, ok := o.lru.Peek(key); ok { // opened by another request meanwhile
		prev.refs.Add(1)
		o.mu.Unlock()
		_ = obj.Close()
		return prev.reader(), nil
	}
	o.lru.Add(key, h)
	o.mu.Unlock()
	return h.reader(), nil
}

// forget closes the object kept for key (once its readers are done).
func (o *openObjects) forget(key string) {
	o.mu.Lock()
	o.lru.Remove(key)
	o.mu.Unlock()
}

// close closes every kept object (once their readers are done).
func (o *openObjects) close() {
	o.mu.Lock()
	o.lru.Purge()
	o.mu.Unlock()
}

func (h *heldObject) reader() *heldReader {
	return &heldReader{SectionReader: io.NewSectionReader(h.r, 0, h.size), h: h}
}

// heldReader is one request's reader of a held object: its own offset, the shared file.
type heldReader struct {
	*io.SectionReader
	h    *heldObject
	once sync.Once
}

func (r *heldReader) Close() error {
	r.once.Do(r.h.release)
	return nil
}

var _ blob.Object = (*heldReader)(nil)
