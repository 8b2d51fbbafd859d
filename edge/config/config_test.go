package config

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLayering(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "g.yaml")
	if err := os.WriteFile(file, []byte("listen: \":9000\"\nemail:\n  smtp:\n    port: 2525\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.LoadFile(file); err != nil {
		t.Fatal(err)
	}
	err := c.LoadEnv([]string{"GATEHOUSE_EMAIL_SMTP_PORT=465", "GATEHOUSE_STORAGE_SYNC_WRITES=false",
		"GATEHOUSE_TRUSTED_PROXIES=10.0.0.1, 10.0.0.2", "GATEHOUSE_SHUTDOWN_TIMEOUT=3s", "OTHER=1"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":9000" || c.Email.SMTP.Port != 465 || c.Storage.SyncWrites || c.ShutdownTimeout.D() != 3*time.Second ||
		!slices.Equal(c.TrustedProxies, []string{"10.0.0.1", "10.0.0.2"}) {
		t.Errorf("config = %+v", c)
	}
	if err := c.LoadEnv([]string{"GATEHOUSE_EMAIL_SMTP_PORT=abc"}); err == nil {
		t.Errorf("bad env value accepted")
	}
	if err := os.WriteFile(file, []byte("nope: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.LoadFile(file); err == nil {
		t.Errorf("unknown key accepted")
	}
}

func TestShippedConfigHasEveryKey(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../configs/gatehouse.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := Default()
	if err := c.LoadFile("../../configs/gatehouse.yaml"); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("shipped config invalid: %v", err)
	}
	for _, k := range Keys() {
		parts := strings.Split(k, ".")
		if !regexp.MustCompile(`(?m)^\s*` + parts[len(parts)-1] + `:`).Match(raw) {
			t.Errorf("configs/gatehouse.yaml lacks key %s", k)
		}
	}
	if EnvName("email.smtp.port") != "GATEHOUSE_EMAIL_SMTP_PORT" {
		t.Errorf("EnvName = %s", EnvName("email.smtp.port"))
	}
}

// The badger memory knobs have one source, the memory budget (edge/membudget, applied by
// serve): Default leaves them at 0, and the shipped file (which shows every default) agrees.
func TestStorageKnobsComeFromTheBudget(t *testing.T) {
	t.Parallel()
	knobs := func(s Storage) Storage {
		return Storage{BlockCacheMB: s.BlockCacheMB, IndexCacheMB: s.IndexCacheMB, MemTableMB: s.MemTableMB, NumMemtables: s.NumMemtables}
	}
	if got := knobs(Default().Storage); got != (Storage{}) {
		t.Errorf("Default's knobs = %+v, want 0 (the budget's shares)", got)
	}
	shipped := Config{}
	if err := shipped.LoadFile("../../configs/gatehouse.yaml"); err != nil {
		t.Fatal(err)
	}
	if got := knobs(shipped.Storage); got != (Storage{}) {
		t.Errorf("configs/gatehouse.yaml's knobs = %+v, want 0 (the budget's shares)", got)
	}
	// files.variant_memory_mb too: 0 takes the budget's share (edge/membudget's VariantsMB).
	if d, s := Default().Files.VariantMemoryMB, shipped.Files.VariantMemoryMB; d != 0 || s != 0 {
		t.Errorf("files.variant_memory_mb: Default %d, shipped %d, want 0 (the budget's share)", d, s)
	}
	explicit := Default()
	explicit.Files.VariantMemoryMB = 512
	if err := explicit.Validate(); err != nil {
		t.Errorf("an explicit files.variant_memory_mb was refused: %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"public_url", func(c *Config) { c.PublicURL = "localhost" }},
		{"transport", func(c *Config) { c.Email.Transport = "pigeon" }},
		{"smtp host", func(c *Config) { c.Email.Transport = "smtp" }},
		{"tls", func(c *Config) { c.Email.SMTP.TLS = "maybe" }},
		{"asset_host", func(c *Config) { c.AssetHost = "cdn" }},
		{"storage.memtable_mb", func(c *Config) { c.Storage.MemTableMB = -1 }},
		{"max_procs", func(c *Config) { c.MaxProcs = -1 }},
		{"files.variant_memory_mb", func(c *Config) { c.Files.VariantMemoryMB = -1 }},
	} {
		c := Default()
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("Validate accepted bad %s", tc.name)
		}
	}
}

// storage.backend and storage.postgres.url: an unknown backend or a bad URL is refused with
// an error naming the key, and a password never appears in the error.
func TestValidateStorage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backend, url string
		want         string // "" = valid
	}{
		{"badger", "", ""},
		{"postgres", "postgres://gh:s3cret@db.internal:5432/gatehouse?sslmode=require", ""},
		{"postgres", "postgresql://gh@/gatehouse?host=/var/run/postgresql", ""},
		{"cockroach", "", `storage.backend must be badger or postgres, not "cockroach"`},
		{"", "", `storage.backend must be badger or postgres, not ""`},
		{"postgres", "", "storage.postgres.url is required with storage.backend postgres"},
		{"postgres", "mysql://gh:s3cret@db:3306/x", "storage.postgres.url mysql://gh:xxxxx@db:3306/x must be a postgres:// or postgresql:// URL"},
		{"postgres", "host=db password=s3cret", "storage.postgres.url (unparsable URL) must be"},
		{"postgres", "postgres://gh:s3cret@/x", "storage.postgres.url postgres://gh:xxxxx@/x must be a postgres:// or postgresql:// URL with a host"},
	} {
		c := Default()
		c.Storage.Backend, c.Storage.Postgres.URL = tc.backend, tc.url
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Validate(backend %q, url %q) = %v, want nil", tc.backend, tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Validate(backend %q, url %q) = %v, want %q", tc.backend, tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Validate(backend %q) prints the password: %v", tc.backend, err)
		}
	}
	c := Default()
	if err := c.LoadEnv([]string{"GATEHOUSE_STORAGE_BACKEND=postgres", "GATEHOUSE_STORAGE_POSTGRES_URL=postgres://a:b@h/d", "GATEHOUSE_FILES_LOCAL_SHARED=true"}); err != nil {
		t.Fatal(err)
	}
	if c.Storage.Backend != BackendPostgres || c.Storage.Postgres.URL != "postgres://a:b@h/d" || !c.Files.LocalShared || !c.SharedBlobs() {
		t.Errorf("LoadEnv of the storage variables = %+v %+v", c.Storage, c.Files)
	}
	if d := Default(); d.Storage.Backend != BackendBadger || d.SharedBlobs() {
		t.Errorf("Default storage = %+v, files %+v; want badger with unshared local blobs", d.Storage, d.Files)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"postgres://gh:s3cret@db:5432/x?sslmode=disable", "postgres://gh:xxxxx@db:5432/x?sslmode=disable"},
		{"postgres://gh@db/x", "postgres://gh@db/x"},
		{"postgres://db/x?password=s3cret&user=gh", "postgres://db/x?password=xxxxx&user=gh"},
		{"host=db password=s3cret", "(unparsable URL)"},
		{"postgres:gh:s3cret", "(unparsable URL)"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// An unknown key or a value of the wrong type in the config file names the file, the line and
// the key, never encoding/json's text.
func TestLoadFileProblemsHaveLines(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "gatehouse.yaml")
	for _, tc := range []struct{ in, want string }{
		{"listen: \":9000\"\nstorage:\n  sync_writes: true\n  blok_cache_mb: 3\n", file + ":4: storage.blok_cache_mb: unknown key"},
		{"email:\n  smtp:\n    port: many\n", file + ":3: email.smtp.port: must be an integer"},
		{"shutdown_timeout: soon\n", file + ":1: shutdown_timeout: time: invalid duration"},
	} {
		if err := os.WriteFile(file, []byte(tc.in), 0o600); err != nil {
			t.Fatal(err)
		}
		c := Default()
		err := c.LoadFile(file)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "json") {
			t.Errorf("LoadFile(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestResolvePublicURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, addr, want string }{
		{"", "[::]:8787", "http://localhost:8787"},
		{"", "0.0.0.0:9000", "http://localhost:9000"},
		{"", ":9000", "http://localhost:9000"},
		{"", "127.0.0.1:41891", "http://127.0.0.1:41891"},
		{"", "[::1]:9000", "http://[::1]:9000"},
		{"", "gw.internal:80", "http://gw.internal:80"},
		{"https://api.example.com", "[::]:8787", "https://api.example.com"},
	} {
		c := Default()
		c.PublicURL = tc.set
		c.ResolvePublicURL(tc.addr)
		if c.PublicURL != tc.want || c.BaseURL("files") != tc.want+"/files" {
			t.Errorf("ResolvePublicURL(%q) with public_url %q = %q, want %q", tc.addr, tc.set, c.PublicURL, tc.want)
		}
	}
	if c := Default(); c.Validate() != nil {
		t.Errorf("the default config (public_url empty) is invalid: %v", c.Validate())
	}
}

// redis.url comes from the file or GATEHOUSE_REDIS_URL; a bad one is refused without quoting
// it (it may hold a password), and RedactedURL is what logs show.
func TestRedisURL(t *testing.T) {
	t.Parallel()
	c := Default()
	if err := c.LoadEnv([]string{"GATEHOUSE_REDIS_URL=redis://:s3cret-pw@10.0.0.5:6379/2"}); err != nil {
		t.Fatal(err)
	}
	if c.Redis.URL != "redis://:s3cret-pw@10.0.0.5:6379/2" {
		t.Fatalf("GATEHOUSE_REDIS_URL gave redis.url %q", c.Redis.URL)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v for a good redis.url", err)
	}
	if got := c.Redis.RedactedURL(); strings.Contains(got, "s3cret") || !strings.Contains(got, "10.0.0.5:6379") {
		t.Fatalf("RedactedURL() = %q, want the address without the password", got)
	}
	for _, bad := range []string{"http://u:s3cret-pw@host:6379", "redis://:s3cret-pw@", "s3cret-pw", "redis://:s3cret-pw@host:6379/%zz"} {
		c := Default()
		c.Redis.URL = bad
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "redis.url") {
			t.Errorf("Validate() with redis.url %q = %v, want a redis.url error", bad, err)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Validate() error %q quotes the password", err)
		}
	}
}

