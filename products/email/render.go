package email

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strconv"
	"strings"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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

// HTMLToText derives the plain-text part from an HTML body with the HTML5 tokenizer of
// golang.org/x/net/html (so comments, Outlook conditional comments, a ">" inside a quoted
// attribute and raw-text elements read as a browser reads them): block elements and <br>
// become line breaks, list items "- ", links keep their target as "text (url)", <pre> keeps
// its lines and spaces, script, style, head, title, template and noscript are dropped,
// entities are decoded and runs of blank space collapse.
func HTMLToText(s string) string {
	// Text is collected with the spaces and line breaks of <pre> protected, so that tidy,
	// which collapses blank space, leaves them.
	s = strings.NewReplacer(preSpace, " ", preBreak, " ").Replace(s)
	var b strings.Builder
	var href string
	linkStart, skip, pre := 0, 0, 0
	z := xhtml.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			break
		}
		tok := z.Token()
		switch tt {
		case xhtml.TextToken:
			switch {
			case skip > 0:
			case pre > 0:
				b.WriteString(strings.NewReplacer("\r\n", preBreak, "\n", preBreak, "\r", preBreak, " ", preSpace, "\t", preSpace).Replace(tok.Data))
			default:
				b.WriteString(tok.Data)
			}
			continue
		case xhtml.CommentToken, xhtml.DoctypeToken:
			continue
		}
		closing := tt == xhtml.EndTagToken
		switch tok.DataAtom {
		case atom.Script, atom.Style, atom.Head, atom.Title, atom.Template, atom.Noscript:
			if tt == xhtml.StartTagToken {
				skip++
			} else if closing && skip > 0 {
				skip--
			}
			continue
		}
		if skip > 0 {
			continue
		}
		switch tok.DataAtom {
		case atom.Br:
			b.WriteString("\n")
		case atom.Pre:
			b.WriteString("\n\n")
			if tt == xhtml.StartTagToken {
				pre++
			} else if closing && pre > 0 {
				pre--
			}
		case atom.P, atom.Div, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Tr, atom.Table,
			atom.Ul, atom.Ol, atom.Blockquote, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Hr:
			b.WriteString("\n\n")
		case atom.Li:
			if !closing {
				b.WriteString("\n- ")
			}
		case atom.Td, atom.Th:
			if closing {
				b.WriteString(" ")
			}
		case atom.A:
			if closing {
				text := strings.TrimSpace(b.String()[linkStart:])
				if href != "" && text != href && !strings.HasSuffix(href, ":"+text) {
					b.WriteString(" (" + href + ")")
				}
				href = ""
			} else if tt == xhtml.StartTagToken {
				href = linkTarget(tok)
				linkStart = b.Len()
			}
		}
	}
	return strings.NewReplacer(preSpace, " ", preBreak, "\n").Replace(tidy(b.String()))
}

// preSpace and preBreak stand for a space and a line break inside <pre> until tidy has run
// (private-use characters, removed from the input first).
const (
	preSpace = "\ue000"
	preBreak = "\ue001"
)

// linkTarget is the href of an <a> worth printing after its text (not mailto: or #fragment).
func linkTarget(tok xhtml.Token) string {
	for _, a := range tok.Attr {
		if a.Namespace == "" && a.Key == "href" {
			v := strings.TrimSpace(a.Val)
			if strings.HasPrefix(strings.ToLower(v), "mailto:") || strings.HasPrefix(v, "#") {
				return ""
			}
			return v
		}
	}
	return ""
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
