package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/membudget"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// Options are the Service's dependencies.
type Options struct {
	DB     *store.DB
	Blobs  blob.Store
	Signer *Signer
	// FilesBase is {files_base_url}: upload URLs are FilesBase + "/upload/<id>?...".
	FilesBase string
	// AssetBase is {asset_host}: public URLs are AssetBase + "/" + storageKey.
	AssetBase string
	// Now is the clock (URL expiry, sweeping); time.Now when nil.
	Now func() time.Time
	Log *slog.Logger
	// Registerer receives the product's metrics; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// Events hears each completion inside its transaction (events.go); nil for none.
	Events Events
	// Shared says other gateway nodes write the same store (a shared database): a cached
	// asset is then checked to still exist before it is served (another node may delete it).
	Shared bool
	// VariantSigner signs and checks ad-hoc variant URLs (required).
	VariantSigner *VariantSigner
	// VariantMaxPixels is the largest source a variant is made of (40 MP when <= 0).
	VariantMaxPixels int
	// VariantMemoryMB bounds the builds running at once (256 MB when <= 0; the gateway derives
	// it from its memory budget, edge/membudget).
	VariantMemoryMB int
	// VariantSlots is how many builds run at once (the CPUs, at most 4, when <= 0: serve runs
	// more Go processors than cores, procs.go, and a build keeps a core busy).
	VariantSlots int
	// VariantQueue is how many builds of one project may wait (8 when <= 0).
	VariantQueue int
	// VariantWait is how long a build waits for a slot before 503 (10 s when <= 0).
	VariantWait time.Duration
	// Encoder writes variants (codec.Codecs, WebP and AVIF in WebAssembly, when nil).
	Encoder Encoder
	// VariantWorker is the command line of the variant worker process (worker.go): this
	// binary's `variant-worker` command, started at the first build, with a lane per build
	// slot, at a lower CPU priority. Nil builds in this process with Encoder.
	VariantWorker []string
}

// Service holds the rules of the File-asset product.
type Service struct {
	o    Options
	now  func() time.Time
	log  *slog.Logger
	hot  *lru.Cache[string, *Asset] // completed public assets for the asset host
	base string
	m    *metrics

	variants *tenantcache.Cache[*NamedVariant] // named variants by project and name
	builtHot *lru.Cache[string, *Built]        // made variants by "<asset id>/<key>"
	open     *openObjects                      // the objects of recently served variants
	signed   *lru.Cache[string, Spec]          // ad-hoc segments verified, by "<project>/<asset id>/<segment>"
	halves   *lru.Cache[string, int]           // sourceHalves of recent originals, by asset id
	flight   singleflight.Group                // one build per variant at a time
	pool     *buildPool
	enc      Encoder
	workers  *workers // nil: builds run in this process
	sources  *sources // decodes shared by builds in this process
}

// NewService returns a Service; DB, Blobs and Signer are required. It starts nothing.
func NewService(o Options) (*Service, error) {
	if o.DB == nil || o.Blobs == nil || o.Signer == nil || o.VariantSigner == nil {
		return nil, errors.New("files: DB, Blobs, Signer and VariantSigner are required")
	}
	if o.VariantMaxPixels <= 0 {
		o.VariantMaxPixels = 40_000_000
	}
	if o.VariantMemoryMB <= 0 {
		o.VariantMemoryMB = 256
	}
	if o.VariantSlots <= 0 {
		o.VariantSlots = min(runtime.NumCPU(), 4)
	}
	if o.VariantQueue <= 0 {
		o.VariantQueue = 8
	}
	if o.VariantWait <= 0 {
		o.VariantWait = 10 * time.Second
	}
	if o.Encoder == nil {
		o.Encoder = codec.New(o.VariantSlots)
	}
	s := &Service{o: o, now: o.Now, log: o.Log}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.hot, _ = lru.New[string, *Asset](4096)
	s.base = strings.TrimRight(o.AssetBase, "/")
	s.variants = tenantcache.New[*NamedVariant](4096, "variant", "project")
	s.builtHot, _ = lru.New[string, *Built](8192)
	s.open = newOpenObjects(128)
	s.signed, _ = lru.New[string, Spec](4096)
	s.halves, _ = lru.New[string, int](4096)
	// An eighth of the variant memory keeps recent decodes (sources), the rest bounds the
	// builds running at once.
	budget := int64(o.VariantMemoryMB) << 20
	keep := budget / 8
	s.pool = newBuildPool(o.VariantSlots, o.VariantQueue, budget-keep, o.VariantWait)
	s.enc = o.Encoder
	s.sources = newSources(keep)
	if len(o.VariantWorker) > 0 {
		s.workers = newWorkers(o.VariantWorker, o.VariantSlots, keep, budget+membudget.WorkerBaseMB<<20, s.log)
	}
	s.m = newMetrics(o.Registerer, s.pool)
	return s, nil
}

