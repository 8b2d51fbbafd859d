package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/backup"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// backupSynopsis heads backup --help.
var backupSynopsis = strings.Trim(`
  gatehouse backup --to FILE [--config FILE] [--data DIR]
  gatehouse backup --to FILE --server URL [--token T]

Writes a consistent snapshot of a node (its database and the files of the local blob store)
to FILE, a gzipped tar. Without --server it opens the store serve would open (the config
file, GATEHOUSE_* variables, --data) and needs the node stopped; with --server it asks a
running node for the snapshot (GET /admin/v1/backup, the admin token). FILE appears only
once the archive is complete and verified.`, "\n")

// restoreSynopsis heads restore --help.
var restoreSynopsis = strings.Trim(`
  gatehouse restore --from FILE --data DIR

Restores a backup into DIR, which must be missing or empty; then run
gatehouse serve --data DIR.`, "\n")

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
		write = func(w io.Writer) error { return client().download(ctx, "/backup", w) }
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
	fmt.Fprintf(stdout, "backup written to %s (%s, created %s, blobs: %s)\n", *to, m.Backend, m.CreatedAt.Format("2006-01-02T15:04:05Z"), m.Blobs)
	return nil
}

// backupOffline opens the store of a stopped node and writes its archive to w.
func backupOffline(ctx context.Context, cfg config.Config, w io.Writer) error {
	dir := filepath.Join(cfg.Data, "db")
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("no store in %s: %w", cfg.Data, err)
	}
	db, err := store.Open(storeOptions(cfg, dir, nil))
	if err != nil {
		return fmt.Errorf("%w\n(is a node running on this folder? back it up through it: gatehouse backup --to FILE --server URL --token T)", err)
	}
	defer db.Close()
	return backup.Write(ctx, w, backupSource(cfg, db))
}

// backupSource is what a backup of the node configured by cfg reads: its store, and its blob
// folder when blobs are local.
func backupSource(cfg config.Config, db *store.DB) backup.Source {
	src := backup.Source{DB: db, TempDir: cfg.Data, Version: version}
	if cfg.Files.Backend == "" || cfg.Files.Backend == "local" {
		src.BlobsDir = filepath.Join(cfg.Data, "blobs")
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

// download streams an admin GET's body into w.
func (c *adminClient) download(ctx context.Context, path string, w io.Writer) error {
	if c.token == "" {
		return fmt.Errorf("an admin token is required: --token or GATEHOUSE_ADMIN_TOKEN")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+"/admin/v1"+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		e := &apiError{Method: http.MethodGet, Path: path, Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return e
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// restoreCmd is `gatehouse restore`.
func restoreCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	from := fs.String("from", "", "the archive gatehouse backup wrote")
	data := fs.String("data", "", "the data folder to restore into (missing or empty)")
	setUsage(fs, stdout, restoreSynopsis, nil)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || *data == "" || fs.NArg() > 0 {
		return fmt.Errorf("usage: gatehouse restore --from FILE --data DIR (see --help)")
	}
	f, err := os.Open(*from)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := backup.Restore(ctx, f, *data, store.Options{SyncWrites: true})
	if errors.Is(err, backup.ErrNotEmpty) {
		return fmt.Errorf("%w: restore needs a missing or empty folder", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored the backup of %s (gatehouse %s) into %s; run: gatehouse serve --data %s\n", m.CreatedAt.Format("2006-01-02T15:04:05Z"), m.Version, *data, *data)
	return nil
}
