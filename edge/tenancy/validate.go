package tenancy

import (
	"encoding/base64"
	"fmt"
	"net/mail"
	"regexp"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/auth"
)

var (
	slugRe      = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	nameRe      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)
	fieldNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)
	recordIDRe  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)
	// domainRe is a host name of at least two labels.
	domainRe = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
)

// Products are the product scopes a key may carry.
var Products = []string{"email", "files", "forms", "membership", "records"}

var (
	formFieldTypes = set("text", "email", "textarea", "number", "checkbox", "select", "multiselect",
		"radio", "file", "url", "tel", "date", "hidden")
	collectionFieldTypes = set("text", "number", "boolean", "date", "select", "multiselect",
		"relation", "relations", "json", "email", "url")
	hooks            = set("forms.submit", "records.read", "email.send", "captcha.verify")
	captchaProviders = set("turnstile", "hcaptcha", "recaptcha")
)

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

type checker struct{ problems []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// unique reports a repeated name within one scope.
func (c *checker) unique(seen map[string]string, name, path, what string) {
	if prev, ok := seen[name]; ok {
		c.add(path, "%s %q repeats %s", what, name, prev)
		return
	}
	seen[name] = path
}

// Validate checks the whole document and returns an *InvalidError listing every problem.
func (d *Document) Validate() error {
	c := &checker{}
	orgs, projects, keyValues := map[string]string{}, map[string]string{}, map[string]string{}
	for oi, o := range d.Orgs {
		op := fmt.Sprintf("orgs[%d]", oi)
		if !slugRe.MatchString(o.Slug) {
			c.add(op+".slug", "must be 1-63 lower-case letters, digits, - or _, starting with a letter or digit")
		} else {
			c.unique(orgs, o.Slug, op, "org")
		}
		keyNames := map[string]string{}
		for ki, k := range o.Keys {
			c.key(fmt.Sprintf("%s.keys[%d]", op, ki), k, keyNames, keyValues)
		}
		for si, s := range o.Suppressions {
			if _, err := mail.ParseAddress(s); err != nil || strings.ContainsAny(s, "<> ") {
				c.add(fmt.Sprintf("%s.suppressions[%d]", op, si), "%q is not an email address", s)
			}
		}
		for pi, p := range o.Projects {
			pp := fmt.Sprintf("%s.projects[%d]", op, pi)
			if !slugRe.MatchString(p.ID) {
				c.add(pp+".id", "must be 1-63 lower-case letters, digits, - or _, starting with a letter or digit")
			} else {
				c.unique(projects, p.ID, pp, "project id")
			}
			c.project(pp, p, keyValues)
		}
	}
	if len(c.problems) > 0 {
		return &InvalidError{Problems: c.problems}
	}
	return nil
}

func (c *checker) key(path string, k KeySpec, names, values map[string]string) {
	if !nameRe.MatchString(k.Name) {
		c.add(path+".name", "must be 1-63 letters, digits, - or _")
	} else {
		c.unique(names, k.Name, path, "key name")
	}
	test := false
	if k.Value != "" {
		kind, isTest, err := auth.KindOf(k.Value)
		switch {
		case err != nil && !strings.HasPrefix(k.Value, auth.PrefixLive) && !strings.HasPrefix(k.Value, auth.PrefixTest) && !strings.HasPrefix(k.Value, auth.PrefixSecret):
			c.add(path, "value must start with pk_live_, pk_test_ or sk_live_")
		case err != nil:
			c.add(path, "value must have at least 4 letters, digits, - or _ after its prefix")
		default:
			test = isTest
			if k.Kind != "" && k.Kind != string(kind) && !(isTest && k.Kind == "test") {
				c.add(path+".kind", "is %q but the value's prefix makes it %s", k.Kind, kind)
			}
			c.unique(values, auth.Hash(k.Value), path, "key value")
		}
	} else {
		switch k.Kind {
		case "publishable", "secret":
		case "test":
			test = true
		default:
			c.add(path+".kind", "a key without value needs kind publishable, secret or test")
		}
	}
	if len(k.Products) == 0 {
		c.add(path+".products", "must name at least one of %s", strings.Join(Products, ", "))
	}
	for i, p := range k.Products {
		if !contains(Products, p) {
			c.add(fmt.Sprintf("%s.products[%d]", path, i), "%q is not one of %s", p, strings.Join(Products, ", "))
		} else if test && p != "membership" {
			c.add(fmt.Sprintf("%s.products[%d]", path, i), "pk_test_ keys are for the membership embed only")
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func (c *checker) project(pp string, p Project, keyValues map[string]string) {
	keyNames := map[string]string{}
	for ki, k := range p.Keys {
		c.key(fmt.Sprintf("%s.keys[%d]", pp, ki), k, keyNames, keyValues)
	}
	plugins := map[string]string{}
	for i, pl := range p.Plugins {
		c.plugin(fmt.Sprintf("%s.plugins[%d]", pp, i), pl, plugins)
	}
	if p.Captcha != nil {
		cp := pp + ".captcha"
		switch {
		case p.Captcha.Plugin != "":
			if _, ok := plugins[p.Captcha.Plugin]; !ok {
				c.add(cp+".plugin", "no plugin %q in this project", p.Captcha.Plugin)
			}
		case !captchaProviders[p.Captcha.Provider]:
			c.add(cp+".provider", "must be turnstile, hcaptcha or recaptcha")
		case p.Captcha.Secret == "" || p.Captcha.SiteKey == "":
			c.add(cp, "siteKey and secret are both required")
		}
	}
	if p.Email != nil {
		c.address(pp+".email.from", p.Email.From)
		c.address(pp+".email.replyTo", p.Email.ReplyTo)
		seen := map[string]string{}
		for i, t := range p.Email.Templates {
			tp := fmt.Sprintf("%s.email.templates[%d]", pp, i)
			if !slugRe.MatchString(t.Slug) {
				c.add(tp+".slug", "must be 1-63 lower-case letters, digits, - or _")
			} else {
				c.unique(seen, t.Slug, tp, "template")
			}
			if t.Subject == "" || t.Body == "" {
				c.add(tp, "subject and body are both required")
			}
		}
	}
	forms := map[string]string{}
	for i, f := range p.Forms {
		c.form(fmt.Sprintf("%s.forms[%d]", pp, i), f, forms, p, plugins)
		c.formMail(fmt.Sprintf("%s.forms[%d]", pp, i), f, p)
	}
	c.webhooks(pp, p.Webhooks)
	if p.Membership != nil {
		conns, active := map[string]string{}, ""
		for i, cn := range p.Membership.Connections {
			cpth := fmt.Sprintf("%s.membership.connections[%d]", pp, i)
			if !nameRe.MatchString(cn.Name) {
				c.add(cpth+".name", "must be 1-63 letters, digits, - or _")
			} else {
				c.unique(conns, cn.Name, cpth, "connection")
			}
			if cn.Active {
				if active != "" {
					c.add(cpth+".active", "only one connection may be active; %s is active too", active)
				}
				active = cpth
			}
			if err := CheckIdpKey(cn.IdpPublishableKey, cn.IdpInstanceDomain); err != nil {
				c.add(cpth+".idpPublishableKey", "%v", err)
			}
		}
	}
	colls := map[string]Collection{}
	seen := map[string]string{}
	for i, col := range p.Collections {
		cp := fmt.Sprintf("%s.collections[%d]", pp, i)
		if !nameRe.MatchString(col.Name) {
			c.add(cp+".name", "must be 1-63 letters, digits, - or _")
			continue
		}
		c.unique(seen, col.Name, cp, "collection")
		colls[col.Name] = col
	}
	for i, col := range p.Collections {
		c.collection(fmt.Sprintf("%s.collections[%d]", pp, i), col, colls)
	}
}

func (c *checker) address(path string, a *Address) {
	if a == nil {
		return
	}
	if _, err := mail.ParseAddress(a.Email); err != nil || strings.ContainsAny(a.Email, "<> ") {
		c.add(path+".email", "%q is not an email address", a.Email)
	}
}

func (c *checker) plugin(path string, pl Plugin, seen map[string]string) {
	if !nameRe.MatchString(pl.Name) {
		c.add(path+".name", "must be 1-63 letters, digits, - or _")
	} else {
		c.unique(seen, pl.Name, path, "plugin")
	}
	if pl.Module == "" {
		c.add(path+".module", "is required: a .wasm path or the name of an uploaded module")
	}
	if len(pl.Hooks) == 0 {
		c.add(path+".hooks", "must name at least one hook")
	}
	for i, h := range pl.Hooks {
		if !hooks[h] {
			c.add(fmt.Sprintf("%s.hooks[%d]", path, i), "%q is not forms.submit, records.read, email.send or captcha.verify", h)
		}
	}
	if pl.OnError != "" && pl.OnError != "open" && pl.OnError != "closed" {
		c.add(path+".onError", "must be open or closed")
	}
	for i, h := range pl.AllowHosts {
		// The patterns themselves (host, host:port, *.domain, https://host, [IPv6]:port) are
		// the plugin host's to judge: it refuses a bad one at apply with PLUGIN_REFUSED.
		if h == "" || len(h) > 300 || strings.ContainsAny(h, " \t\r\n") {
			c.add(fmt.Sprintf("%s.allowHosts[%d]", path, i), "%q is not a host pattern", h)
		}
	}
	if pl.Limits.MemoryMB < 0 || pl.Limits.MemoryMB > 1024 {
		c.add(path+".limits.memoryMB", "must be from 8 to 1024")
	} else if pl.Limits.MemoryMB != 0 && pl.Limits.MemoryMB < 8 {
		c.add(path+".limits.memoryMB", "must be from 8 to 1024 (Go guests need at least 8)")
	}
	if pl.Limits.TimeoutMs < 0 || pl.Limits.TimeoutMs > 60000 {
		c.add(path+".limits.timeoutMs", "must be from 1 to 60000")
	}
}

func (c *checker) form(fp string, f Form, seen map[string]string, p Project, plugins map[string]string) {
	if !slugRe.MatchString(f.Slug) {
		c.add(fp+".slug", "must be 1-63 lower-case letters, digits, - or _")
	} else {
		c.unique(seen, f.Slug, fp, "form")
	}
	if f.Visibility != "" && f.Visibility != "public" && f.Visibility != "private" {
		c.add(fp+".visibility", "must be public or private")
	}
	if f.Captcha.Plugin != "" {
		if _, ok := plugins[f.Captcha.Plugin]; !ok {
			c.add(fp+".captcha.plugin", "no plugin %q in this project", f.Captcha.Plugin)
		}
	}
	if len(f.Fields) == 0 {
		c.add(fp+".fields", "a form needs at least one field")
	}
	names := map[string]string{}
	for i, fd := range f.Fields {
		path := fmt.Sprintf("%s.fields[%d]", fp, i)
		if !fieldNameRe.MatchString(fd.Name) || isCaptchaName(fd.Name) {
			c.add(path+".name", "must be a letter or _ followed by letters, digits, - or _ (and not a captcha field name)")
		} else {
			c.unique(names, fd.Name, path, "field")
		}
		if !formFieldTypes[fd.Type] {
			c.add(path+".type", "%q is not a form field type", fd.Type)
		}
		if (fd.Type == "select" || fd.Type == "multiselect" || fd.Type == "radio") && len(fd.Options) == 0 {
			c.add(path+".options", "a %s field needs options", fd.Type)
		}
		if fd.MaxLength < 0 || fd.MinLength < 0 || (fd.MaxLength > 0 && fd.MinLength > fd.MaxLength) {
			c.add(path, "minLength and maxLength must be positive with minLength <= maxLength")
		}
		if fd.Pattern != "" {
			if _, err := regexp.Compile(fd.Pattern); err != nil {
				c.add(path+".pattern", "not a valid regular expression: %v", err)
			}
		}
	}
}

// isCaptchaName reports the names reserved for challenge tokens.
func isCaptchaName(n string) bool {
	switch n {
	case "captcha-response", "cf-turnstile-response", "h-captcha-response", "g-recaptcha-response":
		return true
	}
	return false
}

func (c *checker) collection(cp string, col Collection, colls map[string]Collection) {
	fields := map[string]CollectionField{}
	seen := map[string]string{}
	for i, f := range col.Fields {
		path := fmt.Sprintf("%s.fields[%d]", cp, i)
		if !fieldNameRe.MatchString(f.Name) || f.Name == "id" || f.Name == "createdAt" || f.Name == "updatedAt" {
			c.add(path+".name", "must be a letter or _ followed by letters, digits, - or _, and not id, createdAt or updatedAt")
			continue
		}
		c.unique(seen, f.Name, path, "field")
		fields[f.Name] = f
		if !collectionFieldTypes[f.Type] {
			c.add(path+".type", "%q is not a collection field type", f.Type)
		}
		if (f.Type == "select" || f.Type == "multiselect") && len(f.Options) == 0 {
			c.add(path+".options", "a %s field needs options", f.Type)
		}
		if f.Type == "relation" || f.Type == "relations" {
			if _, ok := colls[f.Collection]; !ok {
				c.add(path+".collection", "no collection %q in this project", f.Collection)
			}
		}
	}
	ids := map[string]string{}
	for i, r := range col.Records {
		rp := fmt.Sprintf("%s.records[%d]", cp, i)
		if !recordIDRe.MatchString(r.ID) {
			c.add(rp+".id", "must be 1-128 letters, digits, ., - or _")
		} else {
			c.unique(ids, r.ID, rp, "record id")
		}
		for name, v := range r.Data {
			f, ok := fields[name]
			if !ok {
				c.add(rp+".data."+name, "no field %q in collection %s", name, col.Name)
				continue
			}
			if msg := CheckValue(f, v); msg != "" {
				c.add(rp+".data."+name, "%s", msg)
			}
		}
	}
}

// CheckValue checks one record value against its field definition; "" means valid.
func CheckValue(f CollectionField, v any) string {
	if v == nil {
		return ""
	}
	switch f.Type {
	case "text", "email", "url", "date", "relation":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%s field needs a string", f.Type)
		}
	case "number":
		switch v.(type) {
		case float64, int, int64, float32:
		default:
			return "number field needs a number"
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "boolean field needs true or false"
		}
	case "select":
		s, ok := v.(string)
		if !ok || !contains(f.Options, s) {
			return fmt.Sprintf("must be one of %s", strings.Join(f.Options, ", "))
		}
	case "multiselect", "relations":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("%s field needs a list", f.Type)
		}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok || (f.Type == "multiselect" && !contains(f.Options, s)) {
				return fmt.Sprintf("every element must be a string%s", map[bool]string{true: " from " + strings.Join(f.Options, ", ")}[f.Type == "multiselect"])
			}
		}
	}
	return ""
}

// CheckIdpKey checks an identity provider publishable key as the provider's own SDK does:
// pk_test_ or pk_live_ then base64 (padded or not) of "<frontend host>$", where the host must be
// the instance domain (or end with it).
func CheckIdpKey(key, domain string) error {
	var rest string
	switch {
	case strings.HasPrefix(key, "pk_test_"):
		rest = key[len("pk_test_"):]
	case strings.HasPrefix(key, "pk_live_"):
		rest = key[len("pk_live_"):]
	default:
		return fmt.Errorf("must start with pk_test_ or pk_live_")
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil {
		raw, err = base64.StdEncoding.DecodeString(rest)
	}
	if err != nil {
		return fmt.Errorf("is not base64 after its prefix")
	}
	host, ok := strings.CutSuffix(string(raw), "$")
	host = strings.ToLower(host)
	if !ok || !domainRe.MatchString(host) {
		return fmt.Errorf("does not decode to \"<frontend host>$\"")
	}
	domain = strings.ToLower(domain)
	if domain == "" {
		return fmt.Errorf("needs idpInstanceDomain beside it")
	}
	if !domainRe.MatchString(domain) {
		return fmt.Errorf("decodes to host %q, which does not match idpInstanceDomain %q (it must be a host name such as clerk.example.com)", host, domain)
	}
	if host != domain && !strings.HasSuffix(host, "."+domain) {
		return fmt.Errorf("decodes to host %q, which does not match idpInstanceDomain %q", host, domain)
	}
	return nil
}