func TestUnknownEnv(t *testing.T) {
	env := []string{
		"GATEHOUSE_LISTN=:1",            // a typo of GATEHOUSE_LISTEN
		"GATEHOUSE_LISTEN=:2",           // known
		"GATEHOUSE_SERVER=http://x",     // known to the caller
		"GATEHOUSE_TEST_STORE=postgres", // the test suites'
		"GATEHOUSE_ZZZZZZZZZZZZZZZZZZZZZZZZZ=1",
		"HOME=/root",
	}
	got := UnknownEnv(env, "GATEHOUSE_SERVER")
	want := []string{
		`GATEHOUSE_LISTN: not a configuration variable, ignored (did you mean "GATEHOUSE_LISTEN"?)`,
		`GATEHOUSE_ZZZZZZZZZZZZZZZZZZZZZZZZZ: not a configuration variable, ignored`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("UnknownEnv = %q, want %q", got, want)
	}
}

func TestLoadFileSuggestsKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gatehouse.yaml")
	if err := os.WriteFile(path, []byte("lsiten: \":1\"\nstorage:\n  sync_writs: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := Default()
	err := c.LoadFile(path)
	for _, want := range []string{`lsiten: unknown key (did you mean "listen"?)`, `storage.sync_writs: unknown key (did you mean "sync_writes"?)`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadFile = %v, want it to contain %q", err, want)
		}
	}
}
