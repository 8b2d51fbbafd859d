// Package host runs tenant Wasm plugins on wazero for the Gatehouse hook
// points (forms.submit, records.read, email.send, captcha.verify).
//
// It is the only package of the module that imports wazero, and it knows
// nothing of HTTP or of the products: products call the hook methods of a
// *Host (FormsSubmit, RecordsRead, EmailSend, CaptchaVerify) with plain Go
// values, through small interfaces they declare themselves.
//
// Lifecycle:
//
//	h, err := host.New(host.Options{CacheDir: dataDir + "/wasm-cache", Log: log, Registerer: reg})
//	defer h.Close()
//	err = h.Register(ctx, host.Registration{Project: "demo", Name: "spam-guard", Module: wasm,
//		Hooks: []string{host.HookFormsSubmit}, Config: map[string]string{"blockedWords": "casino"}})
//	v, err := h.FormsSubmit(ctx, "demo", "contact", data)
//
// What the host guarantees, per plugin: modules are compiled once (an LRU of
// compiled modules in memory, wazero's compilation cache on disk); a module
// precompiled for an upload made on another node (Precompile) serves from
// wazero's interpreter within a few hundred milliseconds while the
// optimizing compiler, which takes seconds, works in the background at a
// lower priority, and its plugins then move to the machine code
// (compile.go); each project has its own wazero runtimes (compiler and
// interpreter, set up alike, under the same limits); each plugin has a
// capped pool of warm
// instances, each serving one call at a time; an instance is dropped after
// a trap, a timeout or when its memory grows past three quarters of its
// cap; every call runs under a deadline enforced by a fuel guard compiled
// into the module (package guard); memory is capped per plugin; guests get no
// file system, no environment, a wall clock frozen at the start of each
// call and a random source from the host; stdout, stderr and the log host
// function go to a bounded per-plugin log buffer (Host.Logs); repeated
// failures open a circuit breaker; each registration carries its failure
// policy (fail-open or fail-closed). The only way out is http_fetch, which
// is granted only to modules that import it and have allowHosts, and which
// connects through the gateway's egress policy (Options.Egress; the host
// keeps no address rules of its own).
//
// Between projects (decisions.md 8.5): a scheduler (sched.go) runs at most
// one guest call per core, never lets one project hold every slot, serves
// waiting projects in turn and takes each call's guest time from its
// project's CPU budget per second, refusing an over-budget project at once
// (ErrBusy); all guest memory lives within a budget split in equal project
// shares (memory.go). A module that cannot run is kept as refused (Refuse):
// its hooks fail under its policy instead of silently running nothing.
// Check and CheckModule tell, before anything is stored, whether Register
// would accept a plugin; Status and LogLines feed the admin API.
//
// The ABI (import module gatehouse_v1, export gatehouse_abi_v1, one export
// per hook) is specified in docs/plugins.md; plugins/pdk implements the
// guest side for Go.
package host
