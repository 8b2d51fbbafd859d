// Package tenancy holds organizations, projects and API keys, and applies the tenants document
// (decisions.md section 3): it parses the document, validates the parts it owns, and writes the
// whole document in one transaction. Everything else the document configures (forms, email
// templates and suppressions, membership connections, collections and records, plugins) belongs
// to the product that uses it: each registers a Section that validates and applies its own key of
// an org or project inside the same transaction, in its own key space. After the commit,
// listeners (caches) hear one journal.Change per entity.
package tenancy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/gatehouse-dev/gatehouse/edge/yamldoc"
)

// Document is the tenants document of decisions.md section 3, read from YAML or JSON.
type Document struct {
	// Prune deletes what the document does not mention.
	Prune bool  `json:"prune,omitempty"`
	Orgs  []Org `json:"orgs"`
	// pos holds the line of every entry when the document was parsed from text.
	pos yamldoc.Positions
	// checkedBy is the service whose Parse validated the document (Apply does not again).
	checkedBy *Service
}

// Org is one organization. Sections holds the keys that products own (suppressions), by name.
type Org struct {
	Slug     string                     `json:"slug"`
	Name     string                     `json:"name,omitempty"`
	Keys     []KeySpec                  `json:"keys,omitempty"`
	Projects []Project                  `json:"projects,omitempty"`
	Sections map[string]json.RawMessage `json:"-" yamldoc:"rest"`
}

// KeySpec declares an API key; its kind comes from the value's prefix (or Kind when generated).
type KeySpec struct {
	Name     string   `json:"name"`
	Value    string   `json:"value,omitempty"`
	Kind     string   `json:"kind,omitempty"` // publishable | secret | test, for generated keys
	Products []string `json:"products"`
	Revoked  bool     `json:"revoked,omitempty"`
}

// Project is one project of an org; its id is unique across the gateway. Sections holds the keys
// that products own (forms, captcha, email, membership, collections, plugins), by name.
type Project struct {
	ID       string                     `json:"id"`
	Name     string                     `json:"name,omitempty"`
	Keys     []KeySpec                  `json:"keys,omitempty"`
	Sections map[string]json.RawMessage `json:"-" yamldoc:"rest"`
}

// UnmarshalJSON reads the org's own keys strictly and keeps every other key for its section.
func (o *Org) UnmarshalJSON(b []byte) error {
	type own Org
	var v own
	rest, err := splitKeys(b, &v, "slug", "name", "keys", "projects")
	if err != nil {
		return err
	}
	*o = Org(v)
	o.Sections = rest
	return nil
}

// MarshalJSON writes the org's own keys and its sections.
func (o Org) MarshalJSON() ([]byte, error) {
	type own Org
	return joinKeys(own(o), o.Sections)
}

// UnmarshalJSON reads the project's own keys strictly and keeps every other key for its section.
func (p *Project) UnmarshalJSON(b []byte) error {
	type own Project
	var v own
	rest, err := splitKeys(b, &v, "id", "name", "keys")
	if err != nil {
		return err
	}
	*p = Project(v)
	p.Sections = rest
	return nil
}

// MarshalJSON writes the project's own keys and its sections.
func (p Project) MarshalJSON() ([]byte, error) {
	type own Project
	return joinKeys(own(p), p.Sections)
}

// splitKeys decodes the keys named own of the object b into v (strictly) and returns the others.
func splitKeys(b []byte, v any, own ...string) (map[string]json.RawMessage, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	mine := map[string]json.RawMessage{}
	var rest map[string]json.RawMessage
	for k, raw := range all {
		if contains(own, k) {
			mine[k] = raw
			continue
		}
		if rest == nil {
			rest = map[string]json.RawMessage{}
		}
		rest[k] = raw
	}
	enc, err := json.Marshal(mine)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(enc))
	dec.DisallowUnknownFields()
	return rest, dec.Decode(v)
}

// joinKeys marshals v and adds the sections' keys in name order.
func joinKeys(v any, sections map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(sections) == 0 {
		return b, err
	}
	names := make([]string, 0, len(sections))
	for k := range sections {
		names = append(names, k)
	}
	sort.Strings(names)
	out := bytes.TrimSuffix(b, []byte("}"))
	for _, k := range names {
		kb, _ := json.Marshal(k)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = fmt.Appendf(out, "%s:%s", kb, sections[k])
	}
	return append(out, '}'), nil
}
