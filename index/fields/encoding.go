// Package fields keeps ordered secondary indexes of record field values in badger, through
// edge/store: each value is encoded so that byte order equals value order (numbers as numbers,
// dates as instants, strings by bytes), and one index entry is the key
// <prefix><encoded value><record id>. Equality, range, in, sort and groupBy become prefix and
// range scans over those keys.
//
// Encodings are self-delimiting (no encoded value is a prefix of another), so an entry key
// splits back into value and id, and entries of one value sort by id.
//
// Long strings: keys are bounded (store.MaxKeyLen, PostgreSQL's index limit), values are not.
// An entry key holds a string of more than MaxInline bytes as its key form: the first
// MaxInline bytes, then the truncation mark 0x00 0x02 where a whole string ends with 0x00 0x01
// (keyForm); the entry's value holds the full encoding. Key order stays value order between
// different key forms (a prefix sorts before its extensions, and the mark after the end of a
// whole string of those same bytes); only the long strings that share their first MaxInline
// bytes share a key form, and Scan orders that run by their full values before handing them
// on, so a scan sees full values in exact order whatever their length. A compound index puts a
// second encoded value first (Sub): <prefix><lead value><value><record id>, so that the entries
// of one lead value are an ordinary index of the other value.
package fields

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// Type tags: the first byte of every encoded value. Values of different types never compare
// equal, and null sorts before everything.
const (
	TagNull   byte = 0x01
	TagBool   byte = 0x02
	TagNumber byte = 0x03
	TagString byte = 0x04
)

// ErrCorrupt reports bytes that are not an encoded value.
var ErrCorrupt = errors.New("fields: corrupt encoded value")

// Null is the encoding of a missing value (kept in sort indexes so scans cover every record).
func Null() []byte { return []byte{TagNull} }

// Bool encodes b; false sorts before true.
func Bool(b bool) []byte {
	if b {
		return []byte{TagBool, 1}
	}
	return []byte{TagBool, 0}
}

// Number encodes f so that byte order is numeric order (-0 and 0 encode alike).
func Number(f float64) []byte {
	if f == 0 {
		f = 0
	}
	u := math.Float64bits(f)
	if u&(1<<63) != 0 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	b := make([]byte, 9)
	b[0] = TagNumber
	binary.BigEndian.PutUint64(b[1:], u)
	return b
}

// String encodes s: 0x00 is escaped as 0x00 0xFF and the value ends with 0x00 0x01.
func String(s string) []byte {
	b := make([]byte, 0, len(s)+3)
	b = append(b, TagString)
	for i := 0; i < len(s); i++ {
		b = append(b, s[i])
		if s[i] == 0 {
			b = append(b, 0xFF)
		}
	}
	return append(b, 0, 1)
}

// MaxInline is the longest string, in bytes, that an index key holds whole (see the package
// doc): its key form is at most 2*MaxInline+3 bytes (every 0x00 escaped).
const MaxInline = 512

// KeyForm returns the form enc takes in an entry key: enc itself, or for a string of more than
// MaxInline bytes its first MaxInline bytes followed by the truncation mark. A key form sorts
// after every value less than the strings it stands for and before each of them.
func KeyForm(enc []byte) []byte { return keyForm(enc) }

func keyForm(enc []byte) []byte {
	if len(enc) <= MaxInline+3 || enc[0] != TagString {
		return enc // holds at most MaxInline bytes of string
	}
	for i, n := 1, 0; i+1 < len(enc); n++ {
		if enc[i] == 0 && enc[i+1] == 1 {
			return enc // the string ended within MaxInline bytes
		}
		if n == MaxInline {
			return append(enc[:i:i], 0, 2)
		}
		if enc[i] == 0 {
			i += 2 // an escaped 0x00
		} else {
			i++
		}
	}
	return enc
}

// Truncated reports whether an encoded value (from a key) is a long string's key form.
func Truncated(enc []byte) bool { return truncated(enc) }

func truncated(enc []byte) bool {
	n := len(enc)
	return n >= 3 && enc[0] == TagString && enc[n-2] == 0 && enc[n-1] == 2
}

// Len returns the length of the encoded value at the start of b (a long string's key form
// included: it ends at its truncation mark).
func Len(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, ErrCorrupt
	}
	switch b[0] {
	case TagNull:
		return 1, nil
	case TagBool:
		if len(b) < 2 {
			return 0, ErrCorrupt
		}
		return 2, nil
	case TagNumber:
		if len(b) < 9 {
			return 0, ErrCorrupt
		}
		return 9, nil
	case TagString:
		for i := 1; i+1 < len(b); i++ {
			if b[i] != 0 {
				continue
			}
			switch b[i+1] {
			case 1, 2: // the end, or the truncation mark of a key form
				return i + 2, nil
			case 0xFF:
				i++
			default:
				return 0, ErrCorrupt
			}
		}
	}
	return 0, ErrCorrupt
}

// Decode returns the Go value of one encoded value: nil, bool, float64 or string. A long
// string's key form is not a value (ErrCorrupt): Scan hands on full values.
func Decode(b []byte) (any, error) {
	n, err := Len(b)
	if err != nil || n != len(b) || truncated(b) {
		return nil, ErrCorrupt
	}
	switch b[0] {
	case TagNull:
		return nil, nil
	case TagBool:
		return b[1] == 1, nil
	case TagNumber:
		u := binary.BigEndian.Uint64(b[1:])
		if u&(1<<63) != 0 {
			u &^= 1 << 63
		} else {
			u = ^u
		}
		return math.Float64frombits(u), nil
	default:
		out := make([]byte, 0, n-3)
		for i := 1; i < n-2; i++ {
			out = append(out, b[i])
			if b[i] == 0 {
				i++
			}
		}
		return string(out), nil
	}
}

// Text renders an encoded value as the text used for groupBy keys: strings as themselves,
// numbers in their shortest form, booleans as true/false, null as "null".
func Text(b []byte) string {
	v, err := Decode(b)
	if err != nil {
		return ""
	}
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case string:
		return t
	}
	return ""
}
