package forms

import (
	"encoding/json"
	"net/http"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// MaxFileBytes is the largest file part a submission may carry (decisions.md section 5).
const MaxFileBytes = 5 << 20

// captchaNames are the keys a captcha token may arrive under: ours and the providers' own.
var captchaNames = []string{"captcha-response", "cf-turnstile-response", "h-captcha-response", "g-recaptcha-response"}

func isCaptchaName(k string) bool {
	for _, n := range captchaNames {
		if k == n {
			return true
		}
	}
	return false
}

// fieldRule is one form field with its pattern compiled.
type fieldRule struct {
	FormField
	re *regexp.Regexp
}

func compileFields(fs []FormField) (map[string]*fieldRule, []string) {
	m := make(map[string]*fieldRule, len(fs))
	order := make([]string, 0, len(fs))
	for _, f := range fs {
		r := &fieldRule{FormField: f}
		if f.Pattern != "" {
			// Anchored like the HTML pattern attribute; the tenants document checked it compiles.
			r.re, _ = regexp.Compile("^(?:" + f.Pattern + ")$")
		}
		m[f.Name] = r
		order = append(order, f.Name)
	}
	return m, order
}

// takeCaptcha removes every captcha key from values and returns the first non-empty token.
func takeCaptcha(values map[string]any) string {
	token := ""
	for _, n := range captchaNames {
		v, ok := values[n]
		if !ok {
			continue
		}
		delete(values, n)
		s := ""
		switch t := v.(type) {
		case string:
			s = t
		case []string:
			if len(t) > 0 {
				s = t[0]
			}
		}
		if token == "" && s != "" {
			token = s
		}
	}
	return token
}

// validate checks values and files against the form and returns the data to store, or a
// VALIDATION_FAILED error listing every problem in field order (unknown fields last).
func validate(c *compiled, values map[string]any, fromForm bool, files map[string][]FilePart) (map[string]any, error) {
	var problems []apierr.FieldProblem
	add := func(field, problem string) {
		problems = append(problems, apierr.FieldProblem{Field: field, Problem: problem})
	}
	data := make(map[string]any, len(values))
	for _, name := range c.order {
		f := c.fields[name]
		if f.Type == "file" {
			parts := files[name]
			if _, sent := values[name]; sent {
				if fromForm && isEmpty(values[name]) {
					// an empty <input type=file> posts an empty text part: treat as absent
				} else {
					add(name, "files must be sent as multipart/form-data parts")
					continue
				}
			}
			if len(parts) == 0 {
				if f.Required {
					add(name, "is required")
				}
				continue
			}
			if len(parts) > 1 && !f.Multiple {
				add(name, "takes one file")
				continue
			}
			for _, p := range parts {
				if pr := checkFile(f, p); pr != "" {
					add(name, pr)
					break
				}
			}
			continue
		}
		if _, isFile := files[name]; isFile {
			add(name, "is not a file field")
			continue
		}
		raw, sent := values[name]
		if !sent || raw == nil || isEmpty(raw) {
			if f.Required {
				add(name, "is required")
			}
			continue
		}
		v, pr := coerce(f, raw, fromForm)
		if pr != "" {
			add(name, pr)
			continue
		}
		if f.Type == "checkbox" && f.Required && v == false {
			add(name, "must be checked")
			continue
		}
		data[name] = v
	}
	var unknown []string
	for k := range values {
		if _, ok := c.fields[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	for k := range files {
		if _, ok := c.fields[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		add(k, "is not a field of this form")
	}
	if len(problems) > 0 {
		return nil, apierr.Validation(problems...)
	}
	return data, nil
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case string:
		return t == ""
	case []string:
		return len(t) == 0 || len(t) == 1 && t[0] == ""
	case []any:
		return len(t) == 0
	}
	return false
}

// checkFile checks one file part's size and type against the field.
func checkFile(f *fieldRule, p FilePart) string {
	limit := int64(MaxFileBytes)
	if f.MaxSizeMB > 0 && int64(f.MaxSizeMB*(1<<20)) < limit {
		limit = int64(f.MaxSizeMB * (1 << 20))
	}
	if p.Size > limit {
		return "file is larger than " + strconv.FormatInt(limit, 10) + " bytes"
	}
	if len(f.Accept) > 0 && !accepts(f.Accept, p.ContentType, p.Filename) {
		return "file type " + p.ContentType + " is not accepted (" + strings.Join(f.Accept, ", ") + ")"
	}
	if sniffable[p.ContentType] && len(p.Head) > 0 && http.DetectContentType(p.Head) != p.ContentType {
		return "file content is not " + p.ContentType
	}
	return ""
}

// sniffable are the types whose bytes http.DetectContentType recognises with certainty; a
// part declaring one of them must hold it.
var sniffable = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "application/pdf": true}

// accepts matches a content type against accept entries: exact types, "image/*" wildcards and
// ".ext" file name suffixes, as the HTML accept attribute does.
func accepts(accept []string, ctype, filename string) bool {
	ctype = strings.ToLower(ctype)
	for _, a := range accept {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == ctype:
			return true
		case strings.HasSuffix(a, "/*") && strings.HasPrefix(ctype, strings.TrimSuffix(a, "*")):
			return true
		case strings.HasPrefix(a, ".") && strings.HasSuffix(strings.ToLower(filename), a):
			return true
		}
	}
	return false
}

var dateLayout = "2006-01-02"

// coerce checks one present, non-empty value against its field and returns the value to store.
func coerce(f *fieldRule, raw any, fromForm bool) (any, string) {
	switch f.Type {
	case "number":
		var n float64
		var stored any
		switch t := raw.(type) {
		case json.Number:
			x, err := t.Float64()
			if err != nil {
				return nil, "must be a number"
			}
			n, stored = x, t
		case string:
			if !fromForm {
				return nil, "must be a number"
			}
			x, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
			if err != nil {
				return nil, "must be a number"
			}
			n, stored = x, json.Number(strconv.FormatFloat(x, 'f', -1, 64))
		default:
			return nil, "must be a number"
		}
		if f.Min != nil && n < *f.Min {
			return nil, "must be at least " + strconv.FormatFloat(*f.Min, 'f', -1, 64)
		}
		if f.Max != nil && n > *f.Max {
			return nil, "must be at most " + strconv.FormatFloat(*f.Max, 'f', -1, 64)
		}
		return stored, ""
	case "checkbox":
		switch t := raw.(type) {
		case bool:
			return t, ""
		case string:
			if fromForm {
				switch strings.ToLower(t) {
				case "on", "true", "1", "yes":
					return true, ""
				case "off", "false", "0", "no":
					return false, ""
				}
			}
		}
		return nil, "must be true or false"
	case "multiselect":
		var items []string
		switch t := raw.(type) {
		case []string:
			items = t
		case string:
			if !fromForm {
				return nil, "must be a list of options"
			}
			items = []string{t}
		case []any:
			for _, x := range t {
				s, ok := x.(string)
				if !ok {
					return nil, "must be a list of options"
				}
				items = append(items, s)
			}
		default:
			return nil, "must be a list of options"
		}
		for _, s := range items {
			if !contains(f.Options, s) {
				return nil, strconv.Quote(s) + " is not one of the options"
			}
		}
		if items == nil {
			items = []string{}
		}
		return items, ""
	}
	// Every other type is one string.
	var s string
	switch t := raw.(type) {
	case string:
		s = t
	case []string:
		if len(t) != 1 {
			return nil, "takes one value"
		}
		s = t[0]
	default:
		return nil, "must be a string"
	}
	n := utf8.RuneCountInString(s)
	if f.MaxLength > 0 && n > f.MaxLength {
		return nil, "is longer than " + strconv.Itoa(f.MaxLength) + " characters"
	}
	if f.MinLength > 0 && n < f.MinLength {
		return nil, "is shorter than " + strconv.Itoa(f.MinLength) + " characters"
	}
	if f.re != nil && !f.re.MatchString(s) {
		return nil, "does not match the pattern"
	}
	switch f.Type {
	case "email":
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
			return nil, "must be an email address"
		}
	case "url":
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, "must be an http or https URL"
		}
	case "date":
		if _, err := time.Parse(dateLayout, s); err != nil {
			return nil, "must be a date (YYYY-MM-DD)"
		}
	case "select", "radio":
		if !contains(f.Options, s) {
			return nil, "must be one of the options"
		}
	}
	return s, ""
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
