package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Key layout (all under the "files" prefix):
//
//	files/a/<assetID>                    the Asset (JSON)
//	files/o/<org>/<assetID>              org listing index (ids are time-ordered: newest last)
//	files/p/<org>/<project>/<assetID>    project listing index
//	files/h/<org>/<sha256>/<assetID>     completed assets by content hash
//	files/s/<unix-millis>/<assetID>      sweep queue: pending assets and their deadline
//	files/v/<project>/<name>             a named variant of the tenants document (section.go)
//	files/b/<assetID>/<key>              a variant made of the asset (variant_build.go)
const prefix = "files"

func assetKey(id string) []byte { return store.Key(prefix, "a", id) }

func listPrefix(s Scope) []byte {
	if s.Project != "" {
		return store.Prefix(prefix, "p", s.Org, s.Project)
	}
	return store.Prefix(prefix, "o", s.Org)
}

func hashPrefix(org, sum string) []byte { return store.Prefix(prefix, "h", org, sum) }

func sweepKey(at time.Time, id string) []byte {
	return store.Key(prefix, "s", fmt.Sprintf("%013d", at.UnixMilli()), id)
}

func sweepPrefix() []byte { return store.Prefix(prefix, "s") }

// indexKeys are the listing keys of a.
func indexKeys(a *Asset) [][]byte {
	keys := [][]byte{store.Key(prefix, "o", a.Org, a.ID)}
	if a.Project != "" {
		keys = append(keys, store.Key(prefix, "p", a.Org, a.Project, a.ID))
	}
	return keys
}

func getAsset(txn *store.Txn, id string) (*Asset, error) {
	raw, err := txn.Get(assetKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrAssetNotFound
	}
	if err != nil {
		return nil, err
	}
	var a Asset
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("files: decode asset %s: %w", id, err)
	}
	return &a, nil
}

func putAsset(txn *store.Txn, a *Asset) error {
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	return txn.Set(assetKey(a.ID), raw)
}

// deleteAsset removes a and every index key pointing at it.
func deleteAsset(txn *store.Txn, a *Asset) error {
	keys := append(indexKeys(a), assetKey(a.ID), sweepKey(a.Sweep, a.ID))
	if a.SHA256 != "" {
		keys = append(keys, store.Key(prefix, "h", a.Org, a.SHA256, a.ID))
	}
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
