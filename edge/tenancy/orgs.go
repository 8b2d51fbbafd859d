package tenancy

import "context"

// Orgs lists every org in slug order (the dashboard's operator view).
func (s *Service) Orgs(ctx context.Context) ([]OrgInfo, error) {
	return listJSON[OrgInfo](ctx, s, prefix(kOrg))
}
