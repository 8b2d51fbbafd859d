package apikey

import (
	"errors"
	"strings"
	"testing"
)

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value string
		kind  Kind
		test  bool
		err   error
	}{
		{"pk_live_abcd", Publishable, false, nil},
		{"pk_test_ab_-9", Publishable, true, nil},
		{"sk_live_ABCD1234", Secret, false, nil},
		{"sk_live_abc", "", false, ErrMalformed},                         // too short after the prefix
		{"sk_test_abcd", "", false, ErrMalformed},                        // no such prefix
		{"pk_live_ab cd", "", false, ErrMalformed},                       // a space
		{"pk_live_abcé", "", false, ErrMalformed},                        // not ASCII
		{"pk_live_" + strings.Repeat("a", 249), "", false, ErrMalformed}, // 257 bytes
		{"", "", false, ErrMalformed},
	} {
		kind, test, err := KindOf(tc.value)
		if kind != tc.kind || test != tc.test || !errors.Is(err, tc.err) {
			t.Errorf("KindOf(%q) = %q, %v, %v; want %q, %v, %v", tc.value, kind, test, err, tc.kind, tc.test, tc.err)
		}
	}
}

// FuzzKindOf: a value KindOf accepts is at most 256 bytes of the key alphabet, with the prefix
// of the kind it reports.
func FuzzKindOf(f *testing.F) {
	for _, s := range []string{"pk_live_abcd", "pk_test_x-y_z", "sk_live_0000", "sk_live_", "pk_live_\x00abc", "xx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, value string) {
		kind, test, err := KindOf(value)
		if err != nil {
			return
		}
		want := map[Kind]string{Publishable: PrefixLive, Secret: PrefixSecret}[kind]
		if test {
			want = PrefixTest
		}
		if want == "" || !strings.HasPrefix(value, want) || len(value) > 256 || len(value) < len(want)+4 {
			t.Fatalf("KindOf(%q) = %q, %v: not a key of that kind", value, kind, test)
		}
		if strings.Trim(value[len(want):], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Fatalf("KindOf(%q) accepted a character outside the key alphabet", value)
		}
		if Hash(value) == Hash(value+"x") || len(Hash(value)) != 64 {
			t.Fatalf("Hash(%q) is not a hex SHA-256", value)
		}
	})
}
