package files

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// maxSVGDepth bounds element nesting in an SVG.
const maxSVGDepth = 256

// CheckSVG parses an SVG document with encoding/xml, streaming, and refuses (ErrUnsafeSVG) what
// could run script or reach out when the file is opened: script and foreignObject elements,
// on* event-handler attributes, javascript: (or vbscript:) URLs anywhere, references (href,
// xlink:href, style url(), @import) to anything but a fragment (#id) or an inline raster
// data: image, DOCTYPE declarations (entities) and processing instructions such as
// xml-stylesheet. It returns the width and height from the root's width/height attributes
// (px or unitless), else from its viewBox; 0 when neither gives a number. A document that is
// not well-formed XML with an <svg> root is ErrMismatch.
func CheckSVG(r io.Reader) (width, height int, err error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		if strings.EqualFold(label, "utf-8") || strings.EqualFold(label, "us-ascii") {
			return in, nil
		}
		return nil, errors.New("unsupported charset " + label)
	}
	depth, rootSeen, inStyle := 0, false, false
	for {
		tok, terr := d.Token()
		if terr == io.EOF {
			break
		}
		if terr != nil {
			return 0, 0, mismatch("the SVG is not well-formed XML: " + terr.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxSVGDepth {
				return 0, 0, unsafeSVG("elements nested too deeply")
			}
			name := strings.ToLower(t.Name.Local)
			if !rootSeen {
				if name != "svg" {
					return 0, 0, mismatch("the root element is <" + t.Name.Local + ">, not <svg>")
				}
				rootSeen = true
				width, height = svgSize(t.Attr)
			}
			switch name {
			case "script", "foreignobject", "iframe", "embed", "object", "handler", "listener":
				return 0, 0, unsafeSVG("<" + t.Name.Local + "> element")
			}
			inStyle = name == "style"
			for _, a := range t.Attr {
				if err := checkAttr(a); err != nil {
					return 0, 0, err
				}
			}
		case xml.EndElement:
			depth--
			inStyle = false
		case xml.CharData:
			if hasScriptURL(string(t)) && inStyle {
				return 0, 0, unsafeSVG("javascript: URL in a style sheet")
			}
			if inStyle {
				if err := checkCSS(string(t)); err != nil {
					return 0, 0, err
				}
			}
		case xml.ProcInst:
			if t.Target != "xml" {
				return 0, 0, unsafeSVG("processing instruction <?" + t.Target + "?>")
			}
		case xml.Directive:
			return 0, 0, unsafeSVG("DOCTYPE or other declaration")
		}
		if rootSeen && depth == 0 {
			// Only whitespace, comments and the end may follow the root.
			for {
				tok, terr := d.Token()
				if terr == io.EOF {
					return width, height, nil
				}
				if terr != nil {
					return 0, 0, mismatch("the SVG is not well-formed XML: " + terr.Error())
				}
				switch t := tok.(type) {
				case xml.Comment:
				case xml.CharData:
					if len(bytes.TrimSpace(t)) > 0 {
						return 0, 0, mismatch("content after the root element")
					}
				default:
					return 0, 0, mismatch("content after the root element")
				}
			}
		}
	}
	if !rootSeen {
		return 0, 0, mismatch("the file has no <svg> element")
	}
	return 0, 0, mismatch("the SVG ends before its root element closes")
}

// checkAttr refuses event handlers, script URLs and external references in one attribute.
func checkAttr(a xml.Attr) error {
	local := strings.ToLower(a.Name.Local)
	if strings.HasPrefix(local, "on") {
		return unsafeSVG("event handler attribute " + a.Name.Local)
	}
	if hasScriptURL(a.Value) {
		return unsafeSVG("javascript: URL in attribute " + a.Name.Local)
	}
	switch local {
	case "href", "src", "action", "formaction":
		if !localRef(a.Value) {
			return unsafeSVG("external reference in " + a.Name.Local)
		}
	case "style":
		return checkCSS(a.Value)
	}
	// Presentation attributes such as fill="url(...)" or filter="url(...)".
	if strings.Contains(strings.ToLower(a.Value), "url(") {
		return checkCSS(a.Value)
	}
	return nil
}

// checkCSS refuses @import and url() that point outside the document.
func checkCSS(css string) error {
	l := strings.ToLower(css)
	if strings.Contains(l, "@import") {
		return unsafeSVG("@import in a style")
	}
	if hasScriptURL(css) || strings.Contains(l, "expression(") {
		return unsafeSVG("script in a style")
	}
	for i := 0; ; {
		j := strings.Index(l[i:], "url(")
		if j < 0 {
			return nil
		}
		i += j + 4
		ref := strings.TrimLeft(l[i:], " \t\r\n\"'")
		if !localRef(ref) {
			return unsafeSVG("external url() in a style")
		}
	}
}

// localRef reports whether a reference stays inside the document: a fragment, or an inline
// raster image as a data: URL.
func localRef(v string) bool {
	v = strings.ToLower(strings.TrimSpace(stripControls(v)))
	if strings.HasPrefix(v, "#") {
		return true
	}
	for _, t := range []string{"png", "jpeg", "jpg", "gif", "webp"} {
		if strings.HasPrefix(v, "data:image/"+t+";") || strings.HasPrefix(v, "data:image/"+t+",") {
			return true
		}
	}
	return false
}

// hasScriptURL finds javascript:/vbscript: schemes even when split by whitespace or controls
// (browsers strip those from URLs).
func hasScriptURL(v string) bool {
	l := strings.ToLower(stripControls(v))
	return strings.Contains(l, "javascript:") || strings.Contains(l, "vbscript:")
}

func stripControls(v string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r == 0x7f {
			return -1
		}
		return r
	}, v)
}

// svgSize reads the root's width/height (unitless or px), falling back to the viewBox.
func svgSize(attrs []xml.Attr) (int, int) {
	var w, h, vb string
	for _, a := range attrs {
		switch strings.ToLower(a.Name.Local) {
		case "width":
			w = a.Value
		case "height":
			h = a.Value
		case "viewbox":
			vb = a.Value
		}
	}
	vw, vh := 0.0, 0.0
	if f := strings.FieldsFunc(vb, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }); len(f) == 4 {
		vw, _ = strconv.ParseFloat(f[2], 64)
		vh, _ = strconv.ParseFloat(f[3], 64)
	}
	pw, okw := svgLength(w)
	ph, okh := svgLength(h)
	switch {
	case !okw && !okh:
		pw, ph = vw, vh
	case !okw && vh > 0:
		pw = ph * vw / vh
	case !okh && vw > 0:
		ph = pw * vh / vw
	case !okw || !okh:
		pw, ph = 0, 0
	}
	return clampDim(pw), clampDim(ph)
}

func svgLength(s string) (float64, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "px")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func clampDim(f float64) int {
	if f <= 0 || math.IsNaN(f) {
		return 0
	}
	if f > 1e6 {
		return 1e6
	}
	return int(math.Round(f))
}
