package blob

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLocalRoundTrip: a Put, synced or Remakeable, reads back whole and at an offset, and is
// gone after Delete.
func TestLocalRoundTrip(t *testing.T) {
	t.Parallel()
	for name, ctx := range map[string]context.Context{"synced": context.Background(), "remakeable": Remakeable(context.Background())} {
		t.Run(name, func(t *testing.T) {
			s, err := NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			n, err := s.Put(ctx, "acme/originals/ast_1/a.png", strings.NewReader("hello"), "image/png")
			if err != nil || n != 5 {
				t.Fatalf("Put = %d, %v", n, err)
			}
			o, err := s.Open(ctx, "acme/originals/ast_1/a.png")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.Seek(1, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(o)
			o.Close()
			if string(b) != "ello" || o.Size() != 5 {
				t.Errorf("read %q size %d", b, o.Size())
			}
			if err := s.Delete(ctx, "acme/originals/ast_1/a.png"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Open(ctx, "acme/originals/ast_1/a.png"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Open after Delete = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a/b.png", true},
		{"acme/originals/ast_1/photo.png", true},
		{"", false},
		{"/etc/passwd", false},
		{"../x", false},
		{"a/../../x", false},
		{"a//b", false},
		{"a\\b", false},
		{"a/./b", false},
	} {
		if got := CheckKey(tc.key) == nil; got != tc.ok {
			t.Errorf("CheckKey(%q) ok = %v, want %v", tc.key, got, tc.ok)
		}
	}
}
