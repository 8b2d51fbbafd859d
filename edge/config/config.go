// Package config loads the server configuration into one typed Config: defaults, then
// configs/gatehouse.yaml (or --config), then GATEHOUSE_* environment variables, then flags.
// Every key has an environment variable: email.smtp.port is GATEHOUSE_EMAIL_SMTP_PORT.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/suggest"
	"github.com/gatehouse-dev/gatehouse/edge/yamldoc"
)

// Config is the whole server configuration. Field tags name the YAML keys.
type Config struct {
	Listen string `json:"listen"`
	Data   string `json:"data"`
	// PublicURL is where clients reach the gateway; empty means derived from the address the
	// server listens on (ResolvePublicURL).
	PublicURL      string   `json:"public_url"`
	AssetHost      string   `json:"asset_host"`
	EmbedHost      string   `json:"embed_host"`
	AdminToken     string   `json:"admin_token"`
	TrustedProxies []string `json:"trusted_proxies"`
	// MemoryLimitMB is the process's memory budget: the Go memory limit
	// (runtime/debug.SetMemoryLimit), split among the caches (edge/membudget). 0: GOMEMLIMIT
	// when set, else 90% of the cgroup's memory limit, else membudget.DefaultMB.
	MemoryLimitMB int `json:"memory_limit_mb"`
	// DebugListen is the address of a listener serving Go's runtime profiles (net/http/pprof,
	// edge/cmd/gatehouse/debug.go); empty (the default) serves none. Use a loopback address.
	DebugListen string `json:"debug_listen"`
	// MaxProcs is how many goroutines Go runs at once (runtime.GOMAXPROCS); 0 lets serve pick
	// (edge/cmd/gatehouse/procs.go: the GOMAXPROCS variable when set, else at least 4).
	MaxProcs  int    `json:"max_procs"`
	LogLevel  string `json:"log_level"`
	LogFormat string `json:"log_format"`
	// ShutdownTimeout bounds the graceful drain on SIGTERM.
	ShutdownTimeout Duration `json:"shutdown_timeout"`
	// ReadTimeout bounds how long a client may take to send one whole request (headers and
	// body, a streamed body included); a client that stops sending is answered 408.
	ReadTimeout Duration `json:"read_timeout"`
	Storage     Storage  `json:"storage"`
	Email       Email    `json:"email"`
	Files       Files    `json:"files"`
	Forms       Forms    `json:"forms"`
	Captcha     Captcha  `json:"captcha"`
	Plugins     Plugins  `json:"plugins"`
	Egress      Egress   `json:"egress"`
	Webhooks    Webhooks `json:"webhooks"`
	Redis       Redis    `json:"redis"`
	TLS         TLS      `json:"tls"`
}

// TLS is HTTPS at the edge (decisions.md 9.4; edge/certs): certificates from an ACME CA
// (acme), from files (files), or none (off). listen keeps serving plain HTTP beside it.
type TLS struct {
	// Mode is off, acme or files.
	Mode string `json:"mode"`
	// HTTPSListen is the address HTTPS is served on (mode acme or files).
	HTTPSListen string `json:"https_listen"`
	// HTTPListen answers ACME HTTP-01 challenges and redirects every other request to https
	// with 308; empty: no such listener (and no HTTP-01 challenge).
	HTTPListen string `json:"http_listen"`
	// Domains are the names the gateway holds certificates for (mode acme), besides the
	// tenants' domains obtained on demand.
	Domains []string `json:"domains"`
	// Email is the ACME account's contact.
	Email string `json:"email"`
	// CA is the ACME directory URL.
	CA string `json:"ca"`
	// CARoot is a PEM file of a private ACME CA's root, trusted for talking to that CA only.
	CARoot string `json:"ca_root"`
	// CertFile and KeyFile are the PEM certificate chain and key of mode files.
	CertFile string `json:"cert_file"`
	KeyFile  string `json:"key_file"`
	// HSTS adds Strict-Transport-Security to every HTTPS answer.
	HSTS bool `json:"hsts"`
}

