package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/backup"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// backupSynopsis heads backup --help.
var backupSynopsis = strings.Trim(`
  gatehouse backup --to FILE [--config FILE] [--data DIR]
  gatehouse backup --to FILE --server URL [--token T]

Writes a consistent snapshot of a node (its database and every object of its blob store: the
local folder, or the S3 bucket with files.backend s3) to FILE, a gzipped tar. Without --server
it opens the store serve would open (the config file, GATEHOUSE_* variables, --data): a badger
node must be stopped, a postgres one may keep running. With --server it asks a running node
for the snapshot (GET /admin/v1/backup, the admin token). FILE appears only once the archive is
complete and verified.`, "\n")

// restoreSynopsis heads restore --help.
var restoreSynopsis = strings.Trim(`
  gatehouse restore --from FILE --data DIR
  gatehouse restore --from FILE --to postgres://user:password@host:5432/db [--data DIR]

Restores a backup of either backend into an empty store: with --data alone, a badger store in
DIR (missing or empty); with --to, the empty shared database at that URL. Blob files go to the
blob store the configuration names (--config, GATEHOUSE_*): DIR/blobs, or the S3 bucket with
files.backend s3. The archive is read through and checked before anything is written; a
restore that fails midway removes what it wrote. Then run gatehouse serve with that
configuration.`, "\n")

// backupCmd is `gatehouse backup`.
func backupCmd(ctx context.Context, args []string, stdout io.Writer, env []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	to := fs.String("to", "", "the archive to write (a .tar.gz)")
	cfgFile := fs.String("config", "", "config file (default configs/gatehouse.yaml when present)")
	data := fs.String("data", "", "data folder of a stopped node (default ./data; GATEHOUSE_DATA)")
	client := clientFlags(fs, env)
	setUsage(fs, stdout, backupSynopsis, append(append([][2]string{}, clientEnv...), [2]string{"GATEHOUSE_*", "the configuration, as for serve (offline backup)"}))
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *to == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: gatehouse backup --to FILE [--server URL --token T | --config FILE --data DIR] (see --help)")
	}
	online := false
	fs.Visit(func(f *flag.Flag) { online = online || f.Name == "server" || f.Name == "token" })
	if online && (*cfgFile != "" || *data != "") {
		return fmt.Errorf("--server backs up a running node: --config and --data are for a stopped one")
	}
	var write func(w io.Writer) error
	if online {
		write = func(w io.Writer) error {
			ac, err := client()
			if err != nil {
				return err
			}
			return ac.backup(ctx, w)
		}
	} else {
		cfg, err := layerConfig(*cfgFile, env)
		if err != nil {
			return err
		}
		if *data != "" {
			cfg.Data = *data
		}
		if err := cfg.Validate(); err != nil {
			return err
		}
		write = func(w io.Writer) error { return backupOffline(ctx, cfg, w) }
	}
	m, err := writeVerified(*to, write)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup written to %s (%s, created %s, blobs: %s, %d files)\n", *to, m.Backend, m.CreatedAt.Format("2006-01-02T15:04:05Z"), m.Blobs, m.BlobCount)
	return nil
}

// backupOffline opens the store and blob store the configuration names and writes their
// archive to w.
func backupOffline(ctx context.Context, cfg config.Config, w io.Writer) error {
	if cfg.Storage.Backend == config.BackendBadger {
		if _, err := os.Stat(filepath.Join(cfg.Data, "db")); err != nil {
			return fmt.Errorf("no store in %s: %w", cfg.Data, err)
		}
	}
	db, err := openStore(cfg, nil)
	if err != nil {
		if cfg.Storage.Backend == config.BackendBadger {
			err = fmt.Errorf("%w\n(is a node running on this folder? back it up through it: gatehouse backup --to FILE --server URL --token T)", err)
		}
		return err
	}
	defer db.Close()
	blobsDir := filepath.Join(cfg.Data, "blobs")
	if cfg.Files.Backend != "s3" {
		// serve creates the folder: without it this is not the node's data folder (a backup
		// of a postgres node from a machine that lacks the shared folder would miss every file).
		if _, err := os.Stat(blobsDir); err != nil {
			return fmt.Errorf("no blob folder in %s (give --data the node's data folder, or configure files.backend s3): %w", cfg.Data, err)
		}
	}
	blobs, err := blob.Open(ctx, cfg.Files, blobsDir)
	if err != nil {
		return err
	}
	return backup.Write(ctx, w, backupSource(cfg, db, blobs))
}

// backupSource is what a backup of the node configured by cfg reads: its store and its blob
// store. The database snapshot is staged in the data folder when it exists.
func backupSource(cfg config.Config, db *store.DB, blobs blob.Store) backup.Source {
	src := backup.Source{DB: db, Version: version}
	if b, ok := blobs.(backup.Blobs); ok {
		src.Blobs, src.BlobsKind = b, cfg.Files.Backend
	}
	if st, err := os.Stat(cfg.Data); err == nil && st.IsDir() {
		src.TempDir = cfg.Data
	}
	return src
}

