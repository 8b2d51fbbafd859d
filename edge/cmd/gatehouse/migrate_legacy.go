package main

import (
	"context"
	"log/slog"
	"slices"

	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/forms"
	"github.com/gatehouse-dev/gatehouse/products/membership"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// legacyConverters are the converters of every owner of a kind of tenancy's old layout.
func legacyConverters() []legacy.Converter {
	return slices.Concat(email.LegacyConverters(), forms.LegacyConverters(), membership.LegacyConverters(),
		records.LegacyConverters(), pluginreg.LegacyConverters())
}

// migrateLegacy moves the sections a data folder of an older release keeps below tenancy's keys
// to the products that own them now (legacy.Migrate), before anything reads them. It is a no-op
// on a folder moved already or created by this release.
func migrateLegacy(ctx context.Context, db *store.DB, log *slog.Logger) error {
	n, err := legacy.Migrate(ctx, db, legacyConverters())
	if n > 0 {
		log.Info("moved the tenants data of an older release to its products", "entries", n)
	}
	return err
}
