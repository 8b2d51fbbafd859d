package guard

import (
	"encoding/binary"
	"fmt"
)

// reader walks a byte slice; the first problem sticks in err and every
// later read returns zero.
type reader struct {
	b   []byte
	pos int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format+" at byte %d", append(args, r.pos)...)
	}
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 || n > 10 {
		r.fail("bad LEB128")
		return 0
	}
	r.pos += n
	return v
}

func (r *reader) u32() uint32 {
	v := r.u64()
	if v > 1<<32-1 {
		r.fail("value out of range")
		return 0
	}
	return uint32(v)
}

// count reads a vector length, which cannot exceed the bytes left.
func (r *reader) count() uint32 {
	n := r.u32()
	if int(n) > len(r.b)-r.pos {
		r.fail("vector longer than its section")
		return 0
	}
	return n
}

// skipLEB skips a signed or unsigned LEB128 of at most max bytes.
func (r *reader) skipLEB(max int) {
	for i := 0; i < max; i++ {
		if r.byte()&0x80 == 0 {
			return
		}
	}
	r.fail("bad LEB128")
}

func (r *reader) skip(n int) {
	if r.err == nil && n > len(r.b)-r.pos {
		r.fail("unexpected end")
	}
	if r.err == nil {
		r.pos += n
	}
}

func (r *reader) name() []byte {
	n := r.count()
	if r.err != nil {
		return nil
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s
}

// limits reads a table or memory limits (also shared and 64-bit ones) and returns the
// minimum.
func (r *reader) limits() uint64 {
	flags := r.byte()
	if flags > 0x07 {
		r.fail("limits flags %#x", flags)
	}
	lo := r.u64()
	if flags&0x01 != 0 {
		r.u64()
	}
	return lo
}

// blockType skips a block type: empty, one value type, or a type index.
func (r *reader) blockType() {
	if r.err != nil || r.pos >= len(r.b) {
		r.fail("unexpected end")
		return
	}
	switch r.b[r.pos] {
	case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		r.pos++
	default:
		r.skipLEB(5) // s33 type index
	}
}

func (r *reader) memarg() {
	if align := r.u32(); align&0x40 != 0 { // a memory index follows
		r.u32()
	}
	r.u64() // offset
}

// constExpr skips a constant expression (instructions up to its end).
func (r *reader) constExpr() {
	for r.err == nil && r.instr() != opEnd {
	}
}

// elementSegment skips one element segment, in any of its eight forms.
func (r *reader) elementSegment() {
	flags := r.u32()
	if flags > 7 {
		r.fail("element segment flags %d", flags)
		return
	}
	if flags&0x02 != 0 && flags&0x01 == 0 { // explicit table index
		r.u32()
	}
	if flags&0x01 == 0 { // active: an offset expression
		r.constExpr()
	}
	if flags&0x03 != 0 { // element kind or reference type
		r.byte()
	}
	for n := r.count(); n > 0 && r.err == nil; n-- {
		if flags&0x04 != 0 {
			r.constExpr()
		} else {
			r.u32() // function index
		}
	}
}

// Opcodes the rewrite cares about.
const (
	opBlock = 0x02
	opLoop  = 0x03
	opIf    = 0x04
	opElse  = 0x05
	opEnd   = 0x0b
)

// instr skips one instruction and returns its opcode (prefixed opcodes
// return the prefix).
func (r *reader) instr() byte {
	op := r.byte()
	switch {
	case r.err != nil:
	case op == opBlock || op == opLoop || op == opIf:
		r.blockType()
	case op <= 0x01, op == opElse, op == opEnd, op == 0x0f, op == 0x1a, op == 0x1b, op == 0xd1,
		op >= 0x45 && op <= 0xc4:
		// no immediate
	case op == 0x0c, op == 0x0d, op == 0x10, op == 0x12, op == 0xd2, op >= 0x20 && op <= 0x26:
		r.u32() // br, br_if, call, return_call, ref.func, local.*, global.*, table.get/set
	case op == 0x0e: // br_table
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
		r.u32()
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select t*
		for n := r.count(); n > 0 && r.err == nil; n-- {
			r.byte()
		}
	case op >= 0x28 && op <= 0x3e:
		r.memarg()
	case op == 0x3f, op == 0x40: // memory.size, memory.grow
		r.u32()
	case op == 0x41:
		r.skipLEB(5)
	case op == 0x42:
		r.skipLEB(10)
	case op == 0x43:
		r.skip(4)
	case op == 0x44:
		r.skip(8)
	case op == 0xd0: // ref.null
		r.byte()
	case op == 0xfc:
		r.prefixFC()
	case op == 0xfd:
		r.prefixFD()
	default:
		r.fail("unsupported opcode %#x", op)
	}
	return op
}

func (r *reader) prefixFC() {
	switch sub := r.u32(); {
	case r.err != nil:
	case sub <= 7: // saturating truncations
	case sub == 8, sub == 10, sub == 12, sub == 14: // memory.init, memory.copy, table.init, table.copy
		r.u32()
		r.u32()
	case sub == 9, sub == 11, sub == 13, sub == 15, sub == 16, sub == 17:
		r.u32() // data.drop, memory.fill, elem.drop, table.grow/size/fill
	default:
		r.fail("unsupported opcode 0xfc %d", sub)
	}
}

func (r *reader) prefixFD() {
	switch sub := r.u32(); {
	case r.err != nil:
	case sub <= 11, sub == 92, sub == 93: // loads and stores
		r.memarg()
	case sub == 12, sub == 13: // v128.const, i8x16.shuffle
		r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane
		r.byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane
		r.memarg()
		r.byte()
	case sub <= 0x113: // the rest of SIMD and relaxed SIMD take no immediate
	default:
		r.fail("unsupported opcode 0xfd %d", sub)
	}
}

// rewriteCode returns the code section's function count and its entries
// with a fuel check at the start of every function body and after every
// loop header.
func rewriteCode(sec []byte, fuel, tick uint32) (uint64, []byte, error) {
	r := &reader{b: sec}
	n := r.count()
	out := make([]byte, 0, len(sec)+len(sec)/8+64)
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		if r.err == nil && int(size) > len(r.b)-r.pos {
			r.fail("function body longer than the section")
		}
		if r.err != nil {
			break
		}
		body, err := rewriteBody(r.b[r.pos:r.pos+int(size)], fuel, tick)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: function %d: %w", ErrUnsupported, i, err)
		}
		out = appendBytes(out, body)
		r.pos += int(size)
	}
	if r.err == nil && r.pos != len(r.b) {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return 0, nil, fmt.Errorf("%w: code section: %w", ErrUnsupported, r.err)
	}
	return uint64(n), out, nil
}

