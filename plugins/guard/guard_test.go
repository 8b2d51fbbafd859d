package guard

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// sec encodes one section.
func sec(id byte, content ...byte) []byte {
	return append(binary.AppendUvarint([]byte{id}, uint64(len(content))), content...)
}

// vec encodes a vector of entries.
func vec(entries ...[]byte) []byte {
	out := binary.AppendUvarint(nil, uint64(len(entries)))
	for _, e := range entries {
		out = append(out, e...)
	}
	return out
}

// body encodes a function body without locals.
func body(code ...byte) []byte {
	return appendBytes(nil, append([]byte{0x00}, code...))
}

func module(sections ...[]byte) []byte {
	return bytes.Join(append([][]byte{header}, sections...), nil)
}

// loopModule has one memory and one function holding a nested loop.
var loopModule = module(
	sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
	sec(secFunction, vec([]byte{0x00})...),
	sec(secMemory, vec([]byte{0x00, 0x01})...),
	sec(secCode, vec(body(
		0x03, 0x40, // loop
		0x03, 0x40, 0x0c, 0x00, 0x0b, // loop br 0 end
		0x0b, 0x0b, // end end
	))...),
)

// parse reads an instrumented module back.
func parse(t *testing.T, m []byte) ([]section, moduleInfo) {
	t.Helper()
	secs, err := splitSections(m[len(header):])
	if err != nil {
		t.Fatalf("output sections: %v", err)
	}
	var info moduleInfo
	for _, s := range secs {
		if err := info.read(s); err != nil {
			t.Fatal(err)
		}
	}
	return secs, info
}

// checks counts the fuel checks in m's code (calls of the guard function).
func checks(t *testing.T, m []byte) int {
	t.Helper()
	secs, info := parse(t, m)
	tick := info.funcImports + info.funcs - 1
	n := 0
	for _, s := range secs {
		if s.id == secCode {
			n = bytes.Count(s.content, append([]byte{0x04, 0x40, 0x10}, binary.AppendUvarint(nil, uint64(tick))...))
		}
	}
	return n
}

func TestInstrumentAddsChecksAndSections(t *testing.T) {
	cases := []struct {
		name   string
		in     []byte
		checks int
	}{
		// One per loop (the outer loop also covers the entry).
		{"loops", loopModule, 2},
		// Only a memory: every section the guard needs is created, in order.
		{"memory only", module(sec(secMemory, vec([]byte{0x00, 0x01})...)), 0},
		// A function reaching a loop before any branch needs no entry check.
		{"loop first", module(
			sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
			sec(secFunction, vec([]byte{0x00})...),
			sec(secMemory, vec([]byte{0x00, 0x01})...),
			sec(secCode, vec(body(0x02, 0x40, 0x03, 0x40, 0x0b, 0x0b, 0x0b))...),
		), 1},
		// An imported function and global shift the new indexes; custom
		// sections stay where they were.
		{"imports", module(
			sec(secCustom, 0x01, 'x', 0xaa),
			sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
			sec(secImport, vec(
				[]byte{0x01, 'm', 0x01, 'f', 0x00, 0x00},
				[]byte{0x01, 'm', 0x01, 'g', 0x03, 0x7f, 0x00},
				[]byte{0x01, 'm', 0x03, 'm', 'e', 'm', 0x02, 0x00, 0x01},
			)...),
			sec(secFunction, vec([]byte{0x00})...),
			sec(secCode, vec(body(0x10, 0x00, 0x0b))...),
			sec(secCustom, 0x01, 'y'),
		), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Instrument(tc.in)
			if err != nil {
				t.Fatalf("Instrument: %v", err)
			}
			if got := checks(t, out); got != tc.checks {
				t.Errorf("checks = %d, want %d", got, tc.checks)
			}
			if _, info := parse(t, out); !info.exports[StopExport] {
				t.Errorf("no %s export", StopExport)
			}
			// Instrumenting twice is refused: the output parses completely.
			if _, err := Instrument(out); !errors.Is(err, ErrUnsupported) {
				t.Errorf("second Instrument error = %v, want ErrUnsupported", err)
			}
		})
	}
}