// Close stops the variant worker processes (none when builds run in this process) and closes
// the variants' objects kept open.
func (s *Service) Close() error {
	s.open.close()
	if s.workers == nil {
		return nil
	}
	return s.workers.Close()
}

// AssetBase is {asset_host} without a trailing slash.
func (s *Service) AssetBase() string { return s.base }

// ValidatePresign checks a presign request: field problems are VALIDATION_FAILED, then the
// type (UNSUPPORTED_MEDIA_TYPE) and the size (FILE_TOO_LARGE).
func ValidatePresign(r *PresignRequest) error {
	var probs []apierr.FieldProblem
	r.Filename = strings.TrimSpace(r.Filename)
	switch {
	case r.Filename == "":
		probs = append(probs, apierr.FieldProblem{Field: "filename", Problem: "is required"})
	case len(r.Filename) > 255:
		probs = append(probs, apierr.FieldProblem{Field: "filename", Problem: "must be at most 255 bytes"})
	case strings.ContainsFunc(r.Filename, func(c rune) bool { return c < ' ' || c == 0x7f }):
		probs = append(probs, apierr.FieldProblem{Field: "filename", Problem: "must not contain control characters"})
	}
	r.MimeType = strings.ToLower(strings.TrimSpace(r.MimeType))
	if r.MimeType == "" {
		probs = append(probs, apierr.FieldProblem{Field: "mimeType", Problem: "is required"})
	}
	if r.Size <= 0 {
		probs = append(probs, apierr.FieldProblem{Field: "size", Problem: "must be a positive integer (bytes)"})
	}
	if len(r.FolderID) > 128 {
		probs = append(probs, apierr.FieldProblem{Field: "folderId", Problem: "must be at most 128 characters"})
	}
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	if !Accepted(r.MimeType) {
		return ErrUnsupportedType
	}
	if r.Size > MaxFileSize {
		return ErrTooLarge
	}
	return nil
}

