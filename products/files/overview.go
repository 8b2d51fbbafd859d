package files

import (
	"context"
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Overview is the files part of a project's overview (the dashboard's first page): its
// completed assets and their bytes, and the uploads still pending.
type Overview struct {
	Assets  int   `json:"assets"`
	Bytes   int64 `json:"bytes"`
	Pending int   `json:"pending"`
}

// Overview counts the assets of a project of org. It reads every asset of the project: a
// dashboard read, not a hot path.
func (s *Service) Overview(ctx context.Context, org, project string) (Overview, error) {
	var out Overview
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: listPrefix(Scope{Org: org, Project: project}), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			a, err := getAsset(txn, store.LastPart(k))
			if errors.Is(err, ErrAssetNotFound) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			if a.Status == StatusCompleted {
				out.Assets++
				out.Bytes += a.Size
			} else {
				out.Pending++
			}
			return true, nil
		})
	})
	return out, err
}
