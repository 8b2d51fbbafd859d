package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/cursor"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/memtrim"
	"github.com/gatehouse-dev/gatehouse/edge/secrets"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// loadConfig builds the configuration: defaults, the config file, GATEHOUSE_* variables, flags.
func loadConfig(args []string, env []string, stdout, stderr io.Writer) (config.Config, string, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "config file (default configs/gatehouse.yaml when present)")
	data := fs.String("data", "", "data folder (default ./data; GATEHOUSE_DATA)")
	listen := fs.String("listen", "", "listen address (default :8787; GATEHOUSE_LISTEN)")
	tenants := fs.String("tenants", "", "tenants document (YAML or JSON) applied at start")
	setUsage(fs, stdout, serveSynopsis, serveEnv())
	if err := fs.Parse(args); err != nil {
		return config.Config{}, "", err
	}
	cfg, err := layerConfig(*cfgFile, env)
	if err != nil {
		return cfg, "", err
	}
	if *data != "" {
		cfg.Data = *data
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	return cfg, *tenants, cfg.Validate()
}

// layerConfig reads the defaults, the config file (file, or configs/gatehouse.yaml when
// present) and the GATEHOUSE_* variables; the caller applies its flags and validates.
func layerConfig(file string, env []string) (config.Config, error) {
	cfg := config.Default()
	if file == "" {
		if _, err := os.Stat("configs/gatehouse.yaml"); err == nil {
			file = "configs/gatehouse.yaml"
		}
	}
	if file != "" {
		if err := cfg.LoadFile(file); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.LoadEnv(env)
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs the gateway until ctx ends (SIGINT/SIGTERM), then drains and closes storage.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, env []string) error {
	cfg, tenantsFile, err := loadConfig(args, env, stdout, stderr)
	if err != nil {
		return err
	}
	if err := checkSharedBlobs(cfg); err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	for _, w := range config.UnknownEnv(env, clientEnvNames()...) {
		log.Warn(w)
	}
	// Listen first: an empty public_url is derived from the address really bound (the port
	// of ":0" included), before anything builds a URL from it.
	// listen: "" serves HTTPS only (tls.mode acme or files; config.Validate checks).
	var (
		ln      net.Listener
		startup *edge.Startup
	)
	if cfg.Listen != "" {
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return err
		}
		// The probes answer from the first instant: 503 (/healthz 200) while storage opens, the
		// components are wired and the tenants document is applied, then the server takes over.
		startup = edge.NewStartup(ln)
		startup.Start()
		defer startup.Close()
	}
	tl, err := listenTLS(cfg)
	if err != nil {
		return err
	}
	if tl != nil {
		defer tl.close(context.Background())
	}
	resolvePublicURL(&cfg, ln, tl)
	cfg, budget, shares, err := memoryBudget(cfg, log)
	if err != nil {
		return err
	}
	stopDebug, err := startDebug(cfg.DebugListen, log)
	if err != nil {
		return err
	}
	defer stopDebug()
	cores := setProcs(cfg.MaxProcs, os.Getenv("GOMAXPROCS") != "")
	log.Debug("go processors", "gomaxprocs", runtime.GOMAXPROCS(0), "cores", cores)
	db, err := openStore(cfg, log)
	if err != nil {
		return err
	}
	if cfg.Storage.Backend == config.BackendPostgres {
		log.Info("storage opened", "backend", cfg.Storage.Backend, "url", config.RedactURL(cfg.Storage.Postgres.URL))
	} else {
		log.Info("storage opened", "backend", cfg.Storage.Backend, "dir", filepath.Join(cfg.Data, "db"))
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			log.Error("closing storage", "err", cerr)
		} else {
			log.Info("storage closed")
		}
	}()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	edge.StorageGauge(reg, db.Size)
	memoryMetrics(reg, budget, shares, db)
	trim := memtrim.New(cfg.Data, int64(shares.MappedMB)<<20, 0, log)
	_ = trim.Start(ctx)
	defer func() { _ = trim.Stop(context.Background()) }()
	trimMetrics(reg, trim)

	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		return err
	}
	keys := auth.New(auth.Options{Lookup: ten, Size: 10000})
	ten.OnChange(func(context.Context, []journal.Change) { keys.Purge() })

	secret, err := secrets.Get(ctx, db, "cursor-key", 32)
	if err != nil {
		return err
	}
	cursors, err := cursor.NewCursors(secret)
	if err != nil {
		return err
	}
	blobs, err := blob.Open(ctx, cfg.Files, filepath.Join(cfg.Data, "blobs"))
	if err != nil {
		return err
	}
	rdb, err := openRedis(cfg, log)
	if err != nil {
		return err
	}
	if rdb != nil {
		defer rdb.Close()
	}
	node, err := nodeID(cfg.Data)
	if err != nil {
		return err
	}
	app, err := wire(ctx, deps{cfg: cfg, log: log, db: db, tenancy: ten, auth: keys, reg: reg, cursors: cursors, blobs: blobs, redis: rdb, node: node, cores: cores, mem: shares})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := app.close(); cerr != nil {
			log.Error("closing components", "err", cerr)
		}
	}()

	var doc *tenancy.Document
	if tenantsFile != "" {
		raw, err := os.ReadFile(tenantsFile)
		if err != nil {
			return err
		}
		if doc, err = ten.Parse(raw); err != nil {
			var inv *tenancy.InvalidError
			if errors.As(err, &inv) {
				inv.File = tenantsFile // "tenants.yaml:14: orgs[0].projcts: unknown key"
				return err
			}
			return fmt.Errorf("%s: %w", tenantsFile, err)
		}
		rep, err := ten.Apply(ctx, doc)
		if err != nil {
			return fmt.Errorf("%s: %w", tenantsFile, err)
		}
		log.Info("tenants applied", "file", tenantsFile, "changed", rep.Changed, "created", rep.Created, "updated", rep.Updated, "unchanged", rep.Unchanged)
		for _, g := range rep.Generated {
			fmt.Fprintf(stdout, "generated key %s (shown once): %s\n", keyLabel(g.Org, g.Project, g.Name), g.Value)
		}
		printSecrets(stdout, rep.Secrets)
	}

	if tl != nil {
		// Before the server answers: mode files loads its files, mode acme serves what the
		// store holds and obtains what is missing in the background.
		if err := tl.start(ctx, cfg, db, node, app.domains, log, reg); err != nil {
			return err
		}
		ten.OnChange(tl.mgr.Changed) // tenant domains added or removed: their certificates follow
	}
	srv, err := app.server(cfg, log, reg, func() error {
		// A node whose database is unreachable is not ready either (the load balancer sends
		// its traffic to the others).
		pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := db.Ping(pctx); err != nil {
			return errors.New("storage unreachable")
		}
		return nil
	})
	if err != nil {
		return err
	}
	errc := make(chan error, 3)
	serving := 0
	var served net.Listener
	if startup != nil {
		served = startup.Handoff()
		serving++
		go func() { errc <- srv.Serve(served) }()
	}
	if tl != nil {
		serving += tl.serve(srv, errc)
	}
	// halt stops listening and waits for the requests under way (or sctx's end).
	halt := func(sctx context.Context) error {
		err := srv.Shutdown(sctx)
		if served != nil {
			_ = served.Close() // in case Serve had not registered it yet
		}
		if tl != nil {
			err = errors.Join(err, tl.shutdown(sctx))
			_ = tl.https.Close()
		}
		for ; serving > 0; serving-- {
			<-errc
		}
		return err
	}
	// When a component fails to start, the listener stops with the components that did start:
	// nothing keeps answering.
	if err := app.launch(ctx, halt, cfg.ShutdownTimeout.D()); err != nil {
		return err
	}
	// The banner says the gateway is ready: it comes after the components started.
	addr := ""
	if ln != nil {
		addr = ln.Addr().String()
	}
	if tl != nil {
		tl.banner(stdout, cfg)
		if addr == "" {
			addr = tl.https.Addr().String()
		}
	}
	banner(stdout, cfg, addr, doc)
	log.Info("gatehouse listening", "addr", addr, "public_url", cfg.PublicURL, "version", version)
	select {
	case err := <-errc:
		// A server stopped on its own: the others stop, and the components still stop before
		// storage closes.
		serving--
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.D())
		defer cancel()
		return errors.Join(err, halt(sctx), app.stop(sctx))
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.D())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout.D())
	defer cancel()
	if err := halt(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Error("shutdown", "err", err)
	}
	return app.stop(sctx)
}

