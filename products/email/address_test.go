package email

import (
	"net/mail"
	"strings"
	"testing"
)

func TestEncodeAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		in     Address
		header string // the header value written, when accepted
		part   string // the refused part, when refused
	}{
		{"bare", Address{Email: "ada@example.com"}, "<ada@example.com>", ""},
		{"ascii name", Address{Email: "ada@example.com", Name: "Ada Lovelace"}, `"Ada Lovelace" <ada@example.com>`, ""},
		{"quotes and backslash in the name", Address{Email: "ada@example.com", Name: `Ada "The Countess" \ L`}, `"Ada \"The Countess\" \\ L" <ada@example.com>`, ""},
		{"brackets and comma in the name", Address{Email: "ada@example.com", Name: "Lovelace, Ada <admin>"}, `"Lovelace, Ada <admin>" <ada@example.com>`, ""},
		{"non-ascii name", Address{Email: "jose@example.com", Name: "José Ñúñez"}, "=?utf-8?q?Jos=C3=A9_=C3=91=C3=BA=C3=B1ez?= <jose@example.com>", ""},
		{"emoji name", Address{Email: "a@example.com", Name: "Zoë 🚀"}, "=?utf-8?q?Zo=C3=AB_=F0=9F=9A=80?= <a@example.com>", ""},
		{"plus and dots", Address{Email: "first.last+tag@mail.example.co.uk"}, "<first.last+tag@mail.example.co.uk>", ""},
		{"idn domain goes out as a-labels", Address{Email: "info@bücher.example"}, "<info@xn--bcher-kva.example>", ""},
		{"name of 256 bytes", Address{Email: "a@example.com", Name: strings.Repeat("é", 128)}, "", ""},

		{"empty", Address{}, "", "email"},
		{"CRLF in the email", Address{Email: "a@example.com\r\nBcc: x@evil.test"}, "", "email"},
		{"NUL in the email", Address{Email: "a\x00b@example.com"}, "", "email"},
		{"invalid utf-8 in the email", Address{Email: "a@exa\xffmple.com"}, "", "email"},
		{"non-ascii local part", Address{Email: "josé@example.com"}, "", "email"},
		{"local part over 64", Address{Email: strings.Repeat("a", 65) + "@example.com"}, "", "email"},
		{"address over 254", Address{Email: "a@" + strings.Repeat(strings.Repeat("b", 60)+".", 5) + "com"}, "", "email"},
		{"label over 63", Address{Email: "a@" + strings.Repeat("b", 64) + ".com"}, "", "email"},
		{"empty label", Address{Email: "a@example..com"}, "", "email"},
		{"address literal", Address{Email: "a@[127.0.0.1]"}, "", "email"},
		{"name and brackets in the email", Address{Email: "Ada <ada@example.com>"}, "", "email"},
		{"two addresses", Address{Email: "a@example.com, b@example.com"}, "", "email"},
		{"quoted local part", Address{Email: `"a b"@example.com`}, "", "email"},
		{"CRLF in the name", Address{Email: "a@example.com", Name: "Ada\r\nBcc: x@evil.test"}, "", "name"},
		{"LF in the name", Address{Email: "a@example.com", Name: "Ada\nL"}, "", "name"},
		{"NUL in the name", Address{Email: "a@example.com", Name: "Ada\x00"}, "", "name"},
		{"escape in the name", Address{Email: "a@example.com", Name: "Ada\x1b[31m"}, "", "name"},
		{"line separator in the name", Address{Email: "a@example.com", Name: "Ada\u2028L"}, "", "name"},
		{"invalid utf-8 in the name", Address{Email: "a@example.com", Name: "Ada \xc3\x28"}, "", "name"},
		{"name over 256 bytes", Address{Email: "a@example.com", Name: strings.Repeat("x", 257)}, "", "name"},
	}
	for _, tc := range tests {
		got, p := encodeAddress(tc.in)
		switch {
		case tc.part != "":
			if p == nil || p.Part != tc.part {
				t.Errorf("encodeAddress(%q) = %v, %v; want refused on %s", tc.in, got, p, tc.part)
			}
		case p != nil:
			t.Errorf("encodeAddress(%q) refused: %v", tc.in, p)
		default:
			h := got.String()
			if tc.header != "" && h != tc.header {
				t.Errorf("encodeAddress(%q) writes %q, want %q", tc.in, h, tc.header)
			}
			back, err := mail.ParseAddress(h)
			if err != nil || back.Name != tc.in.Name {
				t.Errorf("header %q reads back as %v, %v; want the name %q", h, back, err, tc.in.Name)
			}
		}
	}
}

func FuzzEncodeAddress(f *testing.F) {
	for _, s := range []string{"ada@example.com", "josé@example.com", "a@bücher.example", "a@[1.2.3.4]", "\"a\"@b.c"} {
		f.Add(s, "Ada \"Q\" Lovelace")
	}
	f.Fuzz(func(t *testing.T, email, name string) {
		got, p := encodeAddress(Address{Email: email, Name: name})
		if p != nil {
			return
		}
		// What is accepted goes into a header that reads back as the same name, on one line.
		h := got.String()
		back, err := mail.ParseAddress(h)
		if err != nil || back.Name != name || back.Address != got.Address || strings.ContainsAny(h, "\r\n\x00") {
			t.Fatalf("accepted %q %q but the header %q reads back as %v, %v", email, name, h, back, err)
		}
	})
}
