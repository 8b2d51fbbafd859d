package files

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
)

// countingStore counts the objects a blob.Store opened and closed.
type countingStore struct {
	blob.Store
	opened, closed int
	noReadAt       bool // answer objects that cannot read at an offset (as S3's)
}

type countedObject struct {
	blob.Object
	s *countingStore
}

func (o countedObject) Close() error { o.s.closed++; return o.Object.Close() }

type streamObject struct{ countedObject } // hides ReadAt

func (s *countingStore) Open(ctx context.Context, key string) (blob.Object, error) {
	obj, err := s.Store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	s.opened++
	if s.noReadAt {
		return streamObject{countedObject{obj, s}}, nil
	}
	return countedHeld{countedObject{obj, s}}, nil
}

type countedHeld struct{ countedObject }

func (o countedHeld) ReadAt(p []byte, off int64) (int, error) {
	return o.Object.(io.ReaderAt).ReadAt(p, off)
}

// Served variants stay open between requests, each reader with its own offset; an object is
// closed only when neither the cache nor a reader holds it (evicted or forgotten while read);
// objects that cannot read at an offset are not kept.
func TestOpenObjects(t *testing.T) {
	t.Parallel()
	photo, err := os.ReadFile("testdata/photos/photo.jpg")
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		op             string // read (whole), hold (open, keep the reader), done (close held readers), forget, purge
		key            string
		opened, closed int // the store's counts after the step
	}
	for _, tc := range []struct {
		name     string
		n        int
		noReadAt bool
		steps    []step
	}{
		{"kept between requests", 4, false, []step{
			{"read", "a", 1, 0}, {"read", "a", 1, 0}, {"read", "b", 2, 0}, {"read", "a", 2, 0}, {"purge", "", 2, 2},
		}},
		{"least recently used closed", 1, false, []step{
			{"read", "a", 1, 0}, {"read", "b", 2, 1}, {"read", "a", 3, 2},
		}},
		{"evicted while read", 1, false, []step{
			{"hold", "a", 1, 0}, {"read", "b", 2, 0}, {"done", "", 2, 1}, {"read", "a", 3, 2},
		}},
		{"forgotten while read", 4, false, []step{
			{"hold", "a", 1, 0}, {"hold", "a", 1, 0}, {"forget", "a", 1, 0}, {"done", "", 1, 1}, {"read", "a", 2, 1},
		}},
		{"not kept without ReadAt", 4, true, []step{
			{"read", "a", 1, 1}, {"read", "a", 2, 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			local, err := blob.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"a", "b"} {
				if _, err := local.Put(context.Background(), "o/variants/x/"+k, bytes.NewReader(photo), "image/jpeg"); err != nil {
					t.Fatal(err)
				}
			}
			store := &countingStore{Store: local, noReadAt: tc.noReadAt}
			oo := newOpenObjects(tc.n)
			var held []blob.Object
			open := func(key string) blob.Object {
				obj, err := oo.open("o/variants/x/"+key, func() (blob.Object, error) {
					return store.Open(context.Background(), "o/variants/x/"+key)
				})
				if err != nil {
					t.Fatal(err)
				}
				return obj
			}
			for i, st := range tc.steps {
				switch st.op {
				case "read", "hold":
					obj := open(st.key)
					got, err := io.ReadAll(obj)
					if err != nil || !bytes.Equal(got, photo) || obj.Size() != int64(len(photo)) {
						t.Fatalf("step %d: read %d bytes (size %d), %v", i, len(got), obj.Size(), err)
					}
					if st.op == "hold" {
						held = append(held, obj)
					} else {
						obj.Close()
					}
				case "done":
					for _, obj := range held {
						obj.Close()
						obj.Close() // a second Close does nothing
					}
					held = nil
				case "forget":
					oo.forget("o/variants/x/" + st.key)
				case "purge":
					oo.close()
				}
				if store.opened != st.opened || store.closed != st.closed {
					t.Fatalf("step %d (%s %s): opened %d, closed %d; want %d, %d", i, st.op, st.key, store.opened, store.closed, st.opened, st.closed)
				}
			}
		})
	}
	// A missing object is the store's error, and nothing is kept.
	local, err := blob.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	oo := newOpenObjects(2)
	if _, err := oo.open("o/variants/x/none", func() (blob.Object, error) { return local.Open(context.Background(), "o/variants/x/none") }); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("missing object: %v", err)
	}
	if oo.lru.Len() != 0 {
		t.Error("a failed open was kept")
	}
}
