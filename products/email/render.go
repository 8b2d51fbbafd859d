package email

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// placeholder matches {{name}} with optional spaces inside the braces.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

// MissingError lists the placeholders a render found no value for.
type MissingError struct{ Names []string }

// Error implements error.
func (e *MissingError) Error() string {
	return "email: no value for placeholder(s) " + strings.Join(e.Names, ", ")
}

// Vars are the variables of a send, each already in its string form.
type Vars map[string]string

// ParseVars checks that every value is a string, number or boolean and returns their string
// forms (numbers as written by the caller). The first bad name is returned with the error.
func ParseVars(in map[string]any) (Vars, string, error) {
	out := make(Vars, len(in))
	for k, v := range in {
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool:
			out[k] = strconv.FormatBool(x)
		case json.Number:
			out[k] = x.String()
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		default:
			return nil, k, fmt.Errorf("email: variable %q must be a string, number or boolean", k)
		}
	}
	return out, "", nil
}

// Render fills every {{placeholder}} of s from vars; escapeHTML escapes the values (HTML
// bodies). A placeholder without a value is never left as a hole: Render returns a
// *MissingError naming all of them.
func Render(s string, vars Vars, escapeHTML bool) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var missing []string
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		if escapeHTML {
			return html.EscapeString(v)
		}
		return v
	})
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", &MissingError{Names: dedupe(missing)}
	}
	return out, nil
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// tagPattern recognises markup: a body with at least one tag is HTML.
var tagPattern = regexp.MustCompile(`<(?:[a-zA-Z][a-zA-Z0-9]*)(?:\s[^<>]*)?/?>|</[a-zA-Z][a-zA-Z0-9]*\s*>`)

// LooksLikeHTML reports whether a template body is HTML rather than plain text.
func LooksLikeHTML(s string) bool { return tagPattern.MatchString(s) }

// HTMLToText derives the plain-text part from an HTML body: block elements and <br> become
// line breaks, links keep their target as "text (url)", script and style are dropped, entities
// are decoded and runs of blank space collapse.
func HTMLToText(s string) string {
	var b strings.Builder
	var href string
	linkStart := 0
	for i := 0; i < len(s); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			b.WriteString(html.UnescapeString(s[i : i+j]))
			i += j
			continue
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			b.WriteString(html.UnescapeString(s[i:]))
			break
		}
		tag := s[i+1 : i+end]
		i += end + 1
		name, closing := tagName(tag)
		switch name {
		case "script", "style", "head", "title":
			if !closing {
				if k := strings.Index(strings.ToLower(s[i:]), "</"+name); k >= 0 {
					i += k
				} else {
					i = len(s)
				}
			}
		case "br":
			b.WriteString("\n")
		case "p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "table", "ul", "ol", "blockquote", "section", "article", "header", "footer", "hr":
			b.WriteString("\n\n")
		case "li":
			if !closing {
				b.WriteString("\n- ")
			}
		case "td", "th":
			if closing {
				b.WriteString(" ")
			}
		case "a":
			if closing {
				text := strings.TrimSpace(b.String()[linkStart:])
				if href != "" && text != href && !strings.HasSuffix(href, ":"+text) {
					b.WriteString(" (" + href + ")")
				}
				href = ""
			} else {
				href = attr(tag, "href")
				linkStart = b.Len()
			}
		}
	}
	return tidy(b.String())
}

func tagName(tag string) (string, bool) {
	closing := strings.HasPrefix(tag, "/")
	tag = strings.TrimPrefix(tag, "/")
	end := strings.IndexAny(tag, " \t\r\n/")
	if end >= 0 {
		tag = tag[:end]
	}
	return strings.ToLower(tag), closing
}

var attrPattern = regexp.MustCompile(`(?i)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)

func attr(tag, _ string) string {
	m := attrPattern.FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	v := m[1] + m[2] + m[3]
	if strings.HasPrefix(strings.ToLower(v), "mailto:") || strings.HasPrefix(v, "#") {
		return ""
	}
	return html.UnescapeString(v)
}

// tidy collapses spaces within lines and keeps at most one blank line between paragraphs.
func tidy(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			if len(out) > 0 {
				blank = true
			}
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
