package files

import "context"

// SourceHalvesForTest is the service's estimate of an asset's decoded size (sourceHalves).
func SourceHalvesForTest(s *Service, ctx context.Context, a *Asset) int {
	return s.sourceHalves(ctx, a)
}
