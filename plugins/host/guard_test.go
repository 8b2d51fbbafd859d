package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/plugins/guard"
	"github.com/tetratelabs/wazero"
)

// wasmSection encodes one section of a hand-assembled module.
func wasmSection(id byte, entries ...[]byte) []byte {
	content := binary.AppendUvarint(nil, uint64(len(entries)))
	for _, e := range entries {
		content = append(content, e...)
	}
	return append(binary.AppendUvarint([]byte{id}, uint64(len(content))), content...)
}

func wasmName(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func wasmBody(code ...byte) []byte {
	return append([]byte{byte(len(code) + 1), 0x00}, code...) // no locals
}

// callTreeModule is a plugin whose forms.submit hook calls a function that
// calls itself twice, 62 levels deep: 2^62 calls and not one loop, which
// only a check at function entry can stop.
func callTreeModule() []byte {
	return bytes.Join([][]byte{
		[]byte("\x00asm\x01\x00\x00\x00"),
		wasmSection(1, []byte{0x60, 0x00, 0x01, 0x7f}, []byte{0x60, 0x01, 0x7f, 0x00}),
		wasmSection(3, []byte{0x00}, []byte{0x00}, []byte{0x01}),
		wasmSection(5, []byte{0x00, 0x01}),
		wasmSection(7,
			append(wasmName("memory"), 0x02, 0x00),
			append(wasmName(abiMarker), 0x00, 0x00),
			append(wasmName("hook_forms_submit"), 0x00, 0x01)),
		wasmSection(10,
			wasmBody(0x41, 0x00, 0x0b),                       // marker: i32.const 0
			wasmBody(0x41, 62, 0x10, 0x02, 0x41, 0x00, 0x0b), // hook: tree(62); i32.const 0
			wasmBody(0x20, 0x00, 0x04, 0x40, // tree(n): if n {
				0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x02, // tree(n-1)
				0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x02, // tree(n-1)
				0x0b, 0x0b)), // } end
	}, nil)
}

// startLoopModule is a plugin whose start section never returns.
func startLoopModule() []byte {
	return bytes.Join([][]byte{
		[]byte("\x00asm\x01\x00\x00\x00"),
		wasmSection(1, []byte{0x60, 0x00, 0x01, 0x7f}, []byte{0x60, 0x00, 0x00}),
		wasmSection(3, []byte{0x00}, []byte{0x01}),
		wasmSection(5, []byte{0x00, 0x01}),
		wasmSection(7, append(wasmName("memory"), 0x02, 0x00), append(wasmName(abiMarker), 0x00, 0x00),
			append(wasmName("hook_forms_submit"), 0x00, 0x00)),
		{0x08, 0x01, 0x01}, // start: function 1
		wasmSection(10,
			wasmBody(0x41, 0x00, 0x0b),                    // marker and hook: i32.const 0
			wasmBody(0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b)), // loop br 0 end
	}, nil)
}

func TestStartSectionLoopIsStopped(t *testing.T) {
	t.Parallel()
	h := newHost(t, func(o *Options) { o.MaxTimeout = 300 * time.Millisecond })
	start := time.Now()
	err := h.Register(context.Background(), Registration{Project: "demo", Name: "start", Module: startLoopModule(),
		Hooks: []string{HookFormsSubmit}, Limits: Limits{TimeoutMs: 100}})
	if !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("Register = %v, want ErrInvalidModule (start never finished)", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Register returned after %v, want about 300ms", d)
	}
}

func TestCallTreeWithoutLoopsTimesOut(t *testing.T) {
	t.Parallel()
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "tree", Module: callTreeModule(), Hooks: []string{HookFormsSubmit},
		OnError: OnErrorClosed, Limits: Limits{TimeoutMs: 200}})
	start := time.Now()
	_, err := h.FormsSubmit(context.Background(), "demo", "contact", msg("x"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("FormsSubmit(tree) error = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopped after %v, want about 200ms", d)
	}
}

// TestGuardStopsLoopOnOneCore: with a single P, the timer that raises the
// stop flag runs only because the guard leaves the guest for Go now and
// then. Not parallel: it changes GOMAXPROCS for the whole process.
func TestGuardStopsLoopOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "loop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{TimeoutMs: 100}})
	for range 2 {
		start := time.Now()
		_, err := h.FormsSubmit(context.Background(), "demo", "contact", msg("loop"))
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("FormsSubmit(loop) error = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("stopped after %v, want about 100ms", d)
		}
	}
}

// TestCallerGoneStopsGuest: a caller that gives up stops the guest too.
func TestCallerGoneStopsGuest(t *testing.T) {
	t.Parallel()
	h := newHost(t, nil)
	mustRegister(t, h, Registration{Name: "loop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed,
		Limits: Limits{TimeoutMs: 5000}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := h.FormsSubmit(ctx, "demo", "contact", msg("loop"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("FormsSubmit error = %v, want the caller's context error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returned after %v, want about 100ms", d)
	}
}

// FuzzGuardCompiles: whenever the guard instruments a module that wazero
// accepts, wazero accepts the instrumented module too.
func FuzzGuardCompiles(f *testing.F) {
	f.Add(callTreeModule())
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x00\x01"))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, in []byte) {
		// The guard reads the module first, as the host does: wazero 1.12
		// spends seconds refusing some tiny malformed modules (a huge
		// vector length) that the guard refuses at once.
		out, err := guard.Instrument(in)
		if err != nil {
			if !errors.Is(err, guard.ErrUnsupported) {
				t.Fatalf("Instrument error %v is not ErrUnsupported", err)
			}
			return
		}
		// A runtime per input: a long run of compilations in one runtime
		// exhausts the process's memory mappings.
		rt := wazero.NewRuntime(ctx)
		defer rt.Close(ctx)
		if _, err := compileModule(ctx, rt, in); err != nil {
			return
		}
		if _, err := compileModule(ctx, rt, out); err != nil {
			t.Fatalf("instrumented module refused: %v", err)
		}
	})
}
