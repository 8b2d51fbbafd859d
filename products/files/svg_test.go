package files_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/products/files"
)

func TestCheckSVG(t *testing.T) {
	t.Parallel()
	const ns = `xmlns="http://www.w3.org/2000/svg"`
	cases := []struct {
		name string
		in   string
		w, h int
		code string
	}{
		{"width and height", `<svg ` + ns + ` width="100" height="50px"/>`, 100, 50, ""},
		{"viewBox only", `<svg ` + ns + ` viewBox="0 0 24 12"><path d="M0 0"/></svg>`, 24, 12, ""},
		{"viewBox with commas", `<svg ` + ns + ` viewBox="0,0,30.4,10"></svg>`, 30, 10, ""},
		{"width with viewBox ratio", `<svg ` + ns + ` width="48" viewBox="0 0 24 12"></svg>`, 48, 24, ""},
		{"percent falls back to viewBox", `<svg ` + ns + ` width="100%" height="100%" viewBox="0 0 8 4"></svg>`, 8, 4, ""},
		{"no size", `<svg ` + ns + `></svg>`, 0, 0, ""},
		{"fragment href", `<svg ` + ns + ` xmlns:xlink="http://www.w3.org/1999/xlink" width="1" height="1"><use xlink:href="#a"/></svg>`, 1, 1, ""},
		{"inline png", `<svg ` + ns + ` width="1" height="1"><image href="data:image/png;base64,AAAA"/></svg>`, 1, 1, ""},
		{"style with local url", `<svg ` + ns + ` width="1" height="1"><style>.a{fill:url(#g)}</style></svg>`, 1, 1, ""},
		{"comment and xml decl", `<?xml version="1.0" encoding="UTF-8"?><!-- hi --><svg ` + ns + ` width="2" height="2"/>` + "\n", 2, 2, ""},
		{"script", `<svg ` + ns + `><script>alert(1)</script></svg>`, 0, 0, "UNSAFE_SVG"},
		{"script other case", `<svg ` + ns + `><SCRIPT>alert(1)</SCRIPT></svg>`, 0, 0, "UNSAFE_SVG"},
		{"namespaced script", `<svg ` + ns + ` xmlns:x="http://www.w3.org/2000/svg"><x:script>1</x:script></svg>`, 0, 0, "UNSAFE_SVG"},
		{"onload", `<svg ` + ns + ` onload="alert(1)"/>`, 0, 0, "UNSAFE_SVG"},
		{"onclick upper", `<svg ` + ns + `><rect ONCLICK="x()"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"javascript href", `<svg ` + ns + `><a href="javascript:alert(1)"><text>x</text></a></svg>`, 0, 0, "UNSAFE_SVG"},
		{"javascript split", `<svg ` + ns + `><a href="java&#x09;script:alert(1)">x</a></svg>`, 0, 0, "UNSAFE_SVG"},
		{"javascript in animate", `<svg ` + ns + `><a><set attributeName="href" to="javascript:alert(1)"/></a></svg>`, 0, 0, "UNSAFE_SVG"},
		{"external image", `<svg ` + ns + `><image href="https://evil.test/x.png"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"external use", `<svg ` + ns + ` xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="other.svg#a"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"svg data url", `<svg ` + ns + `><image href="data:image/svg+xml;base64,AAAA"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"foreignObject", `<svg ` + ns + `><foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject></svg>`, 0, 0, "UNSAFE_SVG"},
		{"style import", `<svg ` + ns + `><style>@import url(https://evil.test/a.css);</style></svg>`, 0, 0, "UNSAFE_SVG"},
		{"style external url", `<svg ` + ns + `><style>.a{background:url('https://evil.test/t')}</style></svg>`, 0, 0, "UNSAFE_SVG"},
		{"style attribute url", `<svg ` + ns + `><rect style="fill:url(http://evil.test/#a)"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"fill external", `<svg ` + ns + `><rect fill="url(http://evil.test/p.svg#g)"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"doctype entity", `<!DOCTYPE svg [<!ENTITY a "b">]><svg ` + ns + `/>`, 0, 0, "UNSAFE_SVG"},
		{"stylesheet pi", `<?xml-stylesheet href="https://evil.test/a.css"?><svg ` + ns + `/>`, 0, 0, "UNSAFE_SVG"},
		{"iframe", `<svg ` + ns + `><iframe src="x"/></svg>`, 0, 0, "UNSAFE_SVG"},
		{"deep nesting", `<svg ` + ns + `>` + strings.Repeat("<g>", 300) + strings.Repeat("</g>", 300) + `</svg>`, 0, 0, "UNSAFE_SVG"},
		{"html root", `<html><body/></html>`, 0, 0, "UPLOAD_MISMATCH"},
		{"not xml", `<svg ` + ns + `><rect></svg>`, 0, 0, "UPLOAD_MISMATCH"},
		{"unclosed", `<svg ` + ns + `>`, 0, 0, "UPLOAD_MISMATCH"},
		{"trailing element", `<svg ` + ns + `/><script>1</script>`, 0, 0, "UPLOAD_MISMATCH"},
		{"empty", ``, 0, 0, "UPLOAD_MISMATCH"},
		{"latin1 charset", `<?xml version="1.0" encoding="ISO-8859-1"?><svg ` + ns + `/>`, 0, 0, "UPLOAD_MISMATCH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, h, err := files.CheckSVG(strings.NewReader(tc.in))
			if code := codeOf(err); code != tc.code {
				t.Fatalf("CheckSVG(%q) error %v, want code %q", tc.in, err, tc.code)
			}
			if err == nil && (w != tc.w || h != tc.h) {
				t.Errorf("CheckSVG(%q) = %d x %d, want %d x %d", tc.in, w, h, tc.w, tc.h)
			}
		})
	}
}

func codeOf(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err != nil {
		return "?" + err.Error()
	}
	return ""
}

// FuzzCheckSVG: never panics, errors are always UNSAFE_SVG or UPLOAD_MISMATCH, and an accepted
// document never holds a script element, handler or javascript: URL (a cheap textual check).
func FuzzCheckSVG(f *testing.F) {
	for _, s := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`,
		`<svg><script>1</script></svg>`,
		`<svg onload="x"/>`,
		`<svg><a href="javascript:1">x</a></svg>`,
		`<svg viewBox="0 0 1e308 -1"><style>.a{fill:url(#x)}</style></svg>`,
		`<!DOCTYPE svg><svg/>`,
		okSVG, evilSVG,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		w, h, err := files.CheckSVG(strings.NewReader(in))
		if err != nil {
			if c := codeOf(err); c != "UNSAFE_SVG" && c != "UPLOAD_MISMATCH" {
				t.Fatalf("CheckSVG(%q) error code %q", in, c)
			}
			return
		}
		if w < 0 || h < 0 {
			t.Fatalf("CheckSVG(%q) = %d x %d", in, w, h)
		}
		l := strings.ToLower(in)
		if strings.Contains(l, "<script") || strings.Contains(l, "javascript:") {
			t.Fatalf("CheckSVG accepted %q", in)
		}
	})
}
