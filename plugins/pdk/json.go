package pdk

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The kinds a Value can have. Invalid is the zero Value: a missing member,
// an index past the end, or bytes that are not JSON.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Object
	Array
)

// maxDepth bounds nesting so a hostile document cannot exhaust the guest stack.
const maxDepth = 256

// Value is one JSON value, kept as the raw bytes the host sent. Reading a
// member scans those bytes in place: nothing is decoded until asked for, so
// a filter that looks at two fields of a large document pays for two fields.
//
// A Value handed to a hook handler is valid only until the handler returns
// (the input buffer is reused by the next call); copy what must outlive it.
type Value struct {
	raw []byte
}

// ParseValue returns raw as a Value, or the zero Value when raw is not one
// complete JSON value.
func ParseValue(raw []byte) Value {
	start := skipSpace(raw, 0)
	end, ok := skipValue(raw, start, 0)
	if !ok || skipSpace(raw, end) != len(raw) {
		return Value{}
	}
	return Value{raw: raw[start:end]}
}

// Raw returns the value's JSON text.
func (v Value) Raw() []byte { return v.raw }

// Exists reports whether the value is present (not Invalid).
func (v Value) Exists() bool { return len(v.raw) > 0 }

// Kind reports the JSON type of the value.
func (v Value) Kind() Kind {
	if len(v.raw) == 0 {
		return Invalid
	}
	switch v.raw[0] {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	default:
		return Number
	}
}

// Get returns the member key of an object, or the zero Value when v is not
// an object or has no such member.
func (v Value) Get(key string) Value {
	var found Value
	v.scanObject(func(k []byte, escaped bool, val Value) bool {
		if keyEqual(k, escaped, key) {
			found = val
			return false
		}
		return true
	})
	return found
}

// Members calls fn for each member of an object, in document order, until fn
// returns false. It does nothing when v is not an object.
func (v Value) Members(fn func(key string, val Value) bool) {
	v.scanObject(func(k []byte, escaped bool, val Value) bool {
		if escaped {
			s, _ := unescape(k)
			return fn(s, val)
		}
		return fn(string(k), val)
	})
}

// Elements calls fn for each element of an array, in order, until fn returns
// false. It does nothing when v is not an array.
func (v Value) Elements(fn func(i int, val Value) bool) {
	b := v.raw
	if len(b) < 2 || b[0] != '[' {
		return
	}
	i := skipSpace(b, 1)
	if i < len(b) && b[i] == ']' {
		return
	}
	for n := 0; i < len(b); n++ {
		end, ok := skipValue(b, i, 1)
		if !ok {
			return
		}
		if !fn(n, Value{raw: b[i:end]}) {
			return
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipSpace(b, i+1)
	}
}

// Len returns the number of elements of an array or members of an object,
// and 0 for anything else.
func (v Value) Len() int {
	n := 0
	switch v.Kind() {
	case Array:
		v.Elements(func(int, Value) bool { n++; return true })
	case Object:
		v.scanObject(func([]byte, bool, Value) bool { n++; return true })
	}
	return n
}

// AsString returns the unescaped text of a JSON string.
func (v Value) AsString() (string, bool) {
	b := v.raw
	if len(b) < 2 || b[0] != '"' {
		return "", false
	}
	inner := b[1 : len(b)-1]
	for _, c := range inner {
		if c == '\\' {
			return unescape(inner)
		}
	}
	return string(inner), true
}

// Text returns the unescaped text of a JSON string, or "" for anything else.
func (v Value) Text() string {
	s, _ := v.AsString()
	return s
}

// AsInt returns a JSON number that is an integer.
func (v Value) AsInt() (int64, bool) {
	if v.Kind() != Number {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v.raw), 10, 64)
	return n, err == nil
}

// AsFloat returns a JSON number as a float64.
func (v Value) AsFloat() (float64, bool) {
	if v.Kind() != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v.raw), 64)
	return f, err == nil
}

// AsBool returns a JSON true or false.
func (v Value) AsBool() (bool, bool) {
	switch string(v.raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsNull reports whether the value is JSON null.
func (v Value) IsNull() bool { return string(v.raw) == "null" }

// scanObject walks the members of an object; keys are passed raw (without
// quotes), with escaped telling whether they contain a backslash.
func (v Value) scanObject(fn func(key []byte, escaped bool, val Value) bool) {
	b := v.raw
	if len(b) < 2 || b[0] != '{' {
		return
	}
	i := skipSpace(b, 1)
	for i < len(b) && b[i] == '"' {
		kEnd, escaped, ok := scanString(b, i)
		if !ok {
			return
		}
		key := b[i+1 : kEnd-1]
		i = skipSpace(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return
		}
		i = skipSpace(b, i+1)
		end, ok := skipValue(b, i, 1)
		if !ok {
			return
		}
		if !fn(key, escaped, Value{raw: b[i:end]}) {
			return
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			return
		}
		i = skipSpace(b, i+1)
	}
}

func keyEqual(raw []byte, escaped bool, key string) bool {
	if !escaped {
		return string(raw) == key
	}
	s, ok := unescape(raw)
	return ok && s == key
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the index just past the closing quote of the string
// starting at b[i] == '"', and whether it contains escapes.
func scanString(b []byte, i int) (end int, escaped bool, ok bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return 0, false, false
		}
	}
	return 0, false, false
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxDepth {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		end, _, ok := scanString(b, i)
		return end, ok
	case '{', '[':
		closeCh := byte('}')
		if c == '[' {
			closeCh = ']'
		}
		j := skipSpace(b, i+1)
		if j < len(b) && b[j] == closeCh {
			return j + 1, true
		}
		for j < len(b) {
			if c == '{' {
				if b[j] != '"' {
					return 0, false
				}
				kEnd, _, ok := scanString(b, j)
				if !ok {
					return 0, false
				}
				j = skipSpace(b, kEnd)
				if j >= len(b) || b[j] != ':' {
					return 0, false
				}
				j = skipSpace(b, j+1)
			}
			end, ok := skipValue(b, j, depth+1)
			if !ok {
				return 0, false
			}
			j = skipSpace(b, end)
			if j >= len(b) {
				return 0, false
			}
			if b[j] == closeCh {
				return j + 1, true
			}
			if b[j] != ',' {
				return 0, false
			}
			j = skipSpace(b, j+1)
		}
		return 0, false
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		j := i
	digits:
		for j < len(b) {
			switch b[j] {
			case '-', '+', '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				j++
			default:
				break digits
			}
		}
		return j, j > i
	}
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// unescape decodes the inside of a JSON string literal.
func unescape(s []byte) (string, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch s[i] {
		case '"', '\\', '/':
			out = append(out, s[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if r2, ok := hex4(s, i+3); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 6
						}
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(s []byte, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range s[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// AppendString appends s to dst as a JSON string literal.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