// errLocalBlobs refuses a node on the shared database whose blobs only it could read.
var errLocalBlobs = errors.New("storage.backend postgres is for many nodes, and they must read each other's files: " +
	"set files.backend s3, or files.local_shared: true (GATEHOUSE_FILES_LOCAL_SHARED=true) when the blob folder {data}/blobs is shared by every node")

// checkSharedBlobs refuses the postgres backend with a blob store other nodes cannot read
// (decisions.md 8.4).
func checkSharedBlobs(cfg config.Config) error {
	if cfg.Storage.Backend == config.BackendPostgres && !cfg.SharedBlobs() {
		return errLocalBlobs
	}
	return nil
}

// keyPrefix names a key value by its kind prefix only: "sk_live_…".
func keyPrefix(value string) string {
	for _, p := range []string{"pk_live_", "pk_test_", "sk_live_"} {
		if strings.HasPrefix(value, p) {
			return p + "…"
		}
	}
	return "…"
}

// printSecrets prints the secrets an apply generated (webhook signing secrets; shown only here).
func printSecrets(w io.Writer, secrets []tenancy.GeneratedSecret) {
	for _, g := range secrets {
		fmt.Fprintf(w, "generated %s secret %s (shown once): %s\n", g.Kind, keyLabel(g.Org, g.Project, g.Name), g.Value)
	}
}