// TLS modes (tls.mode).
const (
	TLSOff   = "off"
	TLSACME  = "acme"
	TLSFiles = "files"
)

// validate checks the tls section.
func (t TLS) validate() []error {
	var errs []error
	switch t.Mode {
	case TLSOff:
		return nil
	case TLSACME:
		if t.CA == "" {
			errs = append(errs, errors.New("tls.ca must name the ACME directory URL with tls.mode acme"))
		} else if u, err := url.Parse(t.CA); err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, fmt.Errorf("tls.ca %q must be an https:// ACME directory URL", t.CA))
		}
		for i, d := range t.Domains {
			if !IsHostname(d) {
				errs = append(errs, fmt.Errorf("tls.domains[%d] %q must be a DNS name such as api.example.com", i, d))
			}
		}
	case TLSFiles:
		if t.CertFile == "" || t.KeyFile == "" {
			errs = append(errs, errors.New("tls.cert_file and tls.key_file are required with tls.mode files"))
		}
	default:
		return []error{fmt.Errorf("tls.mode must be off, acme or files, not %q", t.Mode)}
	}
	if t.HTTPSListen == "" {
		errs = append(errs, fmt.Errorf("tls.https_listen is required with tls.mode %s", t.Mode))
	}
	return errs
}

// IsHostname reports a lower-case DNS name of at least two labels (letters, digits and inner
// hyphens, 1-63 each, 253 at most in all): the names certificates are obtained for.
func IsHostname(h string) bool {
	if len(h) == 0 || len(h) > 253 || !strings.Contains(h, ".") {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Redis joins the nodes of a deployment (decisions.md 8.4): rate limits shared by every node
// (edge/ratelimit/redisrate) and the change feed that keeps each node's caches in step
// (edge/bus). Without it, limits are per node and a node learns about changes made elsewhere
// only from the store's change journal.
type Redis struct {
	// URL is redis://[user:password@]host:port[/db] or rediss:// (TLS); empty: no Redis. It may
	// carry a password: log RedactedURL, never URL.
	URL string `json:"url"`
}

// RedactedURL returns the URL with its password replaced by "xxxxx", fit for logs and errors.
func (r Redis) RedactedURL() string {
	u, err := url.Parse(r.URL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// Webhooks tunes the webhook delivery worker (edge/webhooks).
type Webhooks struct {
	// PollInterval is how often the delivery queue is scanned when no event woke the worker.
	PollInterval Duration `json:"poll_interval"`
	// BaseBackoff is the wait after a first failed attempt, doubled after each next one (with
	// jitter, capped at an hour) for 24 hours.
	BaseBackoff Duration `json:"base_backoff"`
}

// Egress is the outbound-connection policy (edge/egress) of webhooks, SMTP, captcha calls and
// plugin http_fetch.
type Egress struct {
	// AllowPrivateNetworks lets outbound connections reach loopback, private, link-local and
	// metadata addresses (refused by default; tests and private deployments set it).
	AllowPrivateNetworks bool `json:"allow_private_networks"`
	// Timeout bounds one outbound HTTP exchange (webhook delivery, captcha call).
	Timeout Duration `json:"timeout"`
	// MaxResponseKB caps a response body read from an outbound call.
	MaxResponseKB int `json:"max_response_kb"`
}

// Storage configures the database: the embedded badger store (the default) or a shared
// PostgreSQL-wire database for many nodes (decisions.md 8.4).
type Storage struct {
	// Backend is badger (embedded, under {data}/db) or postgres (storage.postgres.url).
	Backend  string   `json:"backend"`
	Postgres Postgres `json:"postgres"`
	// SyncWrites makes every badger commit durable before it is acknowledged (a postgres
	// commit always is).
	SyncWrites bool `json:"sync_writes"`
	// Badger memory knobs, in MB (store.Options); 0 takes a share of the memory budget
	// (edge/membudget).
	BlockCacheMB int `json:"block_cache_mb"`
	IndexCacheMB int `json:"index_cache_mb"`
	MemTableMB   int `json:"memtable_mb"`
	NumMemtables int `json:"num_memtables"`
}

// Postgres configures the shared storage backend.
type Postgres struct {
	// URL is a libpq connection URL, postgres://user:password@host:5432/db?sslmode=...;
	// print it only through RedactURL.
	URL string `json:"url"`
	// StatementTimeout bounds each statement sent to the database and each wait for a pooled
	// connection (store.Options.PostgresTimeout): a database that stops answering without
	// closing its connections (a partition) fails the writes in flight after it instead of
	// stalling them on TCP's timeouts. 0 means the store's default (5s).
	StatementTimeout Duration `json:"statement_timeout"`
}

// Storage backends (storage.backend).
const (
	BackendBadger   = "badger"
	BackendPostgres = "postgres"
)

// RedactURL returns a connection URL fit for a log line or an error: its password replaced by
// "xxxxx" (a string that does not parse as a URL is replaced whole, as it may hold one).
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return "(unparsable URL)"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Email configures delivery.
type Email struct {
	Transport   string `json:"transport"` // outbox | smtp
	Concurrency int    `json:"concurrency"`
	SMTP        SMTP   `json:"smtp"`
}

// SMTP configures the smtp transport.
type SMTP struct {
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Username string `json:"username"`
	Password string `json:"password"`
	TLS      string `json:"tls"` // none | starttls | implicit
}

// Files configures asset blob storage.
type Files struct {
	Backend string `json:"backend"` // local | s3
	// LocalShared says the local blob folder is shared by every node (a network file
	// system): serve refuses storage.backend postgres with local blobs without it.
	LocalShared bool `json:"local_shared"`
	S3          S3   `json:"s3"`
	// VariantMaxPixels is the largest source (width x height, read from its header) an image
	// variant is made of; a larger one answers 422 VARIANT_TOO_LARGE (decisions.md 9.3).
	VariantMaxPixels int `json:"variant_max_pixels"`
	// VariantMemoryMB bounds the decoded pixels of the variant builds running at once, all
	// projects together; a build that does not fit waits, then answers 503. 0 derives it from
	// the memory budget (edge/membudget: a fifth, 96 to 256 MB).
	VariantMemoryMB int `json:"variant_memory_mb"`
}

// S3 configures the S3-compatible blob backend.
type S3 struct {
	Endpoint  string `json:"endpoint"`
	Bucket    string `json:"bucket"`
	Region    string `json:"region"`
	AccessKey string `json:"access_key"`
	SecretKey string `json:"secret_key"`
	UseSSL    bool   `json:"use_ssl"`
}

// Captcha holds the providers' siteverify endpoints (overridable for tests and proxies).
type Captcha struct {
	Turnstile Provider `json:"turnstile"`
	HCaptcha  Provider `json:"hcaptcha"`
	ReCaptcha Provider `json:"recaptcha"`
}

// Provider is one captcha provider's endpoint.
type Provider struct {
	VerifyURL string `json:"verify_url"`
}

// Forms configures the forms product.
type Forms struct {
	// RatePerMinute is the submission limit per key and form: the interface's 60. Load tests
	// raise it (make bench-plugins-isolation); production keeps it.
	RatePerMinute int `json:"rate_per_minute"`
}

// Plugins configures the Wasm host.
type Plugins struct {
	CacheDir string `json:"cache_dir"`
	PoolSize int    `json:"pool_size"`
	// MemoryBudgetMB bounds the memory of all plugin instances together, shared equally by
	// the projects with plugins (decisions.md 8.5).
	MemoryBudgetMB int `json:"memory_budget_mb"`
	// CPUBudgetMs is the plugin time one project may use per second; past it the project's
	// plugin calls are refused (503 PLUGIN_BUSY, or its onError policy) until it refills.
	CPUBudgetMs int `json:"cpu_budget_ms"`
}

// Default returns the configuration with every default filled in.
func Default() Config {
	return Config{
		Listen:          ":8787",
		Data:            "./data",
		LogLevel:        "info",
		LogFormat:       "text",
		ShutdownTimeout: Duration(15 * time.Second),
		ReadTimeout:     Duration(30 * time.Second),
		Storage:         Storage{Backend: BackendBadger, SyncWrites: true},
		Email:           Email{Transport: "outbox", Concurrency: 4, SMTP: SMTP{Port: 587, TLS: "starttls"}},
		Files:           Files{Backend: "local", S3: S3{Region: "us-east-1", UseSSL: true}, VariantMaxPixels: 40_000_000},
		Captcha: Captcha{
			Turnstile: Provider{VerifyURL: "https://challenges.cloudflare.com/turnstile/v0/siteverify"},
			HCaptcha:  Provider{VerifyURL: "https://api.hcaptcha.com/siteverify"},
			ReCaptcha: Provider{VerifyURL: "https://www.google.com/recaptcha/api/siteverify"},
		},
		Forms:    Forms{RatePerMinute: 60},
		Plugins:  Plugins{PoolSize: 4, CPUBudgetMs: 500},
		Egress:   Egress{Timeout: Duration(15 * time.Second), MaxResponseKB: 1024},
		Webhooks: Webhooks{PollInterval: Duration(time.Second), BaseBackoff: Duration(30 * time.Second)},
		TLS:      TLS{Mode: TLSOff, HTTPSListen: ":443", HTTPListen: ":80", CA: "https://acme-v02.api.letsencrypt.org/directory"},
	}
}

// LoadFile merges the YAML file at path into c, refusing unknown keys.
func (c *Config) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if _, err := yamldoc.Decode(data, c); err != nil {
		var de *yamldoc.Error
		if errors.As(err, &de) {
			de.File = path // "gatehouse.yaml:14: storag: unknown key"
		}
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// LoadEnv applies every GATEHOUSE_<KEY> variable present in env (os.Environ form).
func (c *Config) LoadEnv(env []string) error {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GATEHOUSE_") {
			vars[k] = v
		}
	}
	var errs []error
	walk(reflect.ValueOf(c).Elem(), "", func(keyPath string, f reflect.Value) {
		name := EnvName(keyPath)
		v, ok := vars[name]
		if !ok {
			return
		}
		if err := setValue(f, v); err != nil {
			errs = append(errs, fmt.Errorf("config: %s: %w", name, err))
		}
	})
	return errors.Join(errs...)
}

// UnknownEnv reports each GATEHOUSE_* variable of env (os.Environ form) that is neither a
// configuration key's variable nor one of also (variables other commands read, such as
// GATEHOUSE_SERVER), with the nearest known name: a misspelled variable would otherwise be
// ignored in silence. Variables under GATEHOUSE_TEST_ belong to the test suites.
func UnknownEnv(env []string, also ...string) []string {
	known := also
	for _, k := range Keys() {
		known = append(known, EnvName(k))
	}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GATEHOUSE_") || strings.HasPrefix(k, "GATEHOUSE_TEST_") || slices.Contains(known, k) {
			continue
		}
		out = append(out, k+": not a configuration variable, ignored"+suggest.DidYouMean(k, known))
	}
	return out
}

// EnvName returns the environment variable of a dotted key: email.smtp.port -> GATEHOUSE_EMAIL_SMTP_PORT.
func EnvName(keyPath string) string {
	return "GATEHOUSE_" + strings.ToUpper(strings.ReplaceAll(keyPath, ".", "_"))
}

// Keys returns every dotted key of the configuration, in declaration order.
func Keys() []string {
	var out []string
	c := Default()
	walk(reflect.ValueOf(&c).Elem(), "", func(k string, _ reflect.Value) { out = append(out, k) })
	return out
}

// Set sets one dotted key from its string form (used by flags and tests).
func (c *Config) Set(keyPath, value string) error {
	found := false
	var err error
	walk(reflect.ValueOf(c).Elem(), "", func(k string, f reflect.Value) {
		if k == keyPath {
			found = true
			err = setValue(f, value)
		}
	})
	if !found {
		return fmt.Errorf("config: unknown key %q", keyPath)
	}
	return err
}

func walk(v reflect.Value, prefix string, fn func(string, reflect.Value)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		name := strings.Split(t.Field(i).Tag.Get("json"), ",")[0]
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			walk(f, path, fn)
			continue
		}
		fn(path, f)
	}
}

