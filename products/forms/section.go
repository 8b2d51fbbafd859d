package forms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Form is a form definition: one entry of a project's forms in the tenants document.
type Form struct {
	Slug       string         `json:"slug"`
	Title      string         `json:"title,omitempty"`
	Published  bool           `json:"published"`
	Visibility string         `json:"visibility,omitempty"` // public (default) | private
	Captcha    FormCaptcha    `json:"captcha"`
	Fields     []FormField    `json:"fields"`
	Settings   map[string]any `json:"settings,omitempty"`
	// Notify and AutoReply send email for each accepted submission (notify.go).
	Notify    *Notify    `json:"notify,omitempty"`
	AutoReply *AutoReply `json:"autoReply,omitempty"`
}

// FormCaptcha is `captcha: true|false` or `captcha: {plugin: name}` in the document.
type FormCaptcha struct {
	Enabled bool   `json:"enabled"`
	Plugin  string `json:"plugin,omitempty"`
}

// UnmarshalJSON accepts a boolean or {plugin: name} (or the stored {enabled, plugin}).
func (c *FormCaptcha) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch string(b) {
	case "true":
		*c = FormCaptcha{Enabled: true}
		return nil
	case "false", "null":
		*c = FormCaptcha{}
		return nil
	}
	var o struct {
		Enabled *bool  `json:"enabled"`
		Plugin  string `json:"plugin"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("captcha must be true, false or {plugin: name}: %w", err)
	}
	*c = FormCaptcha{Enabled: o.Enabled == nil || *o.Enabled, Plugin: o.Plugin}
	return nil
}

// FormField is one field of a form.
type FormField struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Label       string   `json:"label,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	HelpText    string   `json:"helpText,omitempty"`
	MinLength   int      `json:"minLength,omitempty"`
	MaxLength   int      `json:"maxLength,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Options     []string `json:"options,omitempty"`
	Accept      []string `json:"accept,omitempty"`
	Multiple    bool     `json:"multiple,omitempty"`
	MaxSizeMB   float64  `json:"maxSizeMB,omitempty"`
}

// CaptchaKeys are a project's challenge provider keys (the project's captcha key).
type CaptchaKeys struct {
	Provider string `json:"provider,omitempty"` // turnstile | hcaptcha | recaptcha
	SiteKey  string `json:"siteKey,omitempty"`
	Secret   string `json:"secret,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
}

// Key layout of the sections: forms/def/<project>/<slug> -> Form; forms/captcha/<project> ->
// CaptchaKeys.
func defKey(project, slug string) []byte { return store.Key(prefixSub, "def", project, slug) }
func captchaKey(project string) []byte   { return store.Key(prefixSub, "captcha", project) }

var (
	defRoot     = store.Prefix(prefixSub, "def")
	captchaRoot = store.Prefix(prefixSub, "captcha")
)

var (
	fieldNameRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)
	formFieldTypes = map[string]bool{"text": true, "email": true, "textarea": true, "number": true,
		"checkbox": true, "select": true, "multiselect": true, "radio": true, "file": true, "url": true,
		"tel": true, "date": true, "hidden": true}
)

// Sections implements tenancy.Owner: a project's forms and its captcha keys.
func (s *Service) Sections() []tenancy.Section {
	return []tenancy.Section{captchaSection{}, formsSection{}}
}

var (
	_ tenancy.Owner   = (*Service)(nil)
	_ tenancy.Section = formsSection{}
	_ tenancy.Section = captchaSection{}
)

// pluginNames returns the names of the project's plugins section, which captcha.plugin names.
func pluginNames(c *tenancy.Check) map[string]bool {
	var ps []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(c.Sibling("plugins"), &ps)
	out := map[string]bool{}
	for _, p := range ps {
		out[p.Name] = true
	}
	return out
}

// formsSection is the forms key of a project: form definitions, upserted by slug.
type formsSection struct{}

func (formsSection) Name() string         { return "forms" }
func (formsSection) Level() tenancy.Level { return tenancy.ProjectLevel }

