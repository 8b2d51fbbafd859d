package tenancy

import "github.com/gatehouse-dev/gatehouse/edge/store"

// Key layout. Everything tenancy stores lives below "tenancy/"; each entity is one JSON value.
const (
	kOrg        = "org"        // tenancy/org/<slug> -> OrgInfo
	kProject    = "project"    // tenancy/project/<id> -> ProjectInfo
	kKey        = "key"        // tenancy/key/<sha256 hex> -> auth.Key
	kKeyName    = "keyname"    // tenancy/keyname/<org>/<project|->/<name> -> hash
	kSuppress   = "suppress"   // tenancy/suppress/<org>/<lower-case address> -> Suppression
	kForm       = "form"       // tenancy/form/<project>/<slug> -> Form
	kTemplate   = "template"   // tenancy/template/<project>/<slug> -> Template
	kConnection = "connection" // tenancy/connection/<project>/<name> -> Connection
	kCollection = "collection" // tenancy/collection/<project>/<name> -> Collection (no records)
	kRecord     = "record"     // tenancy/record/<project>/<collection>/<id> -> StoredRecord
	kPlugin     = "plugin"     // tenancy/plugin/<project>/<name> -> Plugin
	kMeta       = "meta"       // tenancy/meta/<name> -> server-wide values (the cursor secret)
)

const root = "tenancy"

func key(kind string, parts ...string) []byte {
	return store.Key(append([]string{root, kind}, parts...)...)
}

func prefix(kind string, parts ...string) []byte {
	return store.Prefix(append([]string{root, kind}, parts...)...)
}

// noProject stands for the project part of an org-only key's name entry.
const noProject = "-"

// OrgInfo is what is stored of an org.
type OrgInfo struct {
	Slug string `json:"slug"`
	Name string `json:"name,omitempty"`
}

// ProjectInfo is what is stored of a project itself.
type ProjectInfo struct {
	ID      string         `json:"id"`
	Org     string         `json:"org"`
	Name    string         `json:"name,omitempty"`
	Captcha *CaptchaKeys   `json:"captcha,omitempty"`
	Email   *EmailDefaults `json:"email,omitempty"`
}

// EmailDefaults are a project's sender defaults.
type EmailDefaults struct {
	From    *Address `json:"from,omitempty"`
	ReplyTo *Address `json:"replyTo,omitempty"`
}

// Suppression is one address on an org's suppression list.
type Suppression struct {
	Email  string `json:"email"`
	Source string `json:"source"` // tenants | bounce | complaint | admin
	Reason string `json:"reason,omitempty"`
	At     string `json:"at"`
}

// StoredRecord is a collection record as stored; CreatedAt is kept across re-applies.
type StoredRecord struct {
	ID        string         `json:"id"`
	Published bool           `json:"published"`
	Data      map[string]any `json:"data"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
}