func setValue(f reflect.Value, s string) error {
	switch f.Interface().(type) {
	case Duration:
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		f.SetInt(int64(d))
		return nil
	case []string:
		var parts []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		f.Set(reflect.ValueOf(parts))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(b)
	case reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil {
			return err
		}
		f.SetInt(int64(n))
	default:
		return fmt.Errorf("unsupported type %s", f.Type())
	}
	return nil
}

// Validate checks the loaded configuration once, before anything starts.
func (c *Config) Validate() error {
	var errs []error
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("public_url %q must be an absolute http(s) URL", c.PublicURL))
		}
	}
	for _, h := range []struct{ name, v string }{{"asset_host", c.AssetHost}, {"embed_host", c.EmbedHost}} {
		if h.v == "" {
			continue
		}
		if u, err := url.Parse(h.v); err != nil || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s %q must be an absolute URL such as https://cdn.example.com", h.name, h.v))
		}
	}
	if c.Email.Transport != "outbox" && c.Email.Transport != "smtp" {
		errs = append(errs, fmt.Errorf("email.transport must be outbox or smtp, not %q", c.Email.Transport))
	}
	switch c.Email.SMTP.TLS {
	case "none", "starttls", "implicit":
	default:
		errs = append(errs, fmt.Errorf("email.smtp.tls must be none, starttls or implicit, not %q", c.Email.SMTP.TLS))
	}
	if c.Email.Transport == "smtp" && c.Email.SMTP.Host == "" {
		errs = append(errs, errors.New("email.smtp.host is required with email.transport smtp"))
	}
	errs = append(errs, c.validateStorage()...)
	errs = append(errs, c.TLS.validate()...)
	if c.Listen == "" && c.TLS.Mode == TLSOff {
		errs = append(errs, errors.New("listen may be empty only with tls.mode acme or files (nothing would be served)"))
	}
	if c.Files.Backend != "local" && c.Files.Backend != "s3" {
		errs = append(errs, fmt.Errorf("files.backend must be local or s3, not %q", c.Files.Backend))
	}
	if c.Files.VariantMaxPixels <= 0 {
		errs = append(errs, errors.New("files.variant_max_pixels must be positive"))
	}
	if c.Files.VariantMemoryMB < 0 {
		errs = append(errs, fmt.Errorf("files.variant_memory_mb must not be negative (0 derives it from the memory budget), not %d", c.Files.VariantMemoryMB))
	}
	for _, k := range []struct {
		name string
		v    int
	}{{"block_cache_mb", c.Storage.BlockCacheMB}, {"index_cache_mb", c.Storage.IndexCacheMB}, {"memtable_mb", c.Storage.MemTableMB}, {"num_memtables", c.Storage.NumMemtables}} {
		if k.v < 0 {
			errs = append(errs, fmt.Errorf("storage.%s must not be negative, not %d", k.name, k.v))
		}
	}
	if c.ReadTimeout <= 0 {
		errs = append(errs, errors.New("read_timeout must be positive"))
	}
	if c.Egress.Timeout <= 0 || c.Egress.MaxResponseKB <= 0 {
		errs = append(errs, errors.New("egress.timeout and egress.max_response_kb must be positive"))
	}
	if c.Redis.URL != "" {
		// The parse error would quote the URL, password included: name the key only.
		if u, err := url.Parse(c.Redis.URL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			errs = append(errs, errors.New("redis.url must be redis://[user:password@]host:port[/db] or rediss://..."))
		}
	}
	if c.MemoryLimitMB < 0 {
		errs = append(errs, errors.New("memory_limit_mb must be 0 (no limit) or a number of MB"))
	}
	if c.MaxProcs < 0 {
		errs = append(errs, errors.New("max_procs must be 0 (chosen by serve) or a number of processors"))
	}
	if c.Data == "" {
		errs = append(errs, errors.New("data must name a folder"))
	}
	return errors.Join(errs...)
}

