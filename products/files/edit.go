package files

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Bounds of the editable metadata of an asset.
const (
	MaxTitle  = 500
	MaxAlt    = 2000
	MaxTags   = 50
	MaxTagLen = 64
)

// Edit is a change of an asset's metadata (PATCH): a nil Set* leaves the field as it is; a
// Title or Alt of nil with SetTitle/SetAlt clears it.
type Edit struct {
	SetTitle, SetAlt, SetTags bool
	Title, Alt                *string
	Tags                      []string
}

// check validates an edit and normalizes its tags (trimmed, deduplicated, in order).
func (e *Edit) check() error {
	var probs []apierr.FieldProblem
	text := func(field string, v *string, max int) {
		switch {
		case v == nil:
		case !utf8.ValidString(*v):
			probs = append(probs, apierr.FieldProblem{Field: field, Problem: "must be valid UTF-8"})
		case utf8.RuneCountInString(*v) > max:
			probs = append(probs, apierr.FieldProblem{Field: field, Problem: "is too long"})
		}
	}
	text("title", e.Title, MaxTitle)
	text("alt", e.Alt, MaxAlt)
	if e.SetTags {
		seen := map[string]bool{}
		tags := []string{}
		for _, t := range e.Tags {
			t = strings.TrimSpace(t)
			switch {
			case t == "" || !utf8.ValidString(t) || utf8.RuneCountInString(t) > MaxTagLen || strings.ContainsAny(t, "\x00\r\n"):
				probs = append(probs, apierr.FieldProblem{Field: "tags", Problem: "each tag must be 1-64 characters of one line"})
			case !seen[t]:
				seen[t] = true
				tags = append(tags, t)
			}
		}
		if len(tags) > MaxTags {
			probs = append(probs, apierr.FieldProblem{Field: "tags", Problem: "at most 50 tags"})
		}
		e.Tags = tags
	}
	if len(probs) > 0 {
		return apierr.Validation(probs...)
	}
	return nil
}

// EditAsset changes an asset's title, alt text or tags. visible says whether the caller may see
// an asset of org (another org's asset answers ErrAssetNotFound, unchanged).
func (s *Service) EditAsset(ctx context.Context, id string, e Edit, visible func(org string) bool) (*Asset, error) {
	if err := e.check(); err != nil {
		return nil, err
	}
	var out *Asset
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		a, err := visibleAsset(txn, id, visible)
		if err != nil {
			return err
		}
		if e.SetTitle {
			a.Title = e.Title
		}
		if e.SetAlt {
			a.Alt = e.Alt
		}
		if e.SetTags {
			a.Tags = e.Tags
		}
		out = a
		return putAsset(txn, a)
	})
	if err != nil {
		return nil, err
	}
	s.hot.Remove(id)
	s.halves.Remove(id)
	return out, nil
}

// visibleAsset reads asset id inside txn; ErrAssetNotFound as well when visible refuses its
// org (another org's asset is not there for the caller).
func visibleAsset(txn *store.Txn, id string, visible func(org string) bool) (*Asset, error) {
	a, err := getAsset(txn, id)
	if err != nil {
		return nil, err
	}
	if !visible(a.Org) {
		return nil, ErrAssetNotFound
	}
	return a, nil
}

// DeleteAsset removes an asset, its indexes, its bytes and its variants: its public URLs answer
// 404 at once (the records go first, so the asset host stops finding it before the bytes go).
// visible as for EditAsset.
func (s *Service) DeleteAsset(ctx context.Context, id string, visible func(org string) bool) error {
	var gone *Asset
	var variants []Built
	err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		a, err := visibleAsset(txn, id, visible)
		if err != nil {
			return err
		}
		gone = a
		err = txn.Iterate(store.IterOptions{Prefix: builtPrefix(id)}, func(_, v []byte) (bool, error) {
			var b Built
			if err := json.Unmarshal(v, &b); err != nil {
				return false, err
			}
			variants = append(variants, b)
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, b := range variants {
			if err := txn.Delete(builtKey(id, b.Key)); err != nil {
				return err
			}
		}
		return deleteAsset(txn, a)
	})
	if err != nil {
		return err
	}
	s.hot.Remove(id)
	s.halves.Remove(id)
	keys := []string{gone.StorageKey}
	folder, byFolder := s.o.Blobs.(blob.PrefixDeleter)
	for _, b := range variants {
		s.builtHot.Remove(id + "/" + b.Key)
		s.open.forget(b.BlobKey)
		if !byFolder {
			keys = append(keys, b.BlobKey)
		}
	}
	// The variants' folder goes whole where the store can: it also holds the files of
	// variants whose record a crash lost (their records are written unsynced, variant_build.go).
	if byFolder {
		if err := folder.DeletePrefix(ctx, variantFolder(gone.Org, id)); err != nil {
			s.log.Warn("files: deleting an asset's variants", "asset", id, "err", err)
		}
	}
	for _, k := range keys {
		if err := s.o.Blobs.Delete(ctx, k); err != nil && !errors.Is(err, blob.ErrNotFound) {
			// The asset is gone for every reader; the bytes are an orphan to log, not a
			// failure the caller could fix by retrying (the id no longer exists).
			s.log.Warn("files: deleting an asset's bytes", "asset", id, "key", k, "err", err)
		}
	}
	return nil
}
