package main

import (
	"context"
	"log/slog"
	"maps"

	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/membership"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// migrateLegacy moves the sections a data folder of an older release keeps below tenancy's keys
// to the products that own them now (tenancy.MigrateLegacy), before anything reads them. It is
// a no-op on a folder moved already or created by this release.
func migrateLegacy(ctx context.Context, db *store.DB, log *slog.Logger) error {
	conv := map[string]tenancy.LegacyFunc{}
	for _, c := range []map[string]tenancy.LegacyFunc{
		email.LegacyConverters(), forms.LegacyConverters(), membership.LegacyConverters(),
		records.LegacyConverters(), pluginreg.LegacyConverters(),
	} {
		maps.Copy(conv, c)
	}
	n, err := tenancy.MigrateLegacy(ctx, db, conv)
	if n > 0 {
		log.Info("moved the tenants data of an older release to its products", "entries", n)
	}
	return err
}
