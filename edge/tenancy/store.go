package tenancy

import "github.com/gatehouse-dev/gatehouse/edge/store"

// Key layout. Everything tenancy stores lives below "tenancy/"; each entity is one JSON value.
// Products keep their sections of the document under their own prefixes. tenancy/meta/<name>
// holds server-wide values of other packages where tenancy kept them before they moved out: the
// signing secrets of edge/secrets and the marker of edge/legacy.
const (
	kOrg     = "org"     // tenancy/org/<slug> -> OrgInfo
	kProject = "project" // tenancy/project/<id> -> ProjectInfo
	kKey     = "key"     // tenancy/key/<sha256 hex> -> apikey.Key
	kKeyName = "keyname" // tenancy/keyname/<org>/<project|->/<name> -> hash
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
	ID   string `json:"id"`
	Org  string `json:"org"`
	Name string `json:"name,omitempty"`
}
