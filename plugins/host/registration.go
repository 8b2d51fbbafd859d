package host

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// Hook point names, as written in the tenants document.
const (
	HookFormsSubmit   = "forms.submit"
	HookRecordsRead   = "records.read"
	HookEmailSend     = "email.send"
	HookCaptchaVerify = "captcha.verify"
)

// Failure policies (Registration.OnError).
const (
	OnErrorOpen   = "open"   // a failed call lets the request through unchanged
	OnErrorClosed = "closed" // a failed call fails the request
)

type hookID int

const (
	hookFormsSubmit hookID = iota
	hookRecordsRead
	hookEmailSend
	hookCaptchaVerify
	numHooks
)

var hookNames = [numHooks]string{HookFormsSubmit, HookRecordsRead, HookEmailSend, HookCaptchaVerify}

// hookExports are the guest exports, one per hook.
var hookExports = [numHooks]string{"hook_forms_submit", "hook_records_read", "hook_email_send", "hook_captcha_verify"}

func parseHook(s string) (hookID, bool) {
	for i, n := range hookNames {
		if n == s {
			return hookID(i), true
		}
	}
	return 0, false
}

// Registration is one plugin of one project: the tenants document's
// plugins[] entry (decisions.md section 3) with the module bytes loaded.
type Registration struct {
	Project string // project id
	Name    string // unique within the project
	// Module is the Wasm binary. When empty, ModulePath is read.
	Module     []byte
	ModulePath string
	// Hooks this plugin serves: forms.submit, records.read, email.send,
	// captcha.verify. The module must export the matching hook_* function.
	Hooks []string
	// OnError is the failure policy: "open" or "closed". Empty means closed
	// for a plugin serving captcha.verify and open otherwise.
	OnError string
	// AllowHosts lists what http_fetch may reach: "host" and "host:port"
	// (http or https), "*.example.com" (subdomains), "https://host[:port]"
	// (pins the scheme), IP literals ("[2001:db8::1]:443"); see allowRule.
	// The connect-time address rules of Options.Egress apply to all.
	AllowHosts []string
	Limits     Limits
	// Config values the plugin reads with config_get, and which http_fetch
	// substitutes for {{config.KEY}} in request headers and bodies.
	Config map[string]string
}