// writeVerified writes an archive to a temporary file beside path, reads it through, and
// renames it into place: path never holds a partial backup.
func writeVerified(path string, write func(io.Writer) error) (backup.Manifest, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return backup.Manifest{}, err
	}
	defer os.Remove(f.Name()) // no-op after the rename
	defer f.Close()
	if err := write(f); err != nil {
		return backup.Manifest{}, err
	}
	if err := f.Sync(); err != nil {
		return backup.Manifest{}, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return backup.Manifest{}, err
	}
	m, err := backup.Verify(f)
	if err != nil {
		return m, err
	}
	if err := f.Close(); err != nil {
		return m, err
	}
	return m, os.Rename(f.Name(), path)
}

// backup streams the running server's backup archive (GET /admin/v1/backup) into w; the
// archive is not held in memory, so the untyped answer of the generated client is read here.
func (c *adminClient) backup(ctx context.Context, w io.Writer) error {
	resp, err := c.api.DownloadBackup(ctx)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err := refused(resp, raw); err != nil {
			return err
		}
		return fmt.Errorf("GET /backup: %d answer, want 200", resp.StatusCode)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// restoreCmd is `gatehouse restore`.
func restoreCmd(ctx context.Context, args []string, stdout io.Writer, env []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	from := fs.String("from", "", "the archive gatehouse backup wrote")
	data := fs.String("data", "", "the data folder to restore into (missing or empty); with --to, the folder of local blobs")
	to := fs.String("to", "", "libpq URL of an empty database to restore into (storage.backend postgres)")
	cfgFile := fs.String("config", "", "config file naming the blob store (default configs/gatehouse.yaml when present)")
	setUsage(fs, stdout, restoreSynopsis, [][2]string{{"GATEHOUSE_*", "the configuration, as for serve (the blob store)"}})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || (*data == "" && *to == "") || fs.NArg() > 0 {
		return fmt.Errorf("usage: gatehouse restore --from FILE (--data DIR | --to postgres://...) (see --help)")
	}
	cfg, err := layerConfig(*cfgFile, env)
	if err != nil {
		return err
	}
	cfg.Storage.Backend = config.BackendBadger
	if *to != "" {
		cfg.Storage.Backend, cfg.Storage.Postgres.URL = config.BackendPostgres, *to
		if err := config.CheckPostgresURL("--to", *to); err != nil {
			return err
		}
	}
	if *data != "" {
		cfg.Data = *data
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	f, err := os.Open(*from)
	if err != nil {
		return err
	}
	defer f.Close()
	// Read the archive through first: a broken one is refused before anything is written.
	m, err := backup.Verify(f)
	if err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if m.BlobCount > 0 && cfg.Files.Backend != "s3" && *data == "" {
		return fmt.Errorf("the archive holds %d blob files: give --data DIR (the blob folder every node shares, files.local_shared) or configure files.backend s3", m.BlobCount)
	}
	where, err := restoreInto(ctx, f, cfg)
	if errors.Is(err, backup.ErrNotEmpty) {
		return fmt.Errorf("%w: restore needs a missing or empty folder, or an empty database", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored the %s backup of %s (gatehouse %s, %d blob files) into %s; run: gatehouse serve %s\n",
		m.Backend, m.CreatedAt.Format("2006-01-02T15:04:05Z"), m.Version, m.BlobCount, where, serveHint(cfg))
	return nil
}

// restoreInto restores the archive r into the empty store and blob store cfg names, and says
// where. On failure it removes what it wrote (the folders it filled, the keys it loaded).
func restoreInto(ctx context.Context, r io.Reader, cfg config.Config) (where string, err error) {
	shared := cfg.Storage.Backend == config.BackendPostgres
	var created []string // folders this restore fills, removed on failure
	if shared {
		where = config.RedactURL(cfg.Storage.Postgres.URL)
	} else {
		where = cfg.Data
		if err := backup.CheckEmptyDir(cfg.Data); err != nil {
			return where, err
		}
		created = append(created, filepath.Join(cfg.Data, "db"))
	}
	if cfg.Files.Backend != "s3" {
		blobsDir := filepath.Join(cfg.Data, "blobs")
		if err := backup.CheckEmptyDir(blobsDir); err != nil {
			return where, err
		}
		created = append(created, blobsDir)
	}
	defer func() {
		if err != nil {
			for _, dir := range created {
				_ = os.RemoveAll(dir)
			}
		}
	}()
	cfg.Storage.SyncWrites = true
	db, err := openStore(cfg, nil)
	if err != nil {
		return where, err
	}
	if shared {
		if err := backup.CheckEmpty(ctx, db); err != nil {
			return where, errors.Join(err, db.Close())
		}
	}
	blobs, err := blob.Open(ctx, cfg.Files, filepath.Join(cfg.Data, "blobs"))
	if err == nil {
		_, err = backup.Restore(ctx, r, backup.Target{DB: db, Blobs: blobs})
	}
	if err != nil && shared {
		err = errors.Join(err, backup.Clear(context.Background(), db))
	}
	return where, errors.Join(err, db.Close())
}

// serveHint is how to start a node on what restore wrote.
func serveHint(cfg config.Config) string {
	if cfg.Storage.Backend == config.BackendPostgres {
		return "with storage.backend postgres and that storage.postgres.url"
	}
	return "--data " + cfg.Data
}
