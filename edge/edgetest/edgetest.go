// Package edgetest starts a real gateway for tests: the store under test (storetest: badger in a
// temp folder, or postgres with GATEHOUSE_TEST_STORE=postgres), the tenancy and
// auth services, and the fiber server on a loopback port, with helpers to apply tenants
// documents and send requests. Products use it for their API tests.
package edgetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge"
	"github.com/gatehouse-dev/gatehouse/edge/accounts"
	"github.com/gatehouse-dev/gatehouse/edge/admin"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/config"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// AdminToken is the admin token every harness server uses.
const AdminToken = "test-admin-token"

// Deps are what a product is built from in a test.
type Deps struct {
	Config   config.Config
	Log      *slog.Logger
	DB       *store.DB
	Tenancy  *tenancy.Service
	Auth     *auth.Authenticator
	Registry *prometheus.Registry
	// Accounts holds the dashboard's users and sessions (session.go signs in with them).
	Accounts *accounts.Service
	// Dir is the harness's data folder.
	Dir string
}

// Options configures New.
type Options struct {
	// Config edits the default test configuration before anything starts.
	Config func(*config.Config)
	// Products builds the products to mount from the harness's dependencies.
	Products func(t testing.TB, d Deps) []edge.Product
	// Tenants is a tenants document applied before the server starts.
	Tenants string
	// Dir reuses a data folder (restart tests); a fresh t.TempDir() when empty.
	Dir string
	// Now is the tenancy clock.
	Now func() time.Time
	// KeepRequestMemory turns off the poisoning of request memory after each request
	// (edge.Options.PoisonRequestMemory), to show what a test catches with it on.
	KeepRequestMemory bool
}

// Harness is a running gateway.
type Harness struct {
	Deps
	URL    string
	Server *edge.Server
	t      testing.TB
}

// New starts a gateway on 127.0.0.1 and stops it when the test ends.
func New(t testing.TB, o Options) *Harness {
	t.Helper()
	dir := o.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	cfg := config.Default()
	cfg.Data = dir
	cfg.Listen = ln.Addr().String()
	cfg.PublicURL = base
	cfg.AdminToken = AdminToken
	cfg.Storage.SyncWrites = false
	if o.Config != nil {
		o.Config(&cfg)
	}
	level := slog.LevelWarn
	if os.Getenv("GATEHOUSE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))
	// The backend GATEHOUSE_TEST_STORE names (storetest): badger in dir/db, or a database of
	// the private PostgreSQL server that a restart on the same dir finds again (kept past t
	// when the folder is the caller's: restart tests reopen it from another subtest).
	storeOptions := storetest.Options
	if o.Dir != "" {
		storeOptions = storetest.ReusedOptions
	}
	so := storeOptions(t, store.Options{Dir: dir + "/db", SyncWrites: cfg.Storage.SyncWrites, Log: log,
		BlockCacheMB: cfg.Storage.BlockCacheMB, IndexCacheMB: cfg.Storage.IndexCacheMB,
		MemTableMB: cfg.Storage.MemTableMB, NumMemtables: cfg.Storage.NumMemtables})
	if so.Backend == store.BackendPostgres {
		cfg.Storage.Backend, cfg.Storage.Postgres.URL = config.BackendPostgres, so.PostgresURL
	}
	db, err := store.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	ten, err := tenancy.NewService(tenancy.Options{DB: db, Now: o.Now})
	if err != nil {
		t.Fatal(err)
	}
	keys := auth.New(auth.Options{Lookup: ten, Size: 1000})
	ten.OnChange(func(context.Context, []journal.Change) { keys.Purge() })
	reg := prometheus.NewRegistry()
	h := &Harness{Deps: Deps{Config: cfg, Log: log, DB: db, Tenancy: ten, Auth: keys, Registry: reg, Dir: dir}, URL: base, t: t}
	var products []edge.Product
	if o.Products != nil {
		products = o.Products(t, h.Deps)
	}
	if o.Tenants != "" {
		h.Apply(o.Tenants)
	}
	if h.Accounts, err = accounts.NewService(accounts.Options{DB: db, Now: o.Now}); err != nil {
		t.Fatal(err)
	}
	acc := admin.NewAccounts(admin.AccountsOptions{Accounts: h.Accounts, Tenancy: ten, Secure: admin.SecureCookie(cfg.PublicURL), Path: "/"})
	// Every harness poisons the request memory fiber lends to handlers after each request: a
	// handler that keeps a string of a request fails its product's tests at once.
	srv, err := edge.New(edge.Options{Config: cfg, Log: log, Registry: reg, Products: products,
		Admin: []edge.AdminProduct{admin.NewAPI(ten), acc}, Sessions: acc, ProjectOrg: projectOrg(ten),
		PoisonRequestMemory: !o.KeepRequestMemory})
	if err != nil {
		t.Fatal(err)
	}
	h.Server = srv
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		// Shutdown before Serve registered the listener would leave Serve blocked in Accept:
		// closing the listener ends it either way.
		_ = ln.Close()
		<-done
		_ = db.Close()
	})
	return h
}

