package files

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// OpenPublic finds the completed public asset served at {asset_host}/<org>/originals/<id>/<name>
// and opens its object. Anything else (pending, private, another org, another name) is
// ErrAssetNotFound.
func (s *Service) OpenPublic(ctx context.Context, org, id, name string) (*Asset, blob.Object, error) {
	a, err := s.publicAsset(ctx, org, id, name)
	if err != nil {
		return nil, nil, err
	}
	obj, err := s.openBlob(ctx, a.StorageKey)
	if err != nil {
		return nil, nil, err
	}
	return a, obj, nil
}

// publicAsset finds the completed public asset whose original is <org>/originals/<id>/<name>.
// Completed assets never change, so they are cached by id; a deletion drops its entry, and on
// a shared store (another node may delete) a cached asset is checked to still exist, one key
// read.
func (s *Service) publicAsset(ctx context.Context, org, id, name string) (*Asset, error) {
	a, ok := s.hot.Get(id)
	if ok && s.o.Shared {
		err := s.o.DB.View(ctx, func(txn *store.Txn) error {
			var err error
			ok, err = txn.Has(assetKey(id))
			return err
		})
		if err != nil {
			return nil, err
		}
		if !ok {
			s.hot.Remove(id)
			return nil, ErrAssetNotFound
		}
	}
	if !ok {
		err := s.o.DB.View(ctx, func(txn *store.Txn) error {
			var err error
			a, err = getAsset(txn, id)
			return err
		})
		if err != nil {
			return nil, err
		}
		if a.Status == StatusCompleted {
			s.hot.Add(strings.Clone(id), a)
		}
	}
	if a.Status != StatusCompleted || !a.Public || a.StorageKey != org+"/originals/"+id+"/"+name {
		return nil, ErrAssetNotFound
	}
	return a, nil
}

// openBlob opens the object at key; a missing one is ErrAssetNotFound.
func (s *Service) openBlob(ctx context.Context, key string) (blob.Object, error) {
	obj, err := s.o.Blobs.Open(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, ErrAssetNotFound
	}
	return obj, err
}

// ParseRange reads a Range header against an object of size bytes. It answers the first byte
// and length to send and the status: 200 (no or ignored range: several ranges, other units,
// malformed), 206 (one satisfiable range) or 416 (unsatisfiable).
func ParseRange(h string, size int64) (start, length int64, status int) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return 0, size, 200
	}
	a, b, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, size, 200
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == "" { // suffix: the last b bytes
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, size, 200
		}
		if n == 0 || size == 0 {
			return 0, 0, 416
		}
		if n > size {
			n = size
		}
		return size - n, n, 206
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 {
		return 0, size, 200
	}
	last := size - 1
	if b != "" {
		l, err := strconv.ParseInt(b, 10, 64)
		if err != nil || l < first {
			return 0, size, 200
		}
		if l < last {
			last = l
		}
	}
	if first >= size {
		return 0, 0, 416
	}
	return first, last - first + 1, 206
}
