package forms_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/blob/s3test"
	"github.com/gatehouse-dev/gatehouse/products/forms"
)

// failSecondPut is a blob store whose second Put fails, as an S3 service that refuses one
// request (a 5xx) would.
type failSecondPut struct {
	blob.Store
	puts atomic.Int32
}

func (f *failSecondPut) Put(ctx context.Context, key string, r io.Reader, ctype string) (int64, error) {
	if f.puts.Add(1) == 2 {
		return 0, errors.New("blob: s3 put " + key + ": 503 Service Unavailable")
	}
	return f.Store.Put(ctx, key, r, ctype)
}

// The row "S3 down" of docs/scale-out.md for forms: with the S3 service unreachable, a
// submission with a file part answers 503 STORAGE_UNAVAILABLE and stores nothing (no
// submission in the inbox, no object in the bucket once S3 is back), a submission without a
// file is accepted all the same, and the same submission with its file is accepted once S3 is
// back, its file served from the inbox. A submission whose second file S3 refuses stores
// nothing either: the first file is removed.
func TestFilePartsWithS3Down(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t, "forms")
	e := startBlobs(t, "", nil, func(t testing.TB, _ string) blob.Store { return s3.Store(t) })
	withPhoto := func() (io.Reader, string) {
		return multipartBody(t, part{name: "email", value: "a@example.com"}, part{name: "message", value: "with photo"},
			part{name: "photo", filename: "p.png", ctype: "image/png", data: pngBytes})
	}
	inbox := func() []struct {
		ID    string
		Files []struct{ URL string }
	} {
		t.Helper()
		r := e.Admin("GET", "/projects/demo/forms/contact/submissions", nil)
		if r.Status != 200 {
			t.Fatalf("inbox = %d %s", r.Status, r.Body)
		}
		var page struct {
			Items []struct {
				ID    string
				Files []struct{ URL string }
			}
		}
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		return page.Items
	}

	s3.Down()
	body, ctype := withPhoto()
	r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype)
	if r.Status != 503 || r.Code() != "STORAGE_UNAVAILABLE" {
		t.Errorf("submission with a file, S3 down = %d %s, want 503 STORAGE_UNAVAILABLE", r.Status, r.Body)
	}
	if got := inbox(); len(got) != 0 {
		t.Errorf("inbox after the refused submission holds %d submissions, want none", len(got))
	}
	if r := e.Do("POST", submit, map[string]any{"email": "b@example.com", "message": "no file"}, "X-API-Key", "pk_live_demo_web"); r.Status != 201 {
		t.Errorf("submission without a file, S3 down = %d %s, want 201 (it needs no blob)", r.Status, r.Body)
	}

	s3.Up(t)
	if got := s3.Objects(t); len(got) != 0 {
		t.Errorf("bucket after the refused submission holds %v, want nothing (no half-stored submission)", got)
	}
	body, ctype = withPhoto()
	if r := e.Do("POST", submit, body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype); r.Status != 201 {
		t.Fatalf("the same submission once S3 is back = %d %s", r.Status, r.Body)
	}
	items := inbox()
	if len(items) != 2 || len(items[0].Files) != 1 {
		t.Fatalf("inbox once S3 is back = %+v, want the file-less submission and the one with its file", items)
	}
	if r := e.Do("GET", items[0].Files[0].URL, nil, "Authorization", "Bearer test-admin-token"); r.Status != 200 || !bytes.Equal(r.Body, pngBytes) {
		t.Errorf("the submission's file = %d, %d bytes, want the %d bytes sent", r.Status, len(r.Body), len(pngBytes))
	}
}

func TestSecondFileRefusedStoresNothing(t *testing.T) {
	t.Parallel()
	s3 := s3test.Start(t, "forms")
	e := startBlobs(t, "", nil, func(t testing.TB, _ string) blob.Store { return &failSecondPut{Store: s3.Store(t)} })
	body, ctype := multipartBody(t, part{name: "caption", value: "two"},
		part{name: "front", filename: "f.png", ctype: "image/png", data: pngBytes},
		part{name: "back", filename: "b.png", ctype: "image/png", data: pngBytes})
	r := e.Do("POST", "/forms/forms/gallery/submit", body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype)
	if r.Status != 503 || r.Code() != "STORAGE_UNAVAILABLE" {
		t.Errorf("submission whose second file S3 refused = %d %s, want 503 STORAGE_UNAVAILABLE", r.Status, r.Body)
	}
	if got := s3.Objects(t); len(got) != 0 {
		t.Errorf("bucket holds %v, want nothing (the first file removed)", got)
	}
	r = e.Admin("GET", "/projects/demo/forms/gallery/submissions", nil)
	var page struct{ Items []any }
	if err := json.Unmarshal(r.Body, &page); r.Status != 200 || err != nil || len(page.Items) != 0 {
		t.Errorf("inbox = %d %s, want no submission", r.Status, r.Body)
	}
}

// downOnSecondPut is a blob store whose S3 service goes down just before the second Put, as
// an outage between two files of one submission.
type downOnSecondPut struct {
	*blob.S3 // Open, Delete, List
	s3       *s3test.Service
	puts     atomic.Int32
}

func (d *downOnSecondPut) Put(ctx context.Context, key string, r io.Reader, ctype string) (int64, error) {
	if d.puts.Add(1) == 2 {
		d.s3.Down()
	}
	return d.S3.Put(ctx, key, r, ctype)
}

// S3 lost between two files of one submission leaves the first file behind (it cannot be
// removed either); the orphan sweep removes it once it is older than forms.OrphanAge, and
// leaves the files of stored submissions alone.
func TestOrphanFilesSwept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s3 := s3test.Start(t, "forms")
	e := startBlobs(t, "", nil, func(t testing.TB, _ string) blob.Store { return &downOnSecondPut{S3: s3.Store(t), s3: s3} })
	gallery := func() (io.Reader, string) {
		return multipartBody(t, part{name: "caption", value: "two"},
			part{name: "front", filename: "f.png", ctype: "image/png", data: pngBytes},
			part{name: "back", filename: "b.png", ctype: "image/png", data: pngBytes})
	}
	body, ctype := gallery()
	if r := e.Do("POST", "/forms/forms/gallery/submit", body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype); r.Status != 503 || r.Code() != "STORAGE_UNAVAILABLE" {
		t.Fatalf("submission with S3 lost after its first file = %d %s, want 503 STORAGE_UNAVAILABLE", r.Status, r.Body)
	}
	s3.Up(t)
	orphan := s3.Objects(t)
	if len(orphan) != 1 {
		t.Fatalf("bucket after S3 was lost between two files = %v, want the first file alone", orphan)
	}
	body, ctype = gallery()
	if r := e.Do("POST", "/forms/forms/gallery/submit", body, "X-API-Key", "pk_live_demo_web", "Content-Type", ctype); r.Status != 201 {
		t.Fatalf("submission once S3 is back = %d %s", r.Status, r.Body)
	}
	if n, err := e.svc.SweepOrphans(ctx, forms.OrphanAge); err != nil || n != 0 {
		t.Errorf("sweep of files younger than OrphanAge removed %d (%v), want none", n, err)
	}
	if n, err := e.svc.SweepOrphans(ctx, 0); err != nil || n != 1 {
		t.Errorf("sweep removed %d (%v), want the orphan alone", n, err)
	}
	left := s3.Objects(t)
	if len(left) != 2 || slices.Contains(left, orphan[0]) {
		t.Errorf("bucket after the sweep = %v, want the stored submission's two files and not %s", left, orphan[0])
	}
}