func keyLabel(org, project, name string) string {
	if project == "" {
		return org + "/" + name
	}
	return org + "/" + project + "/" + name
}

// banner prints the base URLs and the keys the tenants document names, for `make run`.
func banner(w io.Writer, cfg config.Config, addr string, doc *tenancy.Document) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nGatehouse %s listening on %s\n\n", version, addr)
	for _, p := range []string{"email", "files", "forms", "membership", "records"} {
		fmt.Fprintf(&b, "  %-11s %s\n", p, cfg.BaseURL(p))
	}
	fmt.Fprintf(&b, "  %-11s %s\n  %-11s %s\n", "asset host", cfg.AssetBaseURL(), "embed host", cfg.EmbedBaseURL())
	if doc != nil {
		// Names and prefixes only: key values never reach the output or a log (generated ones
		// were printed once, above; given ones are in the document).
		b.WriteString("\nKeys in the tenants document (values are in the document):\n")
		for _, o := range doc.Orgs {
			for _, k := range o.Keys {
				if k.Value != "" {
					fmt.Fprintf(&b, "  %-28s %-12s %s\n", keyLabel(o.Slug, "", k.Name), keyPrefix(k.Value), strings.Join(k.Products, ","))
				}
			}
			for _, p := range o.Projects {
				for _, k := range p.Keys {
					if k.Value != "" {
						fmt.Fprintf(&b, "  %-28s %-12s %s\n", keyLabel(o.Slug, p.ID, k.Name), keyPrefix(k.Value), strings.Join(k.Products, ","))
					}
				}
			}
		}
	}
	fmt.Fprintf(&b, "\nDashboard: %s/ (sign in as a dashboard user; the first one, password on stdin:\n", cfg.BaseURL("dashboard"))
	if cfg.AdminToken != "" {
		fmt.Fprintf(&b, "  gatehouse users create --email you@example.com --operator --server %s --token <admin_token>)\n", cfg.PublicURL)
	} else {
		fmt.Fprintf(&b, "  gatehouse users create --email you@example.com --operator --data %s, with the gateway stopped)\n", cfg.Data)
	}
	if cfg.AdminToken != "" {
		fmt.Fprintf(&b, "\nAdmin API: %s (Authorization: Bearer <admin_token>)\n", cfg.BaseURL("admin/v1"))
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
}

// storeOptions maps the storage.* configuration onto the store's options: badger in
// {data}/db, or the postgres database of storage.postgres.url.
func storeOptions(cfg config.Config, log *slog.Logger) store.Options {
	return store.Options{Backend: cfg.Storage.Backend, PostgresURL: cfg.Storage.Postgres.URL,
		Dir: filepath.Join(cfg.Data, "db"), SyncWrites: cfg.Storage.SyncWrites, Log: log,
		BlockCacheMB: cfg.Storage.BlockCacheMB, IndexCacheMB: cfg.Storage.IndexCacheMB,
		MemTableMB: cfg.Storage.MemTableMB, NumMemtables: cfg.Storage.NumMemtables,
		PostgresTimeout: time.Duration(cfg.Storage.Postgres.StatementTimeout)}
}

// openStore opens the store the configuration names (serve, backup, restore, users --data);
// an error names a postgres database by its URL with the password redacted.
func openStore(cfg config.Config, log *slog.Logger) (*store.DB, error) {
	db, err := store.Open(storeOptions(cfg, log))
	if err != nil && cfg.Storage.Backend == config.BackendPostgres {
		return nil, fmt.Errorf("storage.postgres.url %s: %w", config.RedactURL(cfg.Storage.Postgres.URL), err)
	}
	return db, err
}