func (formsSection) Check(c *tenancy.Check, raw json.RawMessage) {
	var forms []Form
	if !c.Decode(raw, &forms) {
		return
	}
	plugins := pluginNames(c)
	seen := map[string]string{}
	for i, f := range forms {
		fp := fmt.Sprintf("[%d]", i)
		if !tenancy.IsSlug(f.Slug) {
			c.Add(fp+".slug", "must be 1-63 lower-case letters, digits, - or _")
		} else {
			c.Unique(seen, f.Slug, fp, "form")
		}
		if f.Visibility != "" && f.Visibility != "public" && f.Visibility != "private" {
			c.Add(fp+".visibility", "must be public or private")
		}
		if f.Captcha.Plugin != "" && !plugins[f.Captcha.Plugin] {
			c.Add(fp+".captcha.plugin", "no plugin %q in this project", f.Captcha.Plugin)
		}
		if len(f.Fields) == 0 {
			c.Add(fp+".fields", "a form needs at least one field")
		}
		checkMail(c, fp, f)
		names := map[string]string{}
		for j, fd := range f.Fields {
			path := fmt.Sprintf("%s.fields[%d]", fp, j)
			if !fieldNameRe.MatchString(fd.Name) || isCaptchaName(fd.Name) {
				c.Add(path+".name", "must be a letter or _ followed by letters, digits, - or _ (and not a captcha field name)")
			} else {
				c.Unique(names, fd.Name, path, "field")
			}
			if !formFieldTypes[fd.Type] {
				c.Add(path+".type", "%q is not a form field type", fd.Type)
			}
			if (fd.Type == "select" || fd.Type == "multiselect" || fd.Type == "radio") && len(fd.Options) == 0 {
				c.Add(path+".options", "a %s field needs options", fd.Type)
			}
			if fd.MaxLength < 0 || fd.MinLength < 0 || (fd.MaxLength > 0 && fd.MinLength > fd.MaxLength) {
				c.Add(path, "minLength and maxLength must be positive with minLength <= maxLength")
			}
			if fd.Pattern != "" {
				if _, err := regexp.Compile(fd.Pattern); err != nil {
					c.Add(path+".pattern", "not a valid regular expression: %v", err)
				}
			}
		}
	}
}

func (formsSection) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var forms []Form
	if err := tenancy.Decode(raw, &forms); err != nil {
		return err
	}
	for _, f := range forms {
		if f.Visibility == "" {
			f.Visibility = "public"
		}
		if err := w.Put(defKey(w.Project, f.Slug), "form", f.Slug, f); err != nil {
			return err
		}
	}
	return nil
}

func (formsSection) Prune(w *tenancy.Writer) error {
	return w.Prune(defRoot, "form", tenancy.ProjectLevel, nil, nil)
}

// captchaSection is the captcha key of a project: its challenge provider keys (or plugin).
// A project that leaves the key out has none.
type captchaSection struct{}

var captchaProviders = map[string]bool{ProviderTurnstile: true, ProviderHCaptcha: true, ProviderReCaptcha: true}

func (captchaSection) Name() string         { return "captcha" }
func (captchaSection) Level() tenancy.Level { return tenancy.ProjectLevel }

func (captchaSection) Check(c *tenancy.Check, raw json.RawMessage) {
	var k *CaptchaKeys
	if !c.Decode(raw, &k) || k == nil {
		return
	}
	switch {
	case k.Plugin != "":
		if !pluginNames(c)[k.Plugin] {
			c.Add(".plugin", "no plugin %q in this project", k.Plugin)
		}
	case !captchaProviders[k.Provider]:
		c.Add(".provider", "must be turnstile, hcaptcha or recaptcha")
	case k.Secret == "" || k.SiteKey == "":
		c.Add("", "siteKey and secret are both required")
	}
}

func (captchaSection) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var k *CaptchaKeys
	if err := tenancy.Decode(raw, &k); err != nil {
		return err
	}
	if k == nil {
		return w.Delete(captchaKey(w.Project), "captcha", "")
	}
	return w.Put(captchaKey(w.Project), "captcha", "", k)
}

func (captchaSection) Prune(w *tenancy.Writer) error {
	return w.Prune(captchaRoot, "captcha", tenancy.ProjectLevel, nil, nil)
}

// errNoValue reports a missing form or captcha entry.
var errNoValue = errors.New("forms: not found")

// getJSON reads and decodes the value at k, or errNoValue.
func getJSON(ctx context.Context, db *store.DB, k []byte, v any) error {
	return db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(k)
		if errors.Is(err, store.ErrNotFound) {
			return errNoValue
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, v)
	})
}

// load reads a form and its project's captcha keys (nil when the project has none).
func (s *Service) load(ctx context.Context, project, slug string) (Form, *CaptchaKeys, error) {
	var f Form
	if err := getJSON(ctx, s.o.DB, defKey(project, slug), &f); err != nil {
		return f, nil, err
	}
	var k CaptchaKeys
	switch err := getJSON(ctx, s.o.DB, captchaKey(project), &k); {
	case errors.Is(err, errNoValue):
		return f, nil, nil
	case err != nil:
		return f, nil, err
	}
	return f, &k, nil
}
