package cursor

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

func testCursors(t testing.TB) *Cursors {
	c, err := NewCursors([]byte("0123456789abcdef-test-key"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := testCursors(t)
	for _, p := range [][]byte{{}, []byte("k"), []byte("records/demo/posts/\x00\xff")} {
		cur := c.Encode("scope", p)
		got, err := c.Decode("scope", cur)
		if err != nil || !bytes.Equal(got, p) {
			t.Errorf("Decode(Encode(%q)) = %q, %v", p, got, err)
		}
		if _, err := c.Decode("other-scope", cur); !errors.Is(err, apierr.ErrInvalidCursor) {
			t.Errorf("foreign scope accepted: %v", err)
		}
	}
	if _, err := NewCursors([]byte("short")); err == nil {
		t.Errorf("NewCursors accepted a short key")
	}
}

func FuzzCursorDecode(f *testing.F) {
	c := testCursors(f)
	f.Add(c.Encode("s", []byte("payload")))
	f.Add("")
	f.Add("AAAA")
	f.Add("!!not-base64")
	f.Add(c.Encode("s", nil))
	f.Fuzz(func(t *testing.T, cur string) {
		p, err := c.Decode("s", cur)
		if err != nil {
			if !errors.Is(err, apierr.ErrInvalidCursor) {
				t.Fatalf("Decode error %v is not apierr.ErrInvalidCursor", err)
			}
			return
		}
		// Anything accepted must be exactly what Encode gives for its payload.
		if c.Encode("s", p) != cur {
			t.Fatalf("accepted cursor %q is not canonical", cur)
		}
	})
}

// BenchmarkCursorRoundTrip measures signing and checking one cursor.
func BenchmarkCursorRoundTrip(b *testing.B) {
	c := testCursors(b)
	payload := []byte("records/demo/posts/views/00000042/post-17")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Decode("scope", c.Encode("scope", payload)); err != nil {
			b.Fatal(err)
		}
	}
}

// A cursor whose last base64 character differs only in bits the decoding drops is refused:
// each payload has exactly one valid cursor.
func TestCursorNonCanonicalRefused(t *testing.T) {
	t.Parallel()
	c := testCursors(t)
	cur := c.Encode("s", []byte("payload")) // 23 bytes: 2 unused bits in the last character
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, cur[len(cur)-1])
	twin := cur[:len(cur)-1] + string(alphabet[last^1])
	if _, err := c.Decode("s", twin); !errors.Is(err, apierr.ErrInvalidCursor) {
		t.Errorf("Decode(%q) (non-canonical twin of %q) = %v, want apierr.ErrInvalidCursor", twin, cur, err)
	}
}
