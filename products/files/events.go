package files

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Events is told of each asset that completes, inside the transaction that marks it completed
// (the composition root turns it into an asset.completed webhook event, decisions.md 8.3).
// project is the asset's project ("" for an org-level asset). An error aborts the completion.
type Events interface {
	AssetCompleted(ctx context.Context, txn *store.Txn, project string, a View) error
}
