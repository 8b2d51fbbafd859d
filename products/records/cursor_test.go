package records

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	in := tuple{vals: [][]byte{fields.Number(3), fields.String("a:b"), fields.Null()}, id: "post-1"}
	got, err := decodeCursor(encodeCursor(in), 3)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Errorf("decodeCursor(encodeCursor(%v)) = %v, %v", in, got, err)
	}
	if _, err := decodeCursor(encodeCursor(in), 2); err == nil {
		t.Errorf("decodeCursor with another sort length succeeded")
	}
	// A long string is carried as a reference (its key form and a digest), whatever its length.
	long := fields.String(strings.Repeat("x", 100_000))
	b := encodeCursor(tuple{vals: [][]byte{long}, id: "post-1"})
	got, err = decodeCursor(b, 1)
	if err != nil || len(b) > 600 {
		t.Fatalf("decodeCursor of a %d-byte cursor with a long value = %v", len(b), err)
	}
	if form, _, ok := cursorRef(got.vals[0]); !ok || !fields.Truncated(form) {
		t.Errorf("a long value's cursor form %x is not a reference", got.vals[0][:8])
	}
}

// FuzzDecodeCursor feeds payloads that passed the signature check (a leaked key, a bug in a
// past version): decoding never panics.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(tuple{vals: [][]byte{fields.Number(1)}, id: "x"}), 1)
	f.Add([]byte{1, 2, 9, 3}, 2)
	f.Add([]byte{}, 0)
	f.Add(encodeCursor(tuple{vals: [][]byte{fields.String(strings.Repeat("y", 600))}, id: "x"}), 1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 8 {
			return
		}
		tp, err := decodeCursor(b, n)
		if err == nil && (len(tp.vals) != n || tp.id == "") {
			t.Fatalf("decodeCursor(%x, %d) = %v", b, n, tp)
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	s := compileSchema("p", testCollection())
	f.Add(encodeRecord(buildRecord(s, "a", true, map[string]any{"title": "x", "n": 1.0}, now0, now0)))
	f.Add([]byte{1, 1, 200})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = decodeRecord("id", b)
	})
}
