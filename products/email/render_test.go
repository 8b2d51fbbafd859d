package email

import (
	"errors"
	"html"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	t.Parallel()
	vars := Vars{"name": "Ada & <Co>", "n": "3", "x.y": "dotted"}
	cases := []struct {
		name, in string
		esc      bool
		want     string
		missing  []string
	}{
		{"plain", "Hello {{name}}", false, "Hello Ada & <Co>", nil},
		{"escaped", "<p>{{name}}</p>", true, "<p>Ada &amp; &lt;Co&gt;</p>", nil},
		{"spaces", "{{ n }} and {{n}}", false, "3 and 3", nil},
		{"dotted", "{{x.y}}", false, "dotted", nil},
		{"no placeholders", "nothing {here}", false, "nothing {here}", nil},
		{"not a placeholder", "{{ two words }}", false, "{{ two words }}", nil},
		{"missing", "{{a}} {{name}} {{b}} {{a}}", false, "", []string{"a", "b"}},
		{"value with braces not re-rendered", "{{v}}", false, "{{name}}", nil},
	}
	vars["v"] = "{{name}}"
	for _, tc := range cases {
		got, err := Render(tc.in, vars, tc.esc)
		var me *MissingError
		switch {
		case tc.missing != nil:
			if !errors.As(err, &me) || strings.Join(me.Names, ",") != strings.Join(tc.missing, ",") {
				t.Errorf("%s: Render(%q) error = %v, want missing %v", tc.name, tc.in, err, tc.missing)
			}
		case err != nil || got != tc.want:
			t.Errorf("%s: Render(%q) = %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		}
	}
}

func TestParseVars(t *testing.T) {
	t.Parallel()
	if _, bad, err := ParseVars(map[string]any{"ok": "s", "obj": map[string]any{}}); err == nil || bad != "obj" {
		t.Errorf("ParseVars(object) = %q, %v; want an error naming obj", bad, err)
	}
	if _, bad, err := ParseVars(map[string]any{"arr": []any{1}}); err == nil || bad != "arr" {
		t.Errorf("ParseVars(array) = %q, %v", bad, err)
	}
	v, _, err := ParseVars(map[string]any{"f": 1.5, "i": float64(10), "b": false})
	if err != nil || v["f"] != "1.5" || v["i"] != "10" || v["b"] != "false" {
		t.Errorf("ParseVars(numbers) = %v, %v", v, err)
	}
}

func TestHTMLToText(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"<p>Hi <b>there</b></p><p>Second</p>", "Hi there\n\nSecond"},
		// What the hand-written converter got wrong, read as a browser reads it.
		{"before<!-- a <p>comment</p> with > inside -->after", "beforeafter"},
		{"<p>a</p><!--[if mso]><table><tr><td>Outlook only</td></tr></table><![endif]--><p>b</p>", "a\n\nb"},
		{"<!--[if !mso]><!--><p>not Outlook</p><!--<![endif]-->", "not Outlook"},
		{`<a href="https://x.test/?q=a>b" title='1 > 0'>link</a> after`, "link (https://x.test/?q=a>b) after"},
		{`<img alt="a > b" src="x.png">text`, "text"},
		{"<pre>  indented\n    code  here\n\n\nend</pre><p>after   spaces</p>", "  indented\n    code  here\n\n\nend\n\nafter spaces"},
		{"<script>if (a < b) { document.write('<p>no</p>') }</script>kept", "kept"},
		{"<style>p > a { color: red }</style><title>T</title>body", "body"},
		{"<head><meta charset=utf-8><title>T</title></head><body><p>Hello</p></body>", "Hello"},
		{"<P>upper<BR>case</P>", "upper\ncase"},
		{"<![CDATA[x]]>y", "y"},
		{"<!DOCTYPE html><p>doc</p>", "doc"},
		{"&nbsp;&copy; 2026 &#x41;&#66; &bogus;", "© 2026 AB &bogus;"},
		{"a\ue000b", "a b"},
		{"a<br>b<br/>c", "a\nb\nc"},
		{`<a href="https://x.test/?a=1&amp;b=2">link</a>`, "link (https://x.test/?a=1&b=2)"},
		{"<style>p{color:red}</style><script>alert(1)</script>text", "text"},
		{"<ul><li>one</li><li>two</li></ul>", "- one\n- two"},
		{"Tom &amp; Jerry &lt;3", "Tom & Jerry <3"},
		{"unclosed <b", "unclosed"}, // a tag cut by the end of input is dropped, as browsers do
		{`<a href="https://x.test">https://x.test</a>`, "https://x.test"},
		{`<a href="mailto:a@b.test">a@b.test</a>`, "a@b.test"},
	}
	for _, tc := range cases {
		if got := HTMLToText(tc.in); got != tc.want {
			t.Errorf("HTMLToText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestLooksLikeHTML(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{"<p>x</p>": true, "a <br/> b": true, "Hello {{name}}": false, "1 < 2 > 0": false} {
		if got := LooksLikeHTML(in); got != want {
			t.Errorf("LooksLikeHTML(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCanMove(t *testing.T) {
	t.Parallel()
	all := []Status{StatusQueued, StatusSent, StatusDelivered, StatusBounced, StatusSpam, StatusSuppressed, StatusFailed}
	want := map[[2]Status]bool{
		{StatusQueued, StatusSent}: true, {StatusQueued, StatusDelivered}: true, {StatusSent, StatusDelivered}: true,
		{StatusQueued, StatusBounced}: true, {StatusSent, StatusBounced}: true, {StatusDelivered, StatusBounced}: true,
		{StatusQueued, StatusSpam}: true, {StatusSent, StatusSpam}: true, {StatusDelivered, StatusSpam}: true,
		{StatusQueued, StatusSuppressed}: true, {StatusSent, StatusSuppressed}: true,
		{StatusQueued, StatusFailed}: true, {StatusSent, StatusFailed}: true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := CanMove(from, to); got != want[[2]Status{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v, want %v", from, to, got, !got)
			}
			if from.Terminal() && CanMove(from, to) {
				t.Errorf("terminal %s moves to %s", from, to)
			}
		}
	}
	m := &Message{Status: StatusBounced}
	if err := advance(m, StatusDelivered, LogEntry{}, "t"); !errors.Is(err, ErrInvalidTransition) || len(m.Log) != 0 {
		t.Errorf("advance(bounced → delivered) = %v, log %v; want ErrInvalidTransition and no entry", err, m.Log)
	}
}

func FuzzRender(f *testing.F) {
	for _, s := range []string{"Hello {{name}}", "{{ a }}{{b}}", "{{", "}}{{x}}{{", "<p>{{name}}</p>&amp;", "{{ na me }}", "{{\u00e9}}", strings.Repeat("{{a}}", 50)} {
		f.Add(s, "v<&>\"'", true)
	}
	f.Fuzz(func(t *testing.T, tmpl, value string, esc bool) {
		vars := Vars{"name": value, "a": value, "b": value, "x": value}
		out, err := Render(tmpl, vars, esc)
		var me *MissingError
		if err != nil {
			if !errors.As(err, &me) || len(me.Names) == 0 {
				t.Fatalf("Render(%q) error %v is not a MissingError with names", tmpl, err)
			}
			for _, n := range me.Names {
				if _, ok := vars[n]; ok {
					t.Fatalf("Render(%q) reports %q missing, but it has a value", tmpl, n)
				}
			}
			return
		}
		if esc && strings.Contains(tmpl, "{{name}}") {
			// Each placeholder becomes the escaped value, never the raw one.
			alone, err := Render("{{name}}", vars, true)
			if err != nil || alone != html.EscapeString(value) {
				t.Fatalf("Render(%q, escaped) = %q, %v; want %q", "{{name}}", alone, err, html.EscapeString(value))
			}
		}
		if !placeholder.MatchString(tmpl) && out != tmpl {
			t.Fatalf("Render(%q) changed a template without placeholders: %q", tmpl, out)
		}
		_ = HTMLToText(out)
	})
}

func FuzzHTMLToText(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<a href='x'>y</a>", "<script>x", "<", "</a>", "<a href=\"https://x\">https://x</a><br/>&amp;", "<li><li></ul>",
		"<pre> a\n b</pre>", "<!--[if mso]>x<![endif]-->", "<a title='>'>t</a>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := HTMLToText(in)
		if strings.Contains(out, "\n\n\n") {
			t.Fatalf("HTMLToText(%q) = %q keeps more than one blank line", in, out)
		}
		// (U+E000 and U+E001 stand for <pre> blank space inside HTMLToText: read as spaces.)
		if !strings.ContainsAny(in, "<&\ue000\ue001") && strings.Join(strings.Fields(in), "") != strings.Join(strings.Fields(out), "") {
			t.Fatalf("HTMLToText(%q) = %q changed text without markup", in, out)
		}
	})
}
