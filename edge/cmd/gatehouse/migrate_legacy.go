package main

import (
	"context"
	"slices"

	"github.com/gatehouse-dev/gatehouse/edge/legacy"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
)

// legacyConverters are the converters of every owner of a kind of tenancy's old layout: the
// modules' (in build order: records' collections before their records) and the plugin
// registry's.
func (a *assembly) legacyConverters() []legacy.Converter {
	return slices.Concat(a.legacy, pluginreg.LegacyConverters())
}

// migrate moves the sections a data folder of an older release keeps below tenancy's keys to
// the parts that own them now (legacy.Migrate), once the modules are built and before anything
// reads the sections (the plugin sync and the tenants apply come after it; the modules'
// constructors read none). It is a no-op on a folder moved already or created by this release.
func (a *assembly) migrate(ctx context.Context, d *deps) error {
	n, err := legacy.Migrate(ctx, d.db, a.legacyConverters())
	if n > 0 {
		d.log.Info("moved the tenants data of an older release to its products", "entries", n)
	}
	return err
}
