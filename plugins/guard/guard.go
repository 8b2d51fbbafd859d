// Package guard rewrites a WebAssembly module so that its host can stop a
// call that runs too long, at a cost of a few instructions per loop
// iteration and function call.
//
// wazero stops a runaway call only with WithCloseOnContextDone, which makes
// compiled code leave for Go at every loop iteration (wazero issue #2466):
// a Go-built plugin spends most of its time there. Instrument instead gives
// the module a fuel counter. Every function entry and every loop header
// spends fuel in proportion to the code it guards; when the fuel runs out the
// module calls an added guard function, which refills it, makes one brief
// exit to the host (memory.grow 0, so the Go scheduler may preempt the
// thread and the host's timers run even on one core), and traps if the host
// has raised the exported stop flag. Every unbounded computation in Wasm
// goes through a loop header or a call, so a raised flag stops any guest
// within one refill's worth of work (well under a millisecond).
//
// The rewrite appends a type, two globals, a function and an export, so no
// existing index moves; sections it does not touch are copied byte for
// byte. Modules using instructions outside WebAssembly 2.0 (plus tail calls
// and extended constant expressions) are refused with an error.
package guard

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// StopExport is the name of the exported mutable i32 global the host sets
// to 1 to stop the running call. An instance whose flag was raised must be
// discarded.
const StopExport = "gatehouse_guard_stop"

// StartExport is the export under which the module's start function (its
// start section) is moved: a start section runs inside instantiation, where
// no stop flag can reach it yet, so the host calls this export right after
// instantiating, with the guard armed, before anything else.
const StartExport = "gatehouse_guard_start"

// Refill is the fuel given at each refill: about this many loop
// iterations of a small loop run between two exits to the host.
const Refill = 1 << 15

// MaxLocals is the most locals a function may declare (as in V8 and SpiderMonkey). wazero
// 1.12 allocates per declared local before it checks: a 38-byte module declaring 2^32-1
// locals cost it 108 s and 22 GB.
const MaxLocals = 50000

// MaxTableMin is the largest initial table size accepted: wazero allocates a table at
// instantiation, per instance, outside the memory limit (its own cap, 2^27 entries, is 1 GB).
// A Go-built module's table has one entry per function, a few thousand.
const MaxTableMin = 1 << 20

// costUnit is the number of code bytes one unit of fuel pays for: a loop
// or function of n bytes spends 1 + n/costUnit per entry, so a long
// straight-line body cannot stretch the time between two checks.
const costUnit = 128

// ErrUnsupported reports a module the guard cannot instrument (malformed,
// or using instructions it does not know); the host refuses such modules.
var ErrUnsupported = errors.New("guard: cannot instrument module")

var header = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// order is each known section's position in a module (custom sections
// may sit anywhere).
var order = map[byte]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6, secGlobal: 7,
	secExport: 8, secStart: 9, secElement: 10, secDataCount: 11, secCode: 12, secData: 13,
}

type section struct {
	id      byte
	content []byte
}

