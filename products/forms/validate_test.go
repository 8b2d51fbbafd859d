package forms

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

func f64(v float64) *float64 { return &v }

func testForm() *compiled {
	return compile("p", Form{Slug: "t", Published: true, Fields: []FormField{
		{Name: "email", Type: "email", Required: true},
		{Name: "msg", Type: "textarea", MaxLength: 5, MinLength: 2},
		{Name: "n", Type: "number", Min: f64(1), Max: f64(10)},
		{Name: "ok", Type: "checkbox"},
		{Name: "must", Type: "checkbox", Required: true},
		{Name: "sel", Type: "select", Options: []string{"a", "b"}},
		{Name: "multi", Type: "multiselect", Options: []string{"a", "b"}},
		{Name: "site", Type: "url"},
		{Name: "day", Type: "date"},
		{Name: "code", Type: "text", Pattern: "[A-Z]{3}"},
		{Name: "file", Type: "file", Accept: []string{"image/*", ".pdf"}, MaxSizeMB: 1},
	}}, nil)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	base := func() map[string]any { return map[string]any{"email": "a@example.com", "must": true} }
	tests := []struct {
		name     string
		set      map[string]any
		fromForm bool
		files    map[string][]FilePart
		field    string // "" means valid
	}{
		{"valid minimal", nil, false, nil, ""},
		{"valid full", map[string]any{"msg": "hey", "n": json.Number("3"), "ok": false, "sel": "a", "multi": []any{"a", "b"}, "site": "https://x.io/a", "day": "2026-11-22", "code": "ABC"}, false, nil, ""},
		{"form strings", map[string]any{"n": "4.5", "ok": "on", "must": "true", "multi": []string{"a"}}, true, nil, ""},
		{"missing required", map[string]any{"email": ""}, false, nil, "email"},
		{"null required", map[string]any{"email": nil}, false, nil, "email"},
		{"bad email", map[string]any{"email": "a@b"}, false, nil, "email"},
		{"display-name email", map[string]any{"email": "A <a@example.com>"}, false, nil, "email"},
		{"too long", map[string]any{"msg": "toolong"}, false, nil, "msg"},
		{"too short", map[string]any{"msg": "x"}, false, nil, "msg"},
		{"runes not bytes", map[string]any{"msg": "ééééé"}, false, nil, ""},
		{"number as string in JSON", map[string]any{"n": "3"}, false, nil, "n"},
		{"number below min", map[string]any{"n": json.Number("0")}, false, nil, "n"},
		{"number above max", map[string]any{"n": json.Number("11")}, false, nil, "n"},
		{"checkbox string in JSON", map[string]any{"ok": "on"}, false, nil, "ok"},
		{"required checkbox false", map[string]any{"must": false}, false, nil, "must"},
		{"select not an option", map[string]any{"sel": "c"}, false, nil, "sel"},
		{"multiselect not an option", map[string]any{"multi": []any{"a", "z"}}, false, nil, "multi"},
		{"empty list counts as missing", map[string]any{"must": true, "email": []any{}}, false, nil, "email"},
		{"multiselect not a list", map[string]any{"multi": "a"}, false, nil, "multi"},
		{"url scheme", map[string]any{"site": "javascript:alert(1)"}, false, nil, "site"},
		{"date", map[string]any{"day": "22/11/2026"}, false, nil, "day"},
		{"pattern anchored", map[string]any{"code": "xABCx"}, false, nil, "code"},
		{"object for text", map[string]any{"msg": map[string]any{"a": 1}}, false, nil, "msg"},
		{"unknown", map[string]any{"zzz": 1}, false, nil, "zzz"},
		{"file ok", nil, true, map[string][]FilePart{"file": {{Filename: "a.gif", ContentType: "image/gif", Size: 10, Head: []byte("GIF89a")}}}, ""},
		{"file by extension", nil, true, map[string][]FilePart{"file": {{Filename: "a.PDF", ContentType: "application/x-foo", Size: 10}}}, ""},
		{"file type", nil, true, map[string][]FilePart{"file": {{Filename: "a.txt", ContentType: "text/plain", Size: 10}}}, "file"},
		{"file size", nil, true, map[string][]FilePart{"file": {{Filename: "a.png", ContentType: "image/svg+xml", Size: 2 << 20}}}, "file"},
		{"two files on a single field", nil, true, map[string][]FilePart{"file": {{Filename: "a.svg", ContentType: "image/svg+xml"}, {Filename: "b.svg", ContentType: "image/svg+xml"}}}, "file"},
		{"file on a text field", nil, true, map[string][]FilePart{"msg": {{Filename: "a.svg", ContentType: "image/svg+xml"}}}, "msg"},
		{"unknown file field", nil, true, map[string][]FilePart{"other": {{Filename: "a.svg", ContentType: "image/svg+xml"}}}, "other"},
	}
	c := testForm()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := base()
			for k, x := range tc.set {
				v[k] = x
			}
			_, err := validate(c, v, tc.fromForm, tc.files)
			var he *apierr.Error
			switch {
			case tc.field == "" && err != nil:
				t.Errorf("validate(%v) = %v, want valid", v, err)
			case tc.field != "" && (!errors.As(err, &he) || len(he.Details) != 1 || he.Details[0].Field != tc.field):
				t.Errorf("validate(%v) = %v (%+v), want one problem on %s", v, err, he, tc.field)
			}
		})
	}
}

func TestTakeCaptcha(t *testing.T) {
	t.Parallel()
	v := map[string]any{"a": "1", "g-recaptcha-response": "", "cf-turnstile-response": "tok", "captcha-response": []string{"first"}}
	if got := takeCaptcha(v); got != "first" {
		t.Errorf("takeCaptcha = %q, want first (captcha-response wins)", got)
	}
	if len(v) != 1 {
		t.Errorf("takeCaptcha left %v, want only field a", v)
	}
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // JSON of the values, or the error code
	}{
		{`{"data":{"a":1},"captcha-response":"t"}`, `{"a":1,"captcha-response":"t"}`},
		{`{"a":1}`, `{"a":1}`},
		{`{"data":"text"}`, `{"data":"text"}`},
		{`{"data":{"a":1},"b":2}`, `{"b":2,"data":{"a":1}}`},
		{`{"data":{"captcha-response":"in"},"captcha-response":"out"}`, `{"captcha-response":"in"}`},
		{`{`, "INVALID_JSON"},
		{``, "INVALID_JSON"},
		{`{}x`, "INVALID_JSON"},
		{`"s"`, "VALIDATION_FAILED"},
		{`null`, "VALIDATION_FAILED"},
	}
	for _, tc := range tests {
		v, err := decodeJSON([]byte(tc.in))
		got := ""
		if err != nil {
			got = apierr.As(err).Code
		} else {
			b, _ := json.Marshal(v)
			got = string(b)
		}
		if got != tc.want {
			t.Errorf("decodeJSON(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestSafeName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"photo.png": "photo.png", "../../etc/passwd": "_._.__etc_passwd", "": "file", "a b.PNG": "a_b.PNG", "...": "_._", "é.jpg": "_.jpg"} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}
