package files

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// Built is a variant made and stored: files/b/<assetID>/<Key> -> Built, its bytes in the blob
// store at BlobKey, beside the original.
type Built struct {
	// Key names the variant among the asset's: the canonical spec with the format it asked for
	// ("w320_h320_cover_webp_q75"; "auto" for the JPEG-or-PNG answer of format auto).
	Key       string    `json:"key"`
	BlobKey   string    `json:"blobKey"`
	MimeType  string    `json:"mimeType"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	Width     int       `json:"width"`
	Height    int       `json:"height"`
	CreatedAt time.Time `json:"createdAt"`
}

func builtKey(assetID, key string) []byte { return store.Key(prefix, "b", assetID, key) }

// variantFolder is the blob folder of asset id's variants, beside its original:
// <org>/variants/<asset_id>.
func variantFolder(org, id string) string { return org + "/variants/" + id }
func builtPrefix(assetID string) []byte   { return store.Prefix(prefix, "b", assetID) }

// VariantRequest is one request of a variant URL: {asset_host}/<Org>/<Segment>/<ID>/<Name>,
// with the request's Accept header (format auto).
type VariantRequest struct {
	Org, Segment, ID, Name, Accept string
}

// VariantAnswer is what serves a variant URL: the variant's object and record, or for an SVG
// asset (no raster variants) the original (Built nil). Vary says the answer depends on Accept.
type VariantAnswer struct {
	Asset  *Asset
	Built  *Built
	Object blob.Object
	Vary   bool
}

// OpenVariant resolves a variant URL and opens its bytes, building the variant first when it
// was never made. Unknown asset or name: ErrAssetNotFound; a name the asset's project does not
// define: ErrVariantNotFound; an ad-hoc segment without a good signature: ErrVariantNotSigned.
func (s *Service) OpenVariant(ctx context.Context, r VariantRequest) (VariantAnswer, error) {
	a, err := s.publicAsset(ctx, r.Org, r.ID, r.Name)
	if err != nil {
		return VariantAnswer{}, err
	}
	var spec Spec
	if isAdHoc(r.Segment) {
		// A verified segment stays good (the key never changes): two HMACs saved per request
		// of a thumbnail served before. Only good ones are kept.
		memo := a.Project + "/" + a.ID + "/" + r.Segment
		var ok bool
		if spec, ok = s.signed.Get(memo); !ok {
			if spec, ok = s.o.VariantSigner.Verify(a.Project, a.ID, r.Segment); !ok {
				return VariantAnswer{}, ErrVariantNotSigned
			}
			s.signed.Add(memo, spec)
		}
	} else if spec, err = s.namedVariant(ctx, a.Project, r.Segment); err != nil {
		return VariantAnswer{}, err
	}
	if a.MimeType == "image/svg+xml" {
		obj, err := s.openBlob(ctx, a.StorageKey)
		return VariantAnswer{Asset: a, Object: obj}, err
	}
	target := spec.Format
	if target == "auto" {
		target = negotiate(r.Accept)
	}
	key := spec.key(target)
	for range 2 {
		b, err := s.built(ctx, a.ID, key)
		if errors.Is(err, store.ErrNotFound) {
			v, err, _ := s.flight.Do(a.ID+"/"+key, func() (any, error) { return s.build(a, spec, target, key) })
			if err != nil {
				return VariantAnswer{}, err
			}
			b = v.(*Built)
		} else if err != nil {
			return VariantAnswer{}, err
		} else {
			s.m.variantHits.Inc()
		}
		obj, err := s.open.open(b.BlobKey, func() (blob.Object, error) { return s.o.Blobs.Open(ctx, b.BlobKey) })
		if err == nil && obj.Size() != b.Size {
			// Written Remakeable, cut short by a crash before it reached the disk.
			obj.Close()
			s.open.forget(b.BlobKey)
			err = blob.ErrNotFound
		}
		if errors.Is(err, blob.ErrNotFound) {
			// The record outlived its bytes (removed by hand, or lost in a crash): forget it
			// and build again.
			s.dropBuilt(ctx, a.ID, key)
			continue
		}
		if err != nil {
			return VariantAnswer{}, err
		}
		return VariantAnswer{Asset: a, Built: b, Object: obj, Vary: spec.Format == "auto"}, nil
	}
	return VariantAnswer{}, fmt.Errorf("files: variant %s of %s vanished twice", key, a.ID)
}

// negotiate picks format auto's answer from an Accept header: avif, else webp, when named with a
// non-zero q; else "auto" (JPEG, or PNG for transparency).
func negotiate(accept string) string {
	webp := false
	for _, part := range strings.Split(accept, ",") {
		typ, params, _ := strings.Cut(part, ";")
		typ = strings.ToLower(strings.TrimSpace(typ))
		if typ != "image/avif" && typ != "image/webp" {
			continue
		}
		if q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q="); ok && strings.Trim(q, "0.") == "" {
			continue // q=0: not acceptable
		}
		if typ == "image/avif" {
			return "avif"
		}
		webp = true
	}
	if webp {
		return "webp"
	}
	return "auto"
}

// built returns the record of asset id's variant key (store.ErrNotFound when never made).
func (s *Service) built(ctx context.Context, id, key string) (*Built, error) {
	if b, ok := s.builtHot.Get(id + "/" + key); ok {
		return b, nil
	}
	var b Built
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(builtKey(id, key))
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &b)
	})
	if err != nil {
		return nil, err
	}
	s.builtHot.Add(id+"/"+key, &b)
	return &b, nil
}

func (s *Service) dropBuilt(ctx context.Context, id, key string) {
	s.builtHot.Remove(id + "/" + key)
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error { return txn.Delete(builtKey(id, key)) })
	if err != nil {
		s.log.Warn("files: forgetting a variant without bytes", "asset", id, "variant", key, "err", err)
	}
}

// build makes the variant key of a in the pool, stores its bytes beside the original and
// records it. It runs once per variant at a time (the flight group), detached from the
// request that started it so a client going away does not fail the others waiting on it.
func (s *Service) build(a *Asset, spec Spec, target, key string) (b *Built, err error) {
	start := time.Now()
	defer func() { s.m.build(err, time.Since(start)) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if int64(a.Width)*int64(a.Height) > int64(s.o.VariantMaxPixels) {
		return nil, ErrVariantTooLarge
	}
	release, err := s.pool.acquire(ctx, a.Project, buildCost(a.Size, a.Width, a.Height, spec, s.sourceHalves(ctx, a)))
	switch {
	case errors.Is(err, errPoolBusy):
		return nil, ErrVariantBusy
	case err != nil:
		return nil, err
	}
	data, err := s.readOriginal(ctx, a)
	if err != nil {
		release()
		return nil, err
	}
	format := target
	if format == "auto" {
		format = ""
	}
	var out []byte
	var size image.Point
	content := "" // the original's content key: builds of the same bytes share a decode
	if a.SHA256 != "" {
		content = a.SHA256 + " " + a.MimeType
	}
	if s.workers != nil {
		out, format, size, err = s.workers.build(ctx, &buildRequest{Key: content, Data: data, Mime: a.MimeType, Spec: spec, Format: format, MaxPixels: s.o.VariantMaxPixels})
	} else {
		out, format, size, err = buildShared(s.sources, content, data, a.MimeType, spec, format, s.o.VariantMaxPixels, s.enc)
	}
	release()
	switch {
	case errors.Is(err, ErrVariantTooLarge):
		return nil, err
	case errors.Is(err, errUnreadable):
		return nil, apierr.New(ErrVariantSource.Status, ErrVariantSource.Code, ErrVariantSource.Message, err)
	case err != nil:
		return nil, err
	}
	sum := sha256.Sum256(out)
	b = &Built{
		Key: key, BlobKey: variantFolder(a.Org, a.ID) + "/" + key + "." + format,
		MimeType: codec.MimeType(format), Size: int64(len(out)), SHA256: hex.EncodeToString(sum[:]),
		Width: size.X, Height: size.Y, CreatedAt: s.now().UTC(),
	}
	// A variant can be made again from its original: neither its file nor its record waits
	// for the disk (OpenVariant rebuilds one whose file a crash cut short; a record a crash
	// lost is built again), and its record is written after its file.
	if _, err := s.o.Blobs.Put(blob.Remakeable(ctx), b.BlobKey, blob.SizedReader(bytes.NewReader(out), b.Size), b.MimeType); err != nil {
		return nil, fmt.Errorf("files: storing variant %s of %s: %w", key, a.ID, err)
	}
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	err = s.o.DB.UpdateUnsynced(ctx, func(txn *store.Txn) error {
		if ok, err := txn.Has(assetKey(a.ID)); err != nil || !ok {
			if err == nil {
				err = ErrAssetNotFound
			}
			return err
		}
		return txn.Set(builtKey(a.ID, key), raw)
	})
	if err != nil {
		// Deleted while building (or the store failed): no record may point at these bytes.
		if derr := s.o.Blobs.Delete(ctx, b.BlobKey); derr != nil {
			s.log.Warn("files: removing an unrecorded variant", "asset", a.ID, "variant", key, "err", derr)
		}
		return nil, err
	}
	s.builtHot.Add(a.ID+"/"+key, b)
	return b, nil
}

// headBytes is how much of an original sourceHalves reads: enough for the segments a camera
// writes before a JPEG's frame header (EXIF with its thumbnail, ICC), beyond which the
// estimate takes the most a pixel can hold.
const headBytes = 128 << 10

// sourceHalves reads the start of a's original for the estimate of its decoded size (the
// largest when it cannot be read). An original's bytes never change, so the estimate is
// kept by asset id: a flood of builds refused for want of a slot (503) reads no file; it
// read the start of the original for each one.
func (s *Service) sourceHalves(ctx context.Context, a *Asset) int {
	if h, ok := s.halves.Get(a.ID); ok {
		return h
	}
	obj, err := s.openBlob(ctx, a.StorageKey)
	if err != nil {
		return 8
	}
	defer obj.Close()
	head, err := io.ReadAll(io.LimitReader(obj, headBytes))
	h := sourceHalves(head, a.MimeType)
	if err == nil {
		s.halves.Add(a.ID, h)
	}
	return h
}

// readOriginal reads the original's bytes (at most MaxFileSize).
func (s *Service) readOriginal(ctx context.Context, a *Asset) ([]byte, error) {
	obj, err := s.openBlob(ctx, a.StorageKey)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("files: reading %s: %w", a.ID, err)
	}
	return data, nil
}

// Variants lists the variants made of asset id (the admin view), by key.
func (s *Service) Variants(ctx context.Context, id string) ([]Built, error) {
	out := []Built{}
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: builtPrefix(id)}, func(_, v []byte) (bool, error) {
			var b Built
			if err := json.Unmarshal(v, &b); err != nil {
				return false, err
			}
			out = append(out, b)
			return true, nil
		})
	})
	return out, err
}

// VariantURL returns the signed URL of an ad-hoc variant of asset id, which scope must see and
// which must be a completed public asset.
func (s *Service) VariantURL(ctx context.Context, sc Scope, id string, o VariantOptions) (string, error) {
	spec, err := CheckSpec(o)
	if err != nil {
		return "", err
	}
	a, err := s.Get(ctx, sc, id)
	if err != nil {
		return "", err
	}
	if a.Status != StatusCompleted || !a.Public {
		return "", ErrAssetNotFound
	}
	org, rest, _ := strings.Cut(a.StorageKey, "/originals/")
	return s.base + "/" + org + "/" + s.o.VariantSigner.Segment(a.Project, a.ID, spec) + "/" + rest, nil
}