// Limits are a plugin's resource limits; zero fields take the defaults.
type Limits struct {
	MemoryMB  int // default 16, at least 8, at most Options.MaxMemoryMB
	TimeoutMs int // per call, default 100, at most Options.MaxTimeout
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

func (r Registration) normalize(o Options) (Registration, error) {
	bad := func(format string, args ...any) (Registration, error) {
		return r, fmt.Errorf("%w: %s/%s: %s", ErrInvalidRegistration, r.Project, r.Name, fmt.Sprintf(format, args...))
	}
	if r.Project == "" || !nameRE.MatchString(r.Name) {
		return bad("project and name are required (name: letters, digits, _ . -)")
	}
	if len(r.Module) == 0 {
		if r.ModulePath == "" {
			return bad("no module")
		}
		b, err := os.ReadFile(r.ModulePath)
		if err != nil {
			return bad("module: %v", err)
		}
		r.Module = b
	}
	if len(r.Hooks) == 0 {
		return bad("no hooks")
	}
	for _, hk := range r.Hooks {
		if _, ok := parseHook(hk); !ok {
			return bad("unknown hook %q", hk)
		}
	}
	switch r.OnError {
	case "":
		if slices.Contains(r.Hooks, HookCaptchaVerify) {
			r.OnError = OnErrorClosed
		} else {
			r.OnError = OnErrorOpen
		}
	case OnErrorOpen, OnErrorClosed:
	default:
		return bad("onError must be open or closed, not %q", r.OnError)
	}
	if r.Limits.MemoryMB == 0 {
		r.Limits.MemoryMB = DefaultMemoryMB
	}
	if r.Limits.MemoryMB < MinMemoryMB || r.Limits.MemoryMB > o.MaxMemoryMB {
		return bad("limits.memoryMB must be within %d..%d", MinMemoryMB, o.MaxMemoryMB)
	}
	if r.Limits.TimeoutMs == 0 {
		r.Limits.TimeoutMs = DefaultTimeoutMs
	}
	if r.Limits.TimeoutMs < 1 || time.Duration(r.Limits.TimeoutMs)*time.Millisecond > o.MaxTimeout {
		return bad("limits.timeoutMs must be within 1..%d", o.MaxTimeout.Milliseconds())
	}
	for _, a := range r.AllowHosts {
		if _, err := parseAllowRule(a); err != nil {
			return bad("allowHosts: %v", err)
		}
	}
	return r, nil
}

// plugin is one registered, compiled and validated module.
type plugin struct {
	h        *Host
	reg      Registration
	compiled *compiledEntry
	hooks    [numHooks]bool
	open     bool // fail-open policy
	timeout  time.Duration
	memCap   uint64
	allow    []allowRule
	canFetch bool
	abiMinor uint32
	pool     *pool // nil for a refused plugin
	breaker  breaker
	logs     *logBuffer
	met      [numHooks]*hookMetrics
	stats    stats
	// refused is why the plugin cannot run (its module is missing or was
	// refused); every call fails with it and the failure policy applies.
	refused error
	// anyFetch lets a module import http_fetch without allowHosts: set only
	// when checking an uploaded module that no registration names yet.
	anyFetch bool
}

// newPlugin checks the compiled module against the registration and starts
// one instance. The plugin's metrics are not set: a Check never creates
// series; Register adds them (withMetrics).
func (h *Host) newPlugin(ctx context.Context, p *project, r Registration, ce *compiledEntry, anyFetch bool) (*plugin, error) {
	pl := &plugin{
		anyFetch: anyFetch,
		h:        h,
		reg:      r,
		compiled: ce,
		open:     r.OnError == OnErrorOpen,
		timeout:  time.Duration(r.Limits.TimeoutMs) * time.Millisecond,
		memCap:   uint64(r.Limits.MemoryMB) << 20,
		logs:     newLogBuffer(h.opts.LogBufferBytes),
	}
	for _, a := range r.AllowHosts {
		rule, _ := parseAllowRule(a)
		pl.allow = append(pl.allow, rule)
	}
	for _, hk := range r.Hooks {
		id, _ := parseHook(hk)
		pl.hooks[id] = true
	}
	mod, _ := ce.code()
	if err := pl.checkModule(mod.ImportedFunctions(), mod.ExportedFunctions(), len(mod.ExportedMemories()) > 0); err != nil {
		return nil, err
	}
	for _, m := range mod.ExportedMemories() {
		if uint64(m.Min())<<16 > pl.memCap {
			return nil, fmt.Errorf("%w: %s: needs %d MiB of memory at start, limit is %d MiB",
				ErrInvalidModule, r.Name, uint64(m.Min())>>4, r.Limits.MemoryMB)
		}
	}
	pl.breaker = breaker{threshold: h.opts.BreakerThreshold, cooldown: h.opts.BreakerCooldown}
	pl.pool = newPool(pl, p, h.opts.PoolSize, func() { h.release(ce) })

	// Start one warm instance now: it proves the module initialises within
	// its limits and answers the ABI marker.
	inst, err := pl.pool.get(ctx, time.Now().Add(h.opts.MaxTimeout))
	if err != nil {
		pl.pool.close()
		return nil, fmt.Errorf("%w: %s: start: %w", ErrInvalidModule, r.Name, err)
	}
	minor, err := inst.abiMinor(ctx)
	pl.pool.put(inst, err != nil || inst.stopped)
	if err != nil {
		pl.pool.close()
		return nil, fmt.Errorf("%w: %s: %s: %w", ErrInvalidModule, r.Name, abiMarker, err)
	}
	pl.abiMinor = minor
	return pl, nil
}

// checkModule verifies the ABI marker, the hook exports and the imports;
// importing http_fetch is what asks for network permission.
func (pl *plugin) checkModule(imports []api.FunctionDefinition, exports map[string]api.FunctionDefinition, hasMemory bool) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidModule, pl.reg.Name, fmt.Sprintf(format, args...))
	}
	if !hasMemory {
		return bad("exports no memory")
	}
	if !isI32Func(exports[abiMarker]) {
		return bad("no %s export (func () -> i32): not a gatehouse plugin, or built for another ABI", abiMarker)
	}
	if _, ok := exports["_start"]; ok {
		if _, ok := exports["_initialize"]; !ok {
			return bad("exports _start but not _initialize: build it as a reactor (go build -buildmode=c-shared)")
		}
	}
	for id, on := range pl.hooks {
		if on && !isI32Func(exports[hookExports[id]]) {
			return bad("hook %s needs an export %s (func () -> i32)", hookNames[id], hookExports[id])
		}
	}
	for _, f := range imports {
		mod, name, _ := f.Import()
		switch mod {
		case "wasi_snapshot_preview1":
			// Provided without file system, environment, sockets or clocks
			// of its own: harmless.
		case abiModule:
			sig, ok := abiFunctions[name]
			if !ok {
				return bad("imports %s.%s, which this host does not provide (newer ABI minor version?)", mod, name)
			}
			if !slices.Equal(f.ParamTypes(), sig.params) || !slices.Equal(f.ResultTypes(), sig.results) {
				return bad("imports %s.%s with the wrong signature", mod, name)
			}
			if name == "http_fetch" {
				if len(pl.allow) == 0 && !pl.anyFetch {
					return bad("imports http_fetch but the registration has no allowHosts")
				}
				pl.canFetch = true
			}
		default:
			return bad("imports unknown module %q (function %s)", mod, name)
		}
	}
	return nil
}

// withMetrics looks up the plugin's metric series, once per hook.
func (pl *plugin) withMetrics() *plugin {
	for id, on := range pl.hooks {
		if on {
			pl.met[id] = pl.h.metrics.forHook(pl.reg.Project, pl.reg.Name, hookNames[id])
		}
	}
	return pl
}

// retire stops the plugin taking calls; calls in flight finish.
func (pl *plugin) retire() {
	if pl.pool != nil {
		pl.pool.close()
	}
}

func isI32Func(f api.FunctionDefinition) bool {
	return f != nil && len(f.ParamTypes()) == 0 &&
		slices.Equal(f.ResultTypes(), []api.ValueType{api.ValueTypeI32})
}