// Presign creates a pending asset in scope and returns its upload slot.
func (s *Service) Presign(ctx context.Context, sc Scope, r PresignRequest) (Slot, error) {
	if err := ValidatePresign(&r); err != nil {
		return Slot{}, err
	}
	now := s.now().UTC()
	id := IDPrefix + store.NewID()
	exp := now.Add(URLLifetime).Truncate(time.Second)
	a := &Asset{
		ID: id, Org: sc.Org, Project: sc.Project, Filename: r.Filename,
		StorageKey: sc.Org + "/originals/" + id + "/" + SafeFilename(r.Filename),
		MimeType:   r.MimeType, Size: r.Size, FolderID: r.FolderID, Status: StatusPending,
		Public: true, Tags: []string{}, CreatedAt: now, ExpiresAt: exp, Sweep: exp,
	}
	if err := blob.CheckKey(a.StorageKey); err != nil {
		return Slot{}, fmt.Errorf("files: storage key %q: %w", a.StorageKey, err)
	}
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		if err := putAsset(txn, a); err != nil {
			return err
		}
		for _, k := range append(indexKeys(a), sweepKey(a.Sweep, a.ID)) {
			if err := txn.Set(k, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Slot{}, err
	}
	q := s.o.Signer.Query(Grant{AssetID: id, Size: r.Size, Type: r.MimeType, Expires: exp})
	return Slot{
		AssetID: id, StorageKey: a.StorageKey,
		UploadURL: strings.TrimRight(s.o.FilesBase, "/") + "/upload/" + id + "?" + q,
		ExpiresAt: exp.Format(apitime.Layout),
	}, nil
}

// Get returns the asset id if scope sees it, else ErrAssetNotFound.
func (s *Service) Get(ctx context.Context, sc Scope, id string) (*Asset, error) {
	var a *Asset
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		var err error
		a, err = getAsset(txn, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !sc.sees(a) {
		return nil, ErrAssetNotFound
	}
	return a, nil
}

// Complete marks an uploaded asset completed, after checking the caller's optional hash and
// dimensions against what the upload measured. Completing a completed asset answers it again.
func (s *Service) Complete(ctx context.Context, sc Scope, r CompleteRequest) (*Asset, error) {
	var out *Asset
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		a, err := getAsset(txn, r.AssetID)
		if err != nil {
			return err
		}
		if !sc.sees(a) {
			return ErrAssetNotFound
		}
		if a.Status == StatusCompleted {
			out = a
			return nil
		}
		if !a.Uploaded {
			return ErrIncomplete
		}
		var probs []apierr.FieldProblem
		if r.FileHash != "" && !strings.EqualFold(strings.TrimPrefix(r.FileHash, "sha256:"), a.SHA256) {
			probs = append(probs, apierr.FieldProblem{Field: "fileHash", Problem: "does not match the SHA-256 of the uploaded bytes"})
		}
		if r.Width != nil && *r.Width != a.Width {
			probs = append(probs, apierr.FieldProblem{Field: "width", Problem: fmt.Sprintf("the uploaded image is %d pixels wide", a.Width)})
		}
		if r.Height != nil && *r.Height != a.Height {
			probs = append(probs, apierr.FieldProblem{Field: "height", Problem: fmt.Sprintf("the uploaded image is %d pixels high", a.Height)})
		}
		if len(probs) > 0 {
			return apierr.Validation(probs...)
		}
		if err := txn.Delete(sweepKey(a.Sweep, a.ID)); err != nil {
			return err
		}
		a.Status = StatusCompleted
		if err := txn.Set(store.Key(prefix, "h", a.Org, a.SHA256, a.ID), nil); err != nil {
			return err
		}
		out = a
		if err := putAsset(txn, a); err != nil || s.o.Events == nil {
			return err
		}
		return s.o.Events.AssetCompleted(ctx, txn, a.Project, a.View(s.o.AssetBase))
	})
	return out, err
}

// Duplicate finds a completed asset in scope whose bytes have the SHA-256 sum (64 hex digits).
func (s *Service) Duplicate(ctx context.Context, sc Scope, sum string) (string, bool, error) {
	sum = strings.ToLower(strings.TrimSpace(sum))
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return "", false, apierr.Validation(apierr.FieldProblem{Field: "hash", Problem: "must be the SHA-256 of the file as 64 hex digits"})
	}
	found := ""
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: hashPrefix(sc.Org, sum), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			id := store.LastPart(k)
			if sc.Project != "" {
				a, err := getAsset(txn, id)
				if errors.Is(err, ErrAssetNotFound) || (err == nil && !sc.sees(a)) {
					return true, nil
				}
				if err != nil {
					return false, err
				}
			}
			found = id
			return false, nil
		})
	})
	return found, found != "", err
}

// List returns a page of the assets scope sees, newest first, after the asset id after (""
// for the first page), optionally only those whose MIME type starts with category + "/", and
// the id to list the next page after ("" on the last).
func (s *Service) List(ctx context.Context, sc Scope, limit int, after, category string) ([]*Asset, string, error) {
	match := func(mime string) bool { return category == "" || strings.HasPrefix(mime, category+"/") }
	possible := false
	for t := range accepted {
		possible = possible || match(t)
	}
	if !possible {
		return nil, "", nil
	}
	pre := listPrefix(sc)
	var page []*Asset
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		o := store.IterOptions{Prefix: pre, Reverse: true, KeysOnly: true}
		if after != "" {
			o.Start = append(append([]byte{}, pre...), after...)
		}
		return txn.Iterate(o, func(k, _ []byte) (bool, error) {
			id := store.LastPart(k)
			if id == after {
				return true, nil
			}
			a, err := getAsset(txn, id)
			if errors.Is(err, ErrAssetNotFound) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			if match(a.MimeType) {
				page = append(page, a)
			}
			return len(page) <= limit, nil
		})
	})
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(page) > limit {
		page = page[:limit]
		next = page[limit-1].ID
	}
	return page, next, nil
}

// Upload receives the bytes of a slot from the signed PUT. It verifies the URL, claims the slot
// (a second PUT is ErrSlotUsed), and streams body to blob storage while hashing it and, in a
// second goroutine fed through a pipe, sniffing its type and reading its dimensions (or
// checking the SVG). contentLength is -1 when unknown; contentType "" when not sent. A body
// longer than the slot is cut off at size+1 bytes and refused.
func (s *Service) Upload(ctx context.Context, id, rawQuery, contentType string, contentLength int64, body io.Reader) (a *Asset, err error) {
	defer func() {
		size := int64(0)
		if a != nil {
			size = a.Size
		}
		s.m.upload(size, err)
	}()
	g, err := s.o.Signer.Verify(id, rawQuery, s.now())
	if err != nil {
		return nil, apierr.New(ErrURLInvalid.Status, ErrURLInvalid.Code, ErrURLInvalid.Message, err)
	}
	a, err = s.claim(ctx, g)
	if err != nil {
		return nil, err
	}
	m, err := s.receive(ctx, a, contentType, contentLength, body)
	if err != nil {
		s.release(a)
		return nil, err
	}
	err = s.o.DB.Update(ctx, func(txn *store.Txn) error {
		cur, err := getAsset(txn, a.ID)
		if err != nil {
			return err
		}
		if err := txn.Delete(sweepKey(cur.Sweep, cur.ID)); err != nil {
			return err
		}
		cur.Receiving, cur.Uploaded = false, true
		cur.SHA256, cur.Width, cur.Height = m.sum, m.Width, m.Height
		cur.Sweep = cur.ExpiresAt.Add(CompleteGrace)
		if err := txn.Set(sweepKey(cur.Sweep, cur.ID), nil); err != nil {
			return err
		}
		a = cur
		return putAsset(txn, cur)
	})
	if err != nil {
		s.release(a)
		return nil, err
	}
	return a, nil
}

// claim marks the slot as receiving, refusing a used or busy slot.
func (s *Service) claim(ctx context.Context, g Grant) (*Asset, error) {
	var a *Asset
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		var err error
		a, err = getAsset(txn, g.AssetID)
		if errors.Is(err, ErrAssetNotFound) {
			return ErrURLInvalid
		}
		if err != nil {
			return err
		}
		if a.Size != g.Size || a.MimeType != g.Type {
			return ErrURLInvalid
		}
		if a.Uploaded || a.Receiving || a.Status != StatusPending {
			return ErrSlotUsed
		}
		a.Receiving = true
		return putAsset(txn, a)
	})
	return a, err
}

// release frees a claimed slot after a failed upload, removing any partial object.
func (s *Service) release(a *Asset) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.o.Blobs.Delete(ctx, a.StorageKey); err != nil {
		s.log.Warn("files: removing a refused upload", "asset", a.ID, "err", err)
	}
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		cur, err := getAsset(txn, a.ID)
		if err != nil {
			return err
		}
		cur.Receiving = false
		return putAsset(txn, cur)
	})
	if err != nil && !errors.Is(err, ErrAssetNotFound) {
		s.log.Warn("files: releasing an upload slot", "asset", a.ID, "err", err)
	}
}