// validateStorage checks storage.backend and the postgres URL it needs.
func (c *Config) validateStorage() []error {
	switch c.Storage.Backend {
	case BackendBadger:
	case BackendPostgres:
		errs := checkPostgresURL("storage.postgres.url", c.Storage.Postgres.URL)
		if c.Storage.Postgres.StatementTimeout < 0 {
			errs = append(errs, errors.New("storage.postgres.statement_timeout must be 0 (the default, 5s) or a duration"))
		}
		return errs
	default:
		return []error{fmt.Errorf("storage.backend must be badger or postgres, not %q", c.Storage.Backend)}
	}
	return nil
}

// checkPostgresURL refuses an empty or malformed libpq URL; the error names key and shows the
// URL redacted.
func checkPostgresURL(key, raw string) []error {
	if raw == "" {
		return []error{fmt.Errorf("%s is required with storage.backend postgres (postgres://user:password@host:5432/db)", key)}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || (u.Host == "" && u.Query().Get("host") == "") {
		return []error{fmt.Errorf("%s %s must be a postgres:// or postgresql:// URL with a host", key, RedactURL(raw))}
	}
	return nil
}

// CheckPostgresURL validates a libpq URL given on a command line (gatehouse migrate --to,
// restore --to), with the same rule and message as storage.postgres.url.
func CheckPostgresURL(flag, raw string) error { return errors.Join(checkPostgresURL(flag, raw)...) }

// SharedBlobs reports whether the blob storage can serve many nodes: an S3 bucket, or a local
// folder declared shared (files.local_shared).
func (c *Config) SharedBlobs() bool { return c.Files.Backend == "s3" || c.Files.LocalShared }

// ResolvePublicURL sets an empty public_url from the address the server listens on (addr,
// with the real port when the configured one was 0): http://localhost:8787 for ":8787" or
// "0.0.0.0:8787", http://127.0.0.1:9000 for "127.0.0.1:9000".
func (c *Config) ResolvePublicURL(addr string) {
	if c.PublicURL != "" {
		return
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = "localhost", addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	c.PublicURL = "http://" + net.JoinHostPort(host, port)
}

// BaseURL returns {public_url}/<segment> without a trailing slash.
func (c *Config) BaseURL(segment string) string {
	return strings.TrimRight(c.PublicURL, "/") + "/" + segment
}

// AssetBaseURL returns {asset_host}: asset_host when set, else {public_url}/cdn.
func (c *Config) AssetBaseURL() string {
	if c.AssetHost != "" {
		return strings.TrimRight(c.AssetHost, "/")
	}
	return c.BaseURL("cdn")
}

// EmbedBaseURL returns {embed_host}: embed_host when set, else {public_url}/embed.
func (c *Config) EmbedBaseURL() string {
	if c.EmbedHost != "" {
		return strings.TrimRight(c.EmbedHost, "/")
	}
	return c.BaseURL("embed")
}

// Duration is a time.Duration written as "15s" in YAML and the environment.
type Duration time.Duration

// UnmarshalJSON reads "15s" (or a number of nanoseconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("duration must be a string such as \"15s\"")
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the "15s" form.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }
