package store

import "errors"

func openPostgres(opts Options) (engine, error) {
	return nil, errors.New("store: the postgres backend is not built yet")
}