func TestStartSectionMovesToExport(t *testing.T) {
	in := module(
		sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
		sec(secFunction, vec([]byte{0x00})...),
		sec(secMemory, vec([]byte{0x00, 0x01})...),
		sec(secStart, 0x00),
		sec(secCode, vec(body(0x0b))...),
	)
	out, err := Instrument(in)
	if err != nil {
		t.Fatal(err)
	}
	if _, info := parse(t, out); info.start != nil || !info.exports[StartExport] || !info.exports[StopExport] {
		t.Errorf("start section %v, exports %v: want no start section, %s and %s exported",
			info.start, info.exports, StartExport, StopExport)
	}
}

func TestInstrumentRefuses(t *testing.T) {
	cases := map[string][]byte{
		"empty":        nil,
		"not wasm":     []byte("\x00asm\x02\x00\x00\x00"),
		"no memory":    module(sec(secType, vec([]byte{0x60, 0x00, 0x00})...)),
		"short":        append(module(), 0x01, 0x05, 0x00),
		"out of order": module(sec(secMemory, vec([]byte{0x00, 0x01})...), sec(secType, 0x00)),
		"bad opcode": module(
			sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
			sec(secFunction, vec([]byte{0x00})...),
			sec(secMemory, vec([]byte{0x00, 0x01})...),
			sec(secCode, vec(body(0xff, 0x0b))...),
		),
		"huge table": module(
			sec(secTable, vec([]byte{0x70, 0x00, 0xff, 0xff, 0xff, 0x3f})...),
			sec(secMemory, vec([]byte{0x00, 0x01})...),
		),
		"too many locals": module(
			sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
			sec(secFunction, vec([]byte{0x00})...),
			sec(secMemory, vec([]byte{0x00, 0x01})...),
			sec(secCode, vec(appendBytes(nil, []byte{0x01, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b}))...),
		),
		"unterminated": module(
			sec(secType, vec([]byte{0x60, 0x00, 0x00})...),
			sec(secFunction, vec([]byte{0x00})...),
			sec(secMemory, vec([]byte{0x00, 0x01})...),
			sec(secCode, vec(body(0x03, 0x40, 0x0b))...),
		),
	}
	for name, in := range cases {
		if _, err := Instrument(in); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: error = %v, want ErrUnsupported", name, err)
		}
	}
}

func TestInstrumentExamples(t *testing.T) {
	mods, _ := filepath.Glob("../examples/*.wasm")
	if len(mods) == 0 {
		t.Skip("examples not built (make plugins)")
	}
	for _, p := range mods {
		in, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Instrument(in)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if n := checks(t, out); n == 0 {
			t.Errorf("%s: no checks inserted", p)
		}
	}
}

// FuzzInstrument: any input either is refused with ErrUnsupported or gives
// a module that parses completely again (a second Instrument sees the stop
// export), never a panic. plugins/host's FuzzGuardCompiles checks that
// wazero accepts the output.
func FuzzInstrument(f *testing.F) {
	f.Add(loopModule)
	f.Add(module(sec(secMemory, vec([]byte{0x00, 0x01})...)))
	f.Add(module(
		sec(secType, vec([]byte{0x60, 0x01, 0x7f, 0x00})...),
		sec(secFunction, vec([]byte{0x00})...),
		sec(secMemory, vec([]byte{0x00, 0x01})...),
		sec(secCode, vec(body(0x20, 0x00, 0x04, 0x40, 0x0e, 0x01, 0x00, 0x00, 0x0b,
			0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a,
			0xfc, 0x0b, 0x00, 0x0b))...),
	))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Instrument(in)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v is not ErrUnsupported", err)
			}
			return
		}
		if _, err := Instrument(out); err == nil || !bytes.Contains([]byte(err.Error()), []byte(StopExport)) {
			t.Fatalf("output does not parse back: %v", err)
		}
	})
}