// Instrument returns a copy of the module with the guard added. The input
// is not modified.
func Instrument(wasm []byte) ([]byte, error) {
	if len(wasm) < len(header) || string(wasm[:len(header)]) != string(header) {
		return nil, fmt.Errorf("%w: not a WebAssembly 1.0 binary module", ErrUnsupported)
	}
	secs, err := splitSections(wasm[len(header):])
	if err != nil {
		return nil, err
	}
	var m moduleInfo
	for _, s := range secs {
		if err := m.read(s); err != nil {
			return nil, err
		}
	}
	if m.memories == 0 {
		return nil, fmt.Errorf("%w: the module has no memory", ErrUnsupported)
	}
	if m.exports[StopExport] || m.exports[StartExport] {
		return nil, fmt.Errorf("%w: the module already exports %s or %s", ErrUnsupported, StopExport, StartExport)
	}
	p := plan{fuel: m.globals, stop: m.globals + 1, tickType: m.types, tick: m.funcImports + m.funcs, start: m.start}

	out := append([]byte(nil), header...)
	added := map[byte]bool{}
	emit := func(id byte, content []byte) {
		out = append(out, id)
		out = binary.AppendUvarint(out, uint64(len(content)))
		out = append(out, content...)
	}
	// addMissing emits the sections this rewrite needs that the module
	// lacks and that belong before a section of rank r.
	addMissing := func(r int) {
		for _, id := range []byte{secType, secFunction, secGlobal, secExport, secCode} {
			if !added[id] && !m.has[id] && order[id] < r {
				added[id] = true
				emit(id, appendVec(nil, 0, nil, p, id))
			}
		}
	}
	for _, s := range secs {
		if s.id != secCustom {
			addMissing(order[s.id])
		}
		switch s.id {
		case secType, secFunction, secGlobal, secExport:
			n, rest := uvarint(s.content)
			emit(s.id, appendVec(nil, n, rest, p, s.id))
		case secCode:
			n, bodies, err := rewriteCode(s.content, p.fuel, p.tick)
			if err != nil {
				return nil, err
			}
			emit(s.id, appendVec(nil, n, bodies, p, s.id))
		case secStart:
			// Moved to StartExport.
		default:
			emit(s.id, s.content)
		}
		added[s.id] = true
	}
	addMissing(len(order) + 1)
	return out, nil
}

// plan holds the indexes of what the rewrite adds.
type plan struct {
	fuel, stop     uint32 // globals
	tickType, tick uint32 // the guard function's type and index
	start          *uint32
}

// entries returns what the rewrite appends to section id, and how many
// entries that is.
func (p plan) entries(id byte) ([]byte, uint64) {
	switch id {
	case secType:
		return []byte{0x60, 0x00, 0x00}, 1 // func () -> ()
	case secFunction:
		return binary.AppendUvarint(nil, uint64(p.tickType)), 1
	case secGlobal:
		g := []byte{0x7f, 0x01, 0x41} // mutable i32 = Refill
		g = appendSLEB(g, Refill)
		return append(g, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b), 2 // and mutable i32 = 0
	case secExport:
		e := appendExport(nil, StopExport, 0x03, p.stop) // a global
		if p.start == nil {
			return e, 1
		}
		return appendExport(e, StartExport, 0x00, *p.start), 2 // a function
	case secCode:
		body := []byte{0x00, 0x41} // no locals; i32.const Refill
		body = appendSLEB(body, Refill)
		body = append(body, 0x24) // global.set fuel
		body = binary.AppendUvarint(body, uint64(p.fuel))
		body = append(body, 0x41, 0x00, 0x40, 0x00, 0x1a, 0x23) // memory.grow 0; drop; global.get stop
		body = binary.AppendUvarint(body, uint64(p.stop))
		body = append(body, 0x04, 0x40, 0x00, 0x0b, 0x0b) // if unreachable end; end
		return appendBytes(nil, body), 1
	}
	return nil, 0
}

func appendExport(dst []byte, name string, kind byte, index uint32) []byte {
	dst = appendBytes(dst, []byte(name))
	dst = append(dst, kind)
	return binary.AppendUvarint(dst, uint64(index))
}

// appendVec appends a vector of n existing entries (their bytes in rest)
// followed by the plan's new entries for section id.
func appendVec(dst []byte, n uint64, rest []byte, p plan, id byte) []byte {
	add, k := p.entries(id)
	dst = binary.AppendUvarint(dst, n+k)
	dst = append(dst, rest...)
	return append(dst, add...)
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendSLEB appends v as a signed LEB128.
func appendSLEB(dst []byte, v int64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(dst, b)
		}
		dst = append(dst, b|0x80)
	}
}

// uvarint reads an unsigned LEB128 from the front of b; on malformed input
// it returns 0 and b (the callers have validated the vector already).
func uvarint(b []byte) (uint64, []byte) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, b
	}
	return v, b[n:]
}

