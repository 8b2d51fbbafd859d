package host

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Options configures a Host. Start from DefaultOptions and change fields;
// New fills any zero field with its default.
type Options struct {
	// CacheDir holds wazero's on-disk compilation cache, so a restart does
	// not recompile modules. Empty keeps compiled code in memory only.
	CacheDir string
	// Log receives the host's own structured logs. Nil discards them.
	Log *slog.Logger
	// Registerer receives the plugin metrics. Nil keeps them in a private
	// registry (never the global default one).
	Registerer prometheus.Registerer

	// PoolSize caps the instances of one plugin alive at once; each serves
	// one call at a time. Default 4.
	PoolSize int
	// CompiledCacheSize is how many compiled modules the in-memory LRU
	// keeps for reuse when a module is registered again. Default 64.
	CompiledCacheSize int
	// MaxMemoryMB is the ceiling any plugin may ask for in Limits.MemoryMB,
	// and the memory limit of every project's wazero runtime. Default 128.
	MaxMemoryMB int
	// MaxTimeout is the ceiling for Limits.TimeoutMs. Default 5s.
	MaxTimeout time.Duration

	// Slots is how many guest calls run at once, all projects together;
	// one project holds at most Slots-1 of them (at least 1). Default
	// GOMAXPROCS, one per core.
	Slots int
	// CPUBudget is the guest time (calls and instance starts) one project
	// may use per second; a project over it has its calls refused at once
	// (ErrBusy) until the budget refills. Default 500ms: half a core.
	CPUBudget time.Duration
	// QueueLength is how many calls of one project may wait for a slot;
	// more are refused at once (ErrBusy). Default 64.
	QueueLength int
	// MemoryBudgetMB bounds the linear memory of all guests together; each
	// project with plugins may hold an equal share of it. A grow past the
	// share or the budget fails like a grow past the plugin's limit (kind
	// memory). Default 256.
	MemoryBudgetMB int

	// BreakerThreshold consecutive failed calls open a plugin's circuit
	// breaker for BreakerCooldown; calls meanwhile fail at once and the
	// plugin's failure policy applies. Defaults 5 and 30s.
	BreakerThreshold int
	BreakerCooldown  time.Duration

	// LogBufferBytes bounds each plugin's log buffer (stdout, stderr and
	// the log host function). Default 64 KiB.
	LogBufferBytes int

	// Fetch limits for http_fetch, per plugin call.
	Fetch FetchLimits

	// Now is the time source given to guests: the wall clock a guest
	// reads is frozen at the start of each call. Default time.Now.
	Now func() time.Time
	// Rand returns the random source of a new instance (what the guest's
	// random_get reads). Default: a ChaCha8 stream seeded from crypto/rand.
	Rand func() io.Reader

	// Egress is the connection policy of http_fetch (fetch.go). The gateway passes its
	// edge/egress policy; nil denies every fetch.
	Egress Egress

	// beforeNative runs before each background compilation to machine
	// code; tests delay it to observe the interpreted tier.
	beforeNative func(ctx context.Context)
}

// FetchLimits caps what one plugin call may do through http_fetch.
type FetchLimits struct {
	CallsPerInvocation int           // default 4
	MaxResponseBytes   int           // default 1 MiB (and never past the Egress policy's cap)
	MaxRequestBytes    int           // default 64 KiB
	Timeout            time.Duration // per fetch, default 5s (and never past the call's deadline or the Egress client's timeout)
	MaxRedirects       int           // default 3
}

// Defaults for Registration limits.
const (
	DefaultMemoryMB  = 16
	MinMemoryMB      = 8 // Go-built guests need at least this much
	DefaultTimeoutMs = 100
)

// DefaultOptions returns the defaults described on each Options field.
func DefaultOptions() Options {
	return Options{
		PoolSize:          4,
		CompiledCacheSize: 64,
		MaxMemoryMB:       128,
		MaxTimeout:        5 * time.Second,
		Slots:             runtime.GOMAXPROCS(0),
		CPUBudget:         500 * time.Millisecond,
		QueueLength:       64,
		MemoryBudgetMB:    256,
		BreakerThreshold:  5,
		BreakerCooldown:   30 * time.Second,
		LogBufferBytes:    64 << 10,
		Fetch: FetchLimits{
			CallsPerInvocation: 4,
			MaxResponseBytes:   1 << 20,
			MaxRequestBytes:    64 << 10,
			Timeout:            5 * time.Second,
			MaxRedirects:       3,
		},
		Now: time.Now,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.PoolSize <= 0 {
		o.PoolSize = d.PoolSize
	}
	if o.CompiledCacheSize <= 0 {
		o.CompiledCacheSize = d.CompiledCacheSize
	}
	if o.MaxMemoryMB <= 0 {
		o.MaxMemoryMB = d.MaxMemoryMB
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = d.MaxTimeout
	}
	if o.Slots <= 0 {
		o.Slots = d.Slots
	}
	if o.CPUBudget <= 0 {
		o.CPUBudget = d.CPUBudget
	}
	if o.QueueLength <= 0 {
		o.QueueLength = d.QueueLength
	}
	if o.MemoryBudgetMB <= 0 {
		o.MemoryBudgetMB = d.MemoryBudgetMB
	}
	if o.BreakerThreshold <= 0 {
		o.BreakerThreshold = d.BreakerThreshold
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = d.BreakerCooldown
	}
	if o.LogBufferBytes <= 0 {
		o.LogBufferBytes = d.LogBufferBytes
	}
	if o.Fetch.CallsPerInvocation <= 0 {
		o.Fetch.CallsPerInvocation = d.Fetch.CallsPerInvocation
	}
	if o.Fetch.MaxResponseBytes <= 0 {
		o.Fetch.MaxResponseBytes = d.Fetch.MaxResponseBytes
	}
	if o.Fetch.MaxRequestBytes <= 0 {
		o.Fetch.MaxRequestBytes = d.Fetch.MaxRequestBytes
	}
	if o.Fetch.Timeout <= 0 {
		o.Fetch.Timeout = d.Fetch.Timeout
	}
	if o.Fetch.MaxRedirects <= 0 {
		o.Fetch.MaxRedirects = d.Fetch.MaxRedirects
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	return o
}
