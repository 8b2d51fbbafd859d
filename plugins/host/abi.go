package host

import (
	"context"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ABI names; docs/plugins.md is the specification.
const (
	abiModule = "gatehouse_v1"     // import module of the host functions
	abiMarker = "gatehouse_abi_v1" // export every plugin must have
	abiMinor  = 0                  // minor versions only add functions
)

// Status codes the host functions return (negative i32).
const (
	statusNotFound int32 = -1 // no such config key; no fetch response to read
	statusDenied   int32 = -2 // not permitted: host not allowed, address refused
	statusLimit    int32 = -3 // a cap was reached: calls, sizes
	statusInvalid  int32 = -4 // bad pointer or length, malformed request
	statusFailed   int32 = -5 // the operation failed: network error, timeout
)

// Hook export return codes.
const (
	hookOK    = 0 // output (possibly empty) holds the answer
	hookError = 1 // output (possibly empty) holds an error message
)

type signature struct{ params, results []api.ValueType }

var (
	i32 = api.ValueTypeI32

	// abiFunctions are the host functions of gatehouse_v1 minor 0.
	abiFunctions = map[string]signature{
		"input_read":     {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
		"output_write":   {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
		"config_get":     {[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}},
		"log":            {[]api.ValueType{i32, i32, i32}, nil},
		"http_fetch":     {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
		"http_body_read": {[]api.ValueType{i32, i32}, []api.ValueType{i32}},
	}
)

// guestMemory is the part of api.Memory the host functions use; the fuzz
// test drives them with a plain byte slice.
type guestMemory interface {
	Read(offset, byteCount uint32) ([]byte, bool)
	Write(offset uint32, v []byte) bool
}

// callState is what the host functions know about the call in progress;
// it travels in the context passed to the guest function.
type callState struct {
	pl          *plugin
	input       []byte
	output      []byte
	outputLimit int
	overflow    bool
	fetches     int
	fetchBody   []byte
	fetched     bool
}

type callKey struct{}

func stateFrom(ctx context.Context) *callState {
	cs, _ := ctx.Value(callKey{}).(*callState)
	return cs
}

// instantiateABI adds the gatehouse_v1 host module to a project runtime.
func (h *Host) instantiateABI(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(abiModule)
	add := func(name string, fn func(ctx context.Context, cs *callState, mem guestMemory, stack []uint64)) {
		sig := abiFunctions[name]
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			cs := stateFrom(ctx)
			if cs == nil {
				if len(sig.results) > 0 {
					stack[0] = api.EncodeI32(statusInvalid)
				}
				return
			}
			fn(ctx, cs, m.Memory(), stack)
		}), sig.params, sig.results).Export(name)
	}
	add("input_read", func(ctx context.Context, cs *callState, mem guestMemory, s []uint64) {
		s[0] = api.EncodeI32(cs.readInto(mem, cs.input, s[0], s[1]))
	})
	add("output_write", func(ctx context.Context, cs *callState, mem guestMemory, s []uint64) {
		s[0] = api.EncodeI32(cs.outputWrite(mem, s[0], s[1]))
	})
	add("config_get", func(ctx context.Context, cs *callState, mem guestMemory, s []uint64) {
		s[0] = api.EncodeI32(cs.configGet(mem, s[0], s[1], s[2], s[3]))
	})
	add("log", func(ctx context.Context, cs *callState, mem guestMemory, s []uint64) {
		cs.logWrite(mem, s[0], s[1], s[2])
	})
	add("http_fetch", func(ctx context.Context, cs *callState, mem guestMemory, s []uint64) {
		s[0] = api.EncodeI32(cs.httpFetch(ctx, mem, s[0], s[1]))
	})
	add("http_body_read", func(ctx context.Context, cs *callState, mem guestMemory, s []uint64) {
		if !cs.fetched {
			s[0] = api.EncodeI32(statusNotFound)
			return
		}
		s[0] = api.EncodeI32(cs.readInto(mem, cs.fetchBody, s[0], s[1]))
	})
	_, err := b.Instantiate(ctx)
	return err
}

// readInto implements the pull pattern shared by input_read,
// config_get and http_body_read: when data fits in the guest buffer
// (ptr, capacity) it is copied there; either way the full length is
// returned, and a guest that sees a length above its capacity retries with
// a bigger buffer.
func (cs *callState) readInto(mem guestMemory, data []byte, ptr, capacity uint64) int32 {
	p, c := uint32(ptr), uint32(capacity)
	if len(data) > 1<<30 {
		return statusLimit
	}
	if uint64(len(data)) > uint64(c) {
		return int32(len(data))
	}
	if len(data) > 0 && !mem.Write(p, data) {
		return statusInvalid
	}
	return int32(len(data))
}

// outputWrite appends guest bytes to the call's output, up to its limit.
func (cs *callState) outputWrite(mem guestMemory, ptr, n uint64) int32 {
	if cs.outputLimit == 0 {
		return statusInvalid // not inside a hook call (e.g. during _initialize)
	}
	if uint64(len(cs.output))+uint64(uint32(n)) > uint64(cs.outputLimit) {
		cs.overflow = true
		return statusLimit
	}
	b, ok := mem.Read(uint32(ptr), uint32(n))
	if !ok {
		return statusInvalid
	}
	cs.output = append(cs.output, b...)
	return 0
}

func (cs *callState) configGet(mem guestMemory, kptr, klen, buf, capacity uint64) int32 {
	if uint32(klen) > 256 {
		return statusInvalid
	}
	k, ok := mem.Read(uint32(kptr), uint32(klen))
	if !ok {
		return statusInvalid
	}
	v, found := cs.pl.reg.Config[string(k)]
	if !found {
		return statusNotFound
	}
	return cs.readInto(mem, []byte(v), buf, capacity)
}

const maxLogLine = 4 << 10

func (cs *callState) logWrite(mem guestMemory, level, ptr, n uint64) {
	size := uint32(n)
	truncated := false
	if size > maxLogLine {
		size, truncated = maxLogLine, true
	}
	b, ok := mem.Read(uint32(ptr), size)
	if !ok {
		return
	}
	msg := string(b)
	if truncated {
		msg += "…"
	}
	lvl := slog.Level(int32(uint32(level)))
	cs.pl.logs.Add(lvl.String() + " " + msg)
}
