// Package tenancy holds organizations, projects, API keys and everything the tenants document
// configures (forms, templates, suppressions, membership connections, collections with records,
// plugins). It reads and validates the document, applies it idempotently in one transaction,
// and answers the reads every product makes of what it stored.
package tenancy

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Document is the tenants document of decisions.md section 3, read from YAML or JSON.
type Document struct {
	// Prune deletes what the document does not mention.
	Prune bool  `json:"prune,omitempty"`
	Orgs  []Org `json:"orgs"`
}

// Org is one organization.
type Org struct {
	Slug         string    `json:"slug"`
	Name         string    `json:"name,omitempty"`
	Keys         []KeySpec `json:"keys,omitempty"`
	Suppressions []string  `json:"suppressions,omitempty"`
	Projects     []Project `json:"projects,omitempty"`
}

// KeySpec declares an API key; its kind comes from the value's prefix (or Kind when generated).
type KeySpec struct {
	Name     string   `json:"name"`
	Value    string   `json:"value,omitempty"`
	Kind     string   `json:"kind,omitempty"` // publishable | secret | test, for generated keys
	Products []string `json:"products"`
	Revoked  bool     `json:"revoked,omitempty"`
}

// Project is one project of an org; its id is unique across the gateway.
type Project struct {
	ID          string         `json:"id"`
	Name        string         `json:"name,omitempty"`
	Keys        []KeySpec      `json:"keys,omitempty"`
	Captcha     *CaptchaKeys   `json:"captcha,omitempty"`
	Email       *EmailSettings `json:"email,omitempty"`
	Forms       []Form         `json:"forms,omitempty"`
	Membership  *Membership    `json:"membership,omitempty"`
	Collections []Collection   `json:"collections,omitempty"`
	Plugins     []Plugin       `json:"plugins,omitempty"`
	Webhooks    []Webhook      `json:"webhooks,omitempty"` // webhooks.go
}

// CaptchaKeys are a project's challenge provider keys.
type CaptchaKeys struct {
	Provider string `json:"provider,omitempty"` // turnstile | hcaptcha | recaptcha
	SiteKey  string `json:"siteKey,omitempty"`
	Secret   string `json:"secret,omitempty"`
	Plugin   string `json:"plugin,omitempty"`
}

// Address is an email address with an optional display name.
type Address struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

// EmailSettings are a project's sender defaults and templates.
type EmailSettings struct {
	From      *Address   `json:"from,omitempty"`
	ReplyTo   *Address   `json:"replyTo,omitempty"`
	Templates []Template `json:"templates,omitempty"`
}

// Template is an email template; subject and body hold {{placeholder}} tokens.
type Template struct {
	Slug    string `json:"slug"`
	Subject string `json:"subject"`
	Body    string `json:"body"`
	// Text is an optional plain-text body; derived from Body when empty.
	Text string `json:"text,omitempty"`
}

// Form is a form definition.
type Form struct {
	Slug       string         `json:"slug"`
	Title      string         `json:"title,omitempty"`
	Published  bool           `json:"published"`
	Visibility string         `json:"visibility,omitempty"` // public (default) | private
	Captcha    FormCaptcha    `json:"captcha"`
	Fields     []FormField    `json:"fields"`
	Settings   map[string]any `json:"settings,omitempty"`
	// Notify and AutoReply send email for each accepted submission (webhooks.go).
	Notify    *FormNotify    `json:"notify,omitempty"`
	AutoReply *FormAutoReply `json:"autoReply,omitempty"`
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

// Membership holds a project's sign-in connections.
type Membership struct {
	Connections []Connection `json:"connections,omitempty"`
}

// Connection is one identity-provider connection. IdpSecretKey is stored, never returned.
type Connection struct {
	Name                 string         `json:"name"`
	Active               bool           `json:"active"`
	IdpPublishableKey    string         `json:"idpPublishableKey"`
	IdpInstanceDomain    string         `json:"idpInstanceDomain"`
	IdpSecretKey         string         `json:"idpSecretKey,omitempty"`
	SignUpEnabled        bool           `json:"signUpEnabled"`
	OrganizationsEnabled bool           `json:"organizationsEnabled"`
	Appearance           map[string]any `json:"appearance,omitempty"`
}

// Collection is a record collection of a project.
type Collection struct {
	Name    string            `json:"name"`
	Public  bool              `json:"public"`
	Fields  []CollectionField `json:"fields"`
	Records []Record          `json:"records,omitempty"`
}

// CollectionField defines one field of a collection.
type CollectionField struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"` // text, number, boolean, date, select, multiselect, relation, relations, json
	Options    []string `json:"options,omitempty"`
	Collection string   `json:"collection,omitempty"` // target of relation(s)
	Private    bool     `json:"private,omitempty"`
	Required   bool     `json:"required,omitempty"`
}

// Record is one record of a collection, as the document gives it.
type Record struct {
	ID        string         `json:"id"`
	Published bool           `json:"published"`
	Data      map[string]any `json:"data"`
}

// Plugin registers a Wasm module for a project's hook points.
type Plugin struct {
	Name       string            `json:"name"`
	Module     string            `json:"module"`
	Hooks      []string          `json:"hooks"`
	OnError    string            `json:"onError,omitempty"` // open | closed
	AllowHosts []string          `json:"allowHosts,omitempty"`
	Limits     PluginLimits      `json:"limits,omitempty"`
	Config     map[string]string `json:"config,omitempty"`
}

// PluginLimits caps one plugin's memory and time per call.
type PluginLimits struct {
	MemoryMB  int `json:"memoryMB,omitempty"`
	TimeoutMs int `json:"timeoutMs,omitempty"`
}
