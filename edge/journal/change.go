// Package journal is the one event of tenancy data, Change, and the Feed that records changes in
// the transaction committing them and announces them after the commit. Every cache of tenancy
// data (edge/tenantcache, the auth key cache, the plugin registry) listens to the Feed, and
// edge/bus journals it in the shared store so that the other nodes of a deployment hear it too.
// It is a package of its own so that a listener depends on the event, not on the tenancy service
// that applies the tenants document.
package journal

import (
	"encoding/json"
	"strings"
)

// Change is one entity that a tenants-document apply (or an upload, or a key revocation)
// created, updated or deleted. It is the one event every cache of tenancy data listens to, and
// the one a deployment of many nodes carries between them: keep it one plain type.
type Change struct {
	Op   string // created | updated | deleted
	Kind string // org, project, key, form, captcha, template, sender, suppression, connection, collection, record, plugin, module
	// Org names the org of org-level entities (orgs, keys, suppressions); empty otherwise.
	Org string
	// Project names the project of project-level entities (and of project keys).
	Project string
	// Name names the entity inside its org or project: a form slug, "posts/post-1" for a record;
	// empty for an org or a project itself.
	Name string
	// Old and New are the stored JSON before and after (nil when absent); keys carry no values.
	// They stay on this node (a multi-node event carries the names only).
	Old json.RawMessage
	New json.RawMessage
	// Remote marks a change committed by another node and carried here by edge/bus: the shared
	// store already holds it and whatever its node derived in the store (dropped or rebuilt
	// data); a listener only refreshes what it keeps in memory. Old and New are nil.
	Remote bool
	// Gen is the change journal's generation under which the change's own transaction recorded
	// it (Feed.Record); 0 when no journal recorded it there.
	Gen uint64
}

// Path names the entity as the apply report shows it: "acme", "demo/contact",
// "demo/posts/post-1", "acme/demo/web" (a project key).
func (c Change) Path() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{c.Org, c.Project, c.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// MarshalJSON renders {"op","kind","path"} for the apply report.
func (c Change) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Op   string `json:"op"`
		Kind string `json:"kind"`
		Path string `json:"path"`
	}{c.Op, c.Kind, c.Path()})
}