// rewriteBody instruments one function body (locals, then instructions).
// A first pass measures each loop, a second copies the body with the
// checks inserted.
func rewriteBody(body []byte, fuel, tick uint32) ([]byte, error) {
	r := &reader{b: body}
	locals := uint64(0)
	for n := r.count(); n > 0 && r.err == nil; n-- {
		locals += uint64(r.u32()) // how many
		r.byte()                  // of which type
	}
	if locals > MaxLocals {
		r.fail("%d locals, more than %d", locals, MaxLocals)
	}
	codeStart := r.pos

	// Pass 1: the length of every loop, by its header's end offset.
	loops := map[int]int{}
	type frame struct {
		loop bool
		at   int
	}
	stack := []frame{{}}
	// A function that reaches a loop header before any branch, call or
	// return needs no check of its own at entry: the loop's check runs
	// first on every path (Go-built functions all start this way).
	prefix, entryCovered := true, false
	for r.err == nil && len(stack) > 0 {
		op := r.instr()
		if prefix && op != opBlock && transfers(op) {
			prefix, entryCovered = false, op == opLoop
		}
		switch op {
		case opBlock, opIf:
			stack = append(stack, frame{})
		case opLoop:
			stack = append(stack, frame{loop: true, at: r.pos})
		case opEnd:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if f.loop {
				loops[f.at] = r.pos - f.at
			}
		}
	}
	if r.err == nil && r.pos != len(body) {
		r.fail("bytes after the function's end")
	}
	if r.err != nil {
		return nil, r.err
	}

	// Pass 2: copy with a check after the locals and after each loop header.
	out := make([]byte, 0, len(body)+(len(loops)+1)*20)
	out = append(out, body[:codeStart]...)
	if !entryCovered {
		out = appendCheck(out, len(body)-codeStart, fuel, tick)
	}
	r = &reader{b: body, pos: codeStart}
	for from := codeStart; r.pos < len(body) && r.err == nil; {
		op := r.instr()
		if op == opLoop {
			out = append(out, body[from:r.pos]...)
			out = appendCheck(out, loops[r.pos], fuel, tick)
			from = r.pos
		}
		if r.pos == len(body) {
			out = append(out, body[from:]...)
		}
	}
	return out, nil
}

// transfers reports whether op may transfer control (branches, calls,
// returns, structured control other than block) — everything a run of
// code can do other than fall through to the next instruction.
func transfers(op byte) bool {
	switch op {
	case opLoop, opIf, opElse, opEnd, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13:
		return true
	}
	return false
}

// appendCheck appends: fuel -= cost; if fuel <= 0 { call tick }.
func appendCheck(dst []byte, codeBytes int, fuel, tick uint32) []byte {
	cost := 1 + min(codeBytes/costUnit, Refill/4)
	dst = append(dst, 0x23) // global.get fuel
	dst = binary.AppendUvarint(dst, uint64(fuel))
	dst = append(dst, 0x41) // i32.const cost
	dst = appendSLEB(dst, int64(cost))
	dst = append(dst, 0x6b, 0x24) // i32.sub; global.set fuel
	dst = binary.AppendUvarint(dst, uint64(fuel))
	dst = append(dst, 0x23) // global.get fuel
	dst = binary.AppendUvarint(dst, uint64(fuel))
	dst = append(dst, 0x41, 0x00, 0x4c, 0x04, 0x40, 0x10) // i32.const 0; i32.le_s; if; call tick
	dst = binary.AppendUvarint(dst, uint64(tick))
	return append(dst, 0x0b) // end
}
