package files_test

import (
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/products/files"
)

func TestSafeFilename(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"photo.png":                        "photo.png",
		"My Photo (1).png":                 "My-Photo-1-.png",
		"../../etc/passwd":                 "passwd",
		`..\..\boot.ini`:                   "boot.ini",
		"..":                               "file",
		".htaccess":                        "htaccess",
		"":                                 "file",
		"a..b.png":                         "a.b.png",
		"café.jpg":                         "caf-.jpg",
		"%2e%2e%2fx.png":                   "2e-2e-2fx.png",
		strings.Repeat("a", 300) + ".webp": strings.Repeat("a", 95) + ".webp",
	} {
		got := files.SafeFilename(in)
		if got != want {
			t.Errorf("SafeFilename(%q) = %q, want %q", in, got, want)
		}
		if err := blob.CheckKey("acme/originals/ast_x/" + got); err != nil {
			t.Errorf("SafeFilename(%q) = %q is not a safe key part: %v", in, got, err)
		}
	}
}

func FuzzSafeFilename(f *testing.F) {
	for _, s := range []string{"a.png", "../x", "..", "a/b\\c", "\x00", "ééé"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := files.SafeFilename(in)
		if len(got) == 0 || len(got) > 100 || blob.CheckKey("o/originals/id/"+got) != nil || strings.HasPrefix(got, ".") {
			t.Fatalf("SafeFilename(%q) = %q", in, got)
		}
		for _, r := range got {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
				t.Fatalf("SafeFilename(%q) = %q has %q", in, got, r)
			}
		}
	})
}

func TestParseRange(t *testing.T) {
	t.Parallel()
	cases := []struct {
		h             string
		start, length int64
		status        int
	}{
		{"", 0, 100, 200},
		{"bytes=0-9", 0, 10, 206},
		{"bytes=90-", 90, 10, 206},
		{"bytes=90-1000", 90, 10, 206},
		{"bytes=-5", 95, 5, 206},
		{"bytes=-500", 0, 100, 206},
		{"bytes=100-", 0, 0, 416},
		{"bytes=-0", 0, 0, 416},
		{"bytes=5-2", 0, 100, 200},
		{"bytes=0-1,5-6", 0, 100, 200},
		{"items=0-1", 0, 100, 200},
		{"bytes=x-y", 0, 100, 200},
	}
	for _, tc := range cases {
		s, l, st := files.ParseRange(tc.h, 100)
		if s != tc.start || l != tc.length || st != tc.status {
			t.Errorf("ParseRange(%q, 100) = %d, %d, %d, want %d, %d, %d", tc.h, s, l, st, tc.start, tc.length, tc.status)
		}
	}
}

func TestSniffType(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		in   []byte
		want string
	}{
		"png":  {pngBytes(t, 1, 1), "image/png"},
		"jpeg": {jpegBytes(t, 1, 1), "image/jpeg"},
		"gif":  {gifBytes(t, 1, 1), "image/gif"},
		"webp": {webpBytes(1, 1), "image/webp"},
		"svg":  {[]byte("\xEF\xBB\xBF  <svg/>"), "image/svg+xml"},
		"text": {[]byte("hello"), ""},
		"riff": {[]byte("RIFF\x00\x00\x00\x00WAVE"), ""},
	} {
		if got := files.SniffType(tc.in); got != tc.want {
			t.Errorf("SniffType(%s) = %q, want %q", name, got, tc.want)
		}
	}
}
