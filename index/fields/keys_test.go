package fields

import (
	"bytes"
	"strings"
	"testing"
)

// TestKeys: keys cut from shared blocks equal the ones built alone, never overlap (an append to
// one copies it), and a key longer than a block gets a block of its own.
func TestKeys(t *testing.T) {
	t.Parallel()
	long := String(strings.Repeat("x", 2*keysBlock))
	encs := [][]byte{String("a"), Number(3), Null(), long, String(strings.Repeat("y", MaxInline+10))}
	k := &Keys{}
	var got, want []KV
	for i := range 40 {
		prefix := []byte("p/" + strings.Repeat("f", i%7) + "/")
		got = k.Entries(got, k.Sub(prefix, Bool(i%2 == 0)), encs, "id")
		want = Entries(want, Sub(prefix, Bool(i%2 == 0)), encs, "id")
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].Key, want[i].Key) || !bytes.Equal(got[i].Val, want[i].Val) {
			t.Fatalf("entry %d = %q, %q; want %q, %q", i, got[i].Key, got[i].Val, want[i].Key, want[i].Val)
		}
		if cap(got[i].Key) != len(got[i].Key) {
			t.Fatalf("entry %d has %d spare bytes: an append would write into the next key", i, cap(got[i].Key)-len(got[i].Key))
		}
	}
	// Appending to every key leaves the others as they were.
	for i := range got {
		_ = append(got[i].Key, 0xff)
	}
	for i := range got {
		if !bytes.Equal(got[i].Key, want[i].Key) {
			t.Fatalf("entry %d changed by an append to another: %q", i, got[i].Key)
		}
	}
}
