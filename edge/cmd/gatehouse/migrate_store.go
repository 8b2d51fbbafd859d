package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/backup"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// migrateSynopsis heads migrate --help.
var migrateSynopsis = strings.Trim(`
  gatehouse migrate --from DATA_DIR --to postgres://user:password@host:5432/db

Copies the embedded store of a stopped node (DATA_DIR/db) into an empty shared database, the
way from one node to many (storage.backend postgres). Every key is copied in one pass over a
consistent read of the source, then the target is counted again and compared; the counts per
product are printed. A target that holds anything is refused and left as it is; a copy that
fails midway deletes what it wrote, so it can be run again. The files of
DATA_DIR/blobs are not copied: put them where the nodes read blobs (files.backend s3, or a
shared folder with files.local_shared). This is not the layout move of an upgrade, which
serve does by itself at start.`, "\n")

// migrateCmd is `gatehouse migrate`.
func migrateCmd(ctx context.Context, args []string, stdout io.Writer, env []string) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	from := fs.String("from", "", "data folder of a stopped node (its store is DATA_DIR/db)")
	to := fs.String("to", "", "libpq URL of the empty target database (default $GATEHOUSE_STORAGE_POSTGRES_URL)")
	setUsage(fs, stdout, migrateSynopsis, [][2]string{{config.EnvName("storage.postgres.url"), "default of --to"}})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *to == "" {
		*to = envValue(env, config.EnvName("storage.postgres.url"))
	}
	if *from == "" || *to == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: gatehouse migrate --from DATA_DIR --to postgres://... (see --help)")
	}
	if err := config.CheckPostgresURL("--to", *to); err != nil {
		return err
	}
	dir := filepath.Join(*from, "db")
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("no store in %s: %w", *from, err)
	}
	src, err := store.Open(store.Options{Dir: dir})
	if err != nil {
		return fmt.Errorf("opening %s (is a node running on it? stop it first): %w", *from, err)
	}
	defer src.Close()
	target := config.Default()
	target.Storage.Backend, target.Storage.Postgres.URL = config.BackendPostgres, *to
	dst, err := openStore(target, nil)
	if err != nil {
		return err
	}
	defer dst.Close()
	n, err := copyStore(ctx, src, dst)
	if err != nil && !errors.Is(err, errTargetNotEmpty) {
		// A copy cut short leaves the target empty again, so the migration can be rerun.
		err = errors.Join(err, backup.Clear(context.Background(), dst))
	}
	if err != nil {
		return fmt.Errorf("migrate to %s: %w", config.RedactURL(*to), err)
	}
	fmt.Fprintf(stdout, "copied %d keys from %s to %s (counted again in the target):\n", n.total(), *from, config.RedactURL(*to))
	for _, p := range n.prefixes() {
		fmt.Fprintf(stdout, "  %-12s %d\n", p, n[p])
	}
	if files, size := countFiles(filepath.Join(*from, "blobs")); files > 0 {
		fmt.Fprintf(stdout, "not copied: %d files (%d bytes) in %s; put them where every node reads blobs (files.backend s3, or a shared folder with files.local_shared: true)\n",
			files, size, filepath.Join(*from, "blobs"))
	}
	return nil
}

// envValue returns the value of name in env (os.Environ form), or "".
func envValue(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// errTargetNotEmpty refuses a migration into a database that already holds a store.
var errTargetNotEmpty = errors.New("the target database is not empty: migrate copies into an empty one only (nothing was written)")

// keyCounts counts keys by their first part (the owning product or edge package).
type keyCounts map[string]int

func (c keyCounts) add(key []byte) {
	p, _, _ := bytes.Cut(key, []byte{store.Sep})
	c[string(p)]++
}

func (c keyCounts) total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

func (c keyCounts) prefixes() []string {
	out := make([]string, 0, len(c))
	for p := range c {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// copyStore copies every key of src into dst, which must hold none (errTargetNotEmpty), then
// counts dst again: the copy is reported only when both counts agree.
func copyStore(ctx context.Context, src, dst *store.DB) (keyCounts, error) {
	if n, err := countKeys(ctx, dst, 1); err != nil {
		return nil, err
	} else if n.total() > 0 {
		return nil, errTargetNotEmpty
	}
	copied := keyCounts{}
	b := dst.NewBatch()
	err := src.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{}, func(k, v []byte) (bool, error) {
			copied.add(k)
			// The batch keeps the slices until it commits; the iterator's are reused.
			return true, b.Set(bytes.Clone(k), bytes.Clone(v))
		})
	})
	if err != nil {
		b.Cancel()
		return nil, fmt.Errorf("reading the source: %w", err)
	}
	if err := b.Flush(); err != nil {
		return nil, fmt.Errorf("writing the target: %w", err)
	}
	got, err := countKeys(ctx, dst, 0)
	if err != nil {
		return nil, err
	}
	for p := range mergeKeys(copied, got) {
		if copied[p] != got[p] {
			return nil, fmt.Errorf("the target holds %d keys under %q after the copy of %d", got[p], p, copied[p])
		}
	}
	return copied, nil
}

func mergeKeys(a, b keyCounts) map[string]bool {
	m := map[string]bool{}
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}

// countKeys counts the keys of db by first part, stopping after limit keys when limit > 0.
func countKeys(ctx context.Context, db *store.DB, limit int) (keyCounts, error) {
	n := keyCounts{}
	err := db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{KeysOnly: true}, func(k, _ []byte) (bool, error) {
			n.add(k)
			return limit <= 0 || n.total() < limit, nil
		})
	})
	return n, err
}

// countFiles counts the regular files below dir and their bytes (0 when dir is missing).
func countFiles(dir string) (files int, size int64) {
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				files++
				size += info.Size()
			}
		}
		return nil
	})
	return files, size
}
