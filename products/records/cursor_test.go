package records

import (
	"reflect"
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
}

// FuzzDecodeCursor feeds payloads that passed the signature check (a leaked key, a bug in a
// past version): decoding never panics.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(tuple{vals: [][]byte{fields.Number(1)}, id: "x"}), 1)
	f.Add([]byte{1, 2, 9, 3}, 2)
	f.Add([]byte{}, 0)
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