// Apply applies a tenants document through the service and fails the test on error.
func (h *Harness) Apply(doc string) *tenancy.Report {
	h.t.Helper()
	d, err := h.Tenancy.Parse([]byte(doc))
	if err != nil {
		h.t.Fatalf("Parse tenants: %v", err)
	}
	rep, err := h.Tenancy.Apply(context.Background(), d)
	if err != nil {
		h.t.Fatalf("Apply tenants: %v", err)
	}
	return rep
}

// Response is a finished request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map (or fails the test).
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// Code returns the body's "error" field ("" when none).
func (r *Response) Code() string {
	var m struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.Error
}

// Do sends a request. body may be nil, a string, []byte, io.Reader, or any value sent as JSON.
// headers are name/value pairs.
func (h *Harness) Do(method, path string, body any, headers ...string) *Response {
	h.t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
		ctype = "application/json"
	case []byte:
		rd = bytes.NewReader(b)
		ctype = "application/json"
	case io.Reader:
		rd = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
		ctype = "application/json"
	}
	url := path
	if !strings.HasPrefix(path, "http") {
		url = h.URL + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if strings.EqualFold(headers[i], "Host") {
			req.Host = headers[i+1]
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if problem := h.checkContract(req, resp.StatusCode, resp.Header, raw); problem != "" {
		h.t.Error(problem)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Admin sends an admin API request with the harness's token.
func (h *Harness) Admin(method, path string, body any) *Response {
	h.t.Helper()
	return h.Do(method, "/admin/v1"+path, body, "Authorization", "Bearer "+AdminToken)
}

// Scenario is one HTTP expectation, for table tests.
type Scenario struct {
	Name    string
	Method  string
	Path    string
	Key     string
	Body    any
	Headers []string
	Status  int
	// Code is the expected "error" field; "-" means the body must have none.
	Code string
}

// Run runs scenarios as parallel subtests.
func (h *Harness) Run(t *testing.T, scenarios []Scenario) {
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			headers := sc.Headers
			if sc.Key != "" {
				headers = append([]string{"X-API-Key", sc.Key}, headers...)
			}
			r := h.Do(sc.Method, sc.Path, sc.Body, headers...)
			if r.Status != sc.Status {
				t.Errorf("%s %s = %d, want %d; body %s", sc.Method, sc.Path, r.Status, sc.Status, r.Body)
			}
			switch {
			case sc.Code == "-" && r.Code() != "":
				t.Errorf("%s %s: error %q, want no error code", sc.Method, sc.Path, r.Code())
			case sc.Code != "" && sc.Code != "-" && r.Code() != sc.Code:
				t.Errorf("%s %s: error %q, want %q; body %s", sc.Method, sc.Path, r.Code(), sc.Code, r.Body)
			}
		})
	}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