type measured struct {
	Measure
	sum string
}

// receive streams body into the asset's object and returns what the bytes measured.
func (s *Service) receive(ctx context.Context, a *Asset, contentType string, contentLength int64, body io.Reader) (measured, error) {
	if contentType != "" {
		mt, _, _ := strings.Cut(contentType, ";")
		if mt = strings.ToLower(strings.TrimSpace(mt)); mt != a.MimeType {
			return measured{}, mismatch("Content-Type " + mt + " differs from the slot's " + a.MimeType)
		}
	}
	if contentLength >= 0 && contentLength != a.Size {
		return measured{}, mismatch(fmt.Sprintf("the body has %d bytes, the slot is for %d", contentLength, a.Size))
	}
	pr, pw := io.Pipe()
	type result struct {
		m   Measure
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := Analyze(pr, a.MimeType)
		if err != nil {
			pr.CloseWithError(err)
		} else {
			pr.Close()
		}
		done <- result{m, err}
	}()
	mt := &meter{r: body, limit: a.Size, h: sha256.New(), w: pw}
	n, putErr := s.o.Blobs.Put(ctx, a.StorageKey, blob.SizedReader(mt, a.Size), a.MimeType)
	if putErr == nil {
		var one [1]byte
		if k, _ := mt.Read(one[:]); k > 0 || mt.err != nil {
			putErr = mismatch(fmt.Sprintf("the body is longer than the slot's %d bytes", a.Size))
		} else if n != a.Size || mt.n != a.Size {
			putErr = mismatch(fmt.Sprintf("the body has %d bytes, the slot is for %d", mt.n, a.Size))
		}
	}
	if putErr != nil {
		pw.CloseWithError(putErr)
	} else {
		pw.Close()
	}
	res := <-done
	var apiErr *apierr.Error
	switch {
	case putErr != nil && mt.err == nil && !errors.As(putErr, &apiErr):
		// The blob store failed (S3 unreachable, say) while the body was fine so far: the
		// analyzer saw the failure as a cut body, which is not the caller's fault.
		return measured{}, fmt.Errorf("files: storing %s: %w", a.ID, putErr)
	case res.err != nil && errors.As(res.err, &apiErr):
		return measured{}, res.err
	case mt.err != nil && errors.As(mt.err, &apiErr):
		return measured{}, mt.err
	case putErr != nil && errors.As(putErr, &apiErr):
		return measured{}, putErr
	case putErr != nil:
		return measured{}, fmt.Errorf("files: storing %s: %w", a.ID, putErr)
	case res.err != nil:
		return measured{}, mismatch("the bytes cannot be read as " + a.MimeType)
	}
	return measured{Measure: res.m, sum: hex.EncodeToString(mt.h.Sum(nil))}, nil
}

// meter counts, hashes and forwards (to the analyzer) what storage reads from the body, and
// refuses byte limit+1.
type meter struct {
	r     io.Reader
	limit int64
	n     int64
	h     hash.Hash
	w     *io.PipeWriter
	err   error
	eof   bool // the body ended: never read it again (a chunked stream would wait for more)
}

func (m *meter) Read(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	if m.eof {
		return 0, io.EOF
	}
	n, err := m.r.Read(p)
	m.eof = err == io.EOF
	if n > 0 {
		if m.n+int64(n) > m.limit {
			m.err = mismatch(fmt.Sprintf("the body is longer than the slot's %d bytes", m.limit))
			return 0, m.err
		}
		m.n += int64(n)
		m.h.Write(p[:n])
		if _, werr := m.w.Write(p[:n]); werr != nil {
			m.err = werr
			return 0, werr
		}
	}
	return n, err
}

// GetAny returns any asset by id, whatever its org (the admin API).
func (s *Service) GetAny(ctx context.Context, id string) (*Asset, error) {
	var a *Asset
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		var err error
		a, err = getAsset(txn, id)
		return err
	})
	return a, err
}
