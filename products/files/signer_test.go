package files_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/files"
)

func TestSignerVerify(t *testing.T) {
	t.Parallel()
	s, err := files.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	g := files.Grant{AssetID: "ast_x", Size: 42, Type: "image/png", Expires: now.Add(900 * time.Second)}
	q := s.Query(g)
	other, _ := files.NewSigner([]byte("another key of thirty-two bytes!"))
	edit := func(k, v string) string {
		vals, _ := url.ParseQuery(q)
		vals.Set(k, v)
		return vals.Encode()
	}
	cases := []struct {
		name  string
		id, q string
		at    time.Time
		ok    bool
	}{
		{"valid", "ast_x", q, now, true},
		{"one second before expiry", "ast_x", q, now.Add(899 * time.Second), true},
		{"at expiry", "ast_x", q, now.Add(900 * time.Second), false},
		{"other asset", "ast_y", q, now, false},
		{"size changed", "ast_x", edit("size", "43"), now, false},
		{"size respelled", "ast_x", edit("size", "042"), now, false},
		{"type changed", "ast_x", edit("type", "image/gif"), now, false},
		{"expiry extended", "ast_x", edit("exp", "1900000000"), now, false},
		{"signature flipped", "ast_x", edit("sig", strings.Repeat("A", 43)), now, false},
		{"signature repeated", "ast_x", q + "&sig=x", now, false},
		{"empty", "ast_x", "", now, false},
		{"other key", "ast_x", other.Query(g), now, false},
	}
	for _, tc := range cases {
		got, err := s.Verify(tc.id, tc.q, tc.at)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Verify(%q, %q) error %v, want ok=%v", tc.name, tc.id, tc.q, err, tc.ok)
		}
		if tc.ok && (got.Size != 42 || got.Type != "image/png" || !got.Expires.Equal(g.Expires)) {
			t.Errorf("%s: Verify grant = %+v", tc.name, got)
		}
	}
}

// FuzzSignerVerify: no input panics, and nothing verifies except a query the signer made for
// that id (a forgery would need the HMAC key).
func FuzzSignerVerify(f *testing.F) {
	s, _ := files.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	now := time.Unix(1_800_000_000, 0)
	valid := s.Query(files.Grant{AssetID: "ast_x", Size: 42, Type: "image/png", Expires: now.Add(time.Minute)})
	f.Add("ast_x", valid)
	f.Add("ast_x", "size=42&type=image%2Fpng&exp=1800000060&sig=AAAA")
	f.Add("", "%zz")
	f.Add("ast_x", valid+"&size=1")
	f.Fuzz(func(t *testing.T, id, q string) {
		g, err := s.Verify(id, q, now)
		if err != nil {
			return
		}
		if want := s.Query(files.Grant{AssetID: id, Size: g.Size, Type: g.Type, Expires: g.Expires}); !sameQuery(want, q) {
			t.Fatalf("Verify(%q, %q) accepted a query the signer did not make (%q)", id, q, want)
		}
	})
}

func sameQuery(a, b string) bool {
	va, err1 := url.ParseQuery(a)
	vb, err2 := url.ParseQuery(b)
	if err1 != nil || err2 != nil || len(va) > len(vb) {
		return false
	}
	for k, v := range va {
		if len(vb[k]) != 1 || vb[k][0] != v[0] {
			return false
		}
	}
	return true
}