func splitSections(b []byte) ([]section, error) {
	var secs []section
	last := 0
	for len(b) > 0 {
		id := b[0]
		size, n := binary.Uvarint(b[1:])
		if n <= 0 || size > uint64(len(b)-1-n) {
			return nil, fmt.Errorf("%w: malformed section %d", ErrUnsupported, id)
		}
		if id != secCustom {
			r, ok := order[id]
			if !ok || r <= last {
				return nil, fmt.Errorf("%w: unknown or misplaced section %d", ErrUnsupported, id)
			}
			last = r
		}
		secs = append(secs, section{id: id, content: b[1+n : 1+n+int(size)]})
		b = b[1+n+int(size):]
	}
	return secs, nil
}

// moduleInfo is what the rewrite needs to know of the module: the counts
// that give the new entries their indexes.
type moduleInfo struct {
	has         map[byte]bool
	types       uint32
	funcImports uint32
	funcs       uint32
	globals     uint32 // imported and defined
	memories    uint32 // imported and defined
	exports     map[string]bool
	start       *uint32 // the start function, if any
}

func (m *moduleInfo) read(s section) error {
	if m.has == nil {
		m.has, m.exports = map[byte]bool{}, map[string]bool{}
	}
	m.has[s.id] = true
	r := &reader{b: s.content}
	switch s.id {
	case secType:
		m.types = r.count()
		for i := m.types; i > 0 && r.err == nil; i-- {
			if form := r.byte(); form != 0x60 {
				r.fail("type form %#x", form)
			}
			r.name() // parameter types, one byte each
			r.name() // result types
		}
	case secFunction:
		m.funcs = r.count()
		for i := m.funcs; i > 0 && r.err == nil; i-- {
			if t := r.u32(); t >= m.types {
				r.fail("type index %d out of range", t)
			}
		}
	case secMemory:
		n := r.count()
		m.memories += n
		for ; n > 0 && r.err == nil; n-- {
			r.limits()
		}
	case secGlobal:
		n := r.count()
		m.globals += n
		for ; n > 0 && r.err == nil; n-- {
			r.byte() // value type
			r.byte() // mutability
			r.constExpr()
		}
	case secImport:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.name()
			r.name()
			switch kind := r.byte(); kind {
			case 0x00: // function
				r.u32()
				m.funcImports++
			case 0x01: // table
				r.byte()
				r.limits()
			case 0x02: // memory
				r.limits()
				m.memories++
			case 0x03: // global
				r.byte()
				r.byte()
				m.globals++
			case 0x04: // tag
				r.byte()
				r.u32()
			default:
				r.fail("import kind %#x", kind)
			}
		}
	case secExport:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			m.exports[string(r.name())] = true
			r.byte()
			r.u32()
		}
	case secStart:
		f := r.u32()
		m.start = &f
	case secDataCount:
		r.u32()
	// Tables, elements, data and tags are copied as they are, but read through so that no
	// vector claims more entries than its section has bytes: wazero 1.12 preallocates by
	// such counts (a 60-byte module made it allocate 2.3 GB before refusing it, another
	// took it 10 s).
	case secTable:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.byte() // reference type
			if min := r.limits(); min > MaxTableMin {
				r.fail("a table of %d entries at start, more than %d", min, MaxTableMin)
			}
		}
	case secElement:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.elementSegment()
		}
	case secData:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			switch flags := r.u32(); flags {
			case 0:
				r.constExpr()
			case 1:
			case 2:
				r.u32()
				r.constExpr()
			default:
				r.fail("data segment flags %d", flags)
			}
			r.name() // the bytes
		}
	case secTag:
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.byte()
			r.u32()
		}
	default:
		return nil // copied as they are
	}
	if r.err == nil && r.pos != len(r.b) {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return fmt.Errorf("%w: malformed section %d: %w", ErrUnsupported, s.id, r.err)
	}
	return nil
}
