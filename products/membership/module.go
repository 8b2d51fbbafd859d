package membership

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/module"
)

// Build builds the Membership product (module.Builder): GET {public_url}/membership/config,
// answered from a per-project cache that every committed tenancy change invalidates. It has
// no background component.
func Build(_ context.Context, d module.Deps) (module.Module, error) {
	svc, err := NewService(Options{DB: d.DB, Notify: d.Tenancy})
	if err != nil {
		return module.Module{}, err
	}
	return module.Module{
		Name:   "membership",
		API:    []edge.Product{NewAPI(svc, d.Auth)},
		Owner:  svc,
		Legacy: LegacyConverters(),
	}, nil
}
