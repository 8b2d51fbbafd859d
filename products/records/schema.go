package records

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// Built-in fields every record has.
const (
	fieldID        = "id"
	fieldCreatedAt = "createdAt"
	fieldUpdatedAt = "updatedAt"
	fieldTitle     = "title"
)

// Field is one compiled field of a collection.
type Field struct {
	Name    string
	Type    string
	Private bool
	// Target is the collection a relation points to.
	Target string
	// Array is true for multiselect and relations (membership semantics).
	Array bool
	// Indexed is false for json fields: they are neither filterable nor sortable.
	Indexed bool
	Def     CollectionField
	// idxKey and groupKey are the field's index and group key prefixes in its collection
	// (idxPrefix, groupPrefix; groupKey only for a groupable field), computed once with the
	// schema so that a write does not build them for every record (idxPrefixOf,
	// groupPrefixOf). Never appended to in place: their capacity ends with them.
	idxKey, groupKey []byte
}

// Groupable reports whether per-value counts of the field are kept (few distinct values).
func (f *Field) Groupable() bool {
	switch f.Type {
	case "select", "multiselect", "boolean", "relation", "relations":
		return true
	}
	return false
}

// Relation reports whether the field is a relation or relations field.
func (f *Field) Relation() bool { return f.Type == "relation" || f.Type == "relations" }

// Schema is a compiled collection definition.
type Schema struct {
	Project string
	Name    string
	Public  bool
	Fields  []*Field
	byName  map[string]*Field
	def     Collection
	// leads and orders are the fields of the compound indexes (compound.go); leadOrderKeys
	// their key prefixes, compoundPrefix of leads[i] and orders[j] at i*len(orders)+j.
	leads, orders []string
	leadOrderKeys [][]byte
	// countKey is the collection's count key (countKey).
	countKey []byte
}

func compileSchema(project string, c Collection) *Schema {
	s := &Schema{Project: project, Name: c.Name, Public: c.Public, byName: map[string]*Field{}, def: c}
	s.def.Records = nil
	for _, f := range c.Fields {
		cf := &Field{Name: f.Name, Type: f.Type, Private: f.Private, Target: f.Collection,
			Array: f.Type == "multiselect" || f.Type == "relations", Indexed: f.Type != "json", Def: f}
		s.Fields = append(s.Fields, cf)
		s.byName[f.Name] = cf
	}
	for _, name := range []string{fieldCreatedAt, fieldUpdatedAt} {
		s.byName[name] = &Field{Name: name, Type: "date", Indexed: true}
	}
	s.byName[fieldID] = &Field{Name: fieldID, Type: "text"}
	s.compoundFields()
	s.keyPrefixes()
	return s
}

// keyPrefixes computes the key prefixes a write of the collection's records uses (the compound
// pairs' with the pairs, compoundFields).
func (s *Schema) keyPrefixes() {
	for _, f := range s.byName {
		if f.Indexed {
			f.idxKey = slices.Clip(idxPrefix(s.Project, s.Name, f.Name))
		}
		if f.Groupable() {
			f.groupKey = slices.Clip(groupPrefix(s.Project, s.Name, f.Name))
		}
	}
	s.countKey = slices.Clip(countKey(s.Project, s.Name))
}

// is reports whether s (possibly nil) is the schema of collection coll of project.
func (s *Schema) is(project, coll string) bool {
	return s != nil && s.Project == project && s.Name == coll
}

// schemaField returns field name of sch when sch is the schema of collection coll of project
// (nil otherwise), for the key prefixes it keeps.
func schemaField(project, coll string, sch *Schema, name string) *Field {
	if !sch.is(project, coll) {
		return nil
	}
	return sch.byName[name]
}

// idxPrefixOf is idxPrefix(project, coll, name), the schema's when it keeps it.
func idxPrefixOf(project, coll string, sch *Schema, name string) []byte {
	if f := schemaField(project, coll, sch, name); f != nil && f.idxKey != nil {
		return f.idxKey
	}
	return idxPrefix(project, coll, name)
}

// groupPrefixOf is groupPrefix(project, coll, name), the schema's when it keeps it.
func groupPrefixOf(project, coll string, sch *Schema, name string) []byte {
	if f := schemaField(project, coll, sch, name); f != nil && f.groupKey != nil {
		return f.groupKey
	}
	return groupPrefix(project, coll, name)
}

// field returns a field by name, including id, createdAt and updatedAt.
func (s *Schema) field(name string) *Field { return s.byName[name] }

// userField returns a collection-defined field (not a built-in) by name.
func (s *Schema) userField(name string) *Field {
	f := s.byName[name]
	if f == nil || f.Name == fieldID || f.Name == fieldCreatedAt || f.Name == fieldUpdatedAt {
		return nil
	}
	return f
}

// definitionJSON is the collection-definition read: public fields only unless secret.
func (s *Schema) definitionJSON(secret bool) ([]byte, error) {
	type fieldOut struct {
		Name       string   `json:"name"`
		Type       string   `json:"type"`
		Options    []string `json:"options,omitempty"`
		Collection string   `json:"collection,omitempty"`
		Required   bool     `json:"required,omitempty"`
		Private    bool     `json:"private,omitempty"`
	}
	out := struct {
		Name   string     `json:"name"`
		Public bool       `json:"public"`
		Fields []fieldOut `json:"fields"`
	}{Name: s.Name, Public: s.Public, Fields: []fieldOut{}}
	for _, f := range s.Fields {
		if f.Private && !secret {
			continue
		}
		out.Fields = append(out.Fields, fieldOut{Name: f.Name, Type: f.Type, Options: f.Def.Options,
			Collection: f.Target, Required: f.Def.Required, Private: f.Private})
	}
	return json.Marshal(out)
}

// parseDate reads a date value: RFC 3339 (with or without fraction), the same without a zone
// (UTC), or YYYY-MM-DD (UTC).
func parseDate(s string) (time.Time, bool) {
	layouts := []string{time.RFC3339Nano, "2006-01-02T15:04:05"}
	if len(s) == len("2006-01-02") {
		// Only a date is this short: a create of a record with a date field read its value
		// twice, each time failing the two longer layouts first (an error built each time).
		layouts = []string{"2006-01-02"}
	}
	for _, layout := range layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// encodeTime is the index encoding of an instant (milliseconds since the epoch, as a number).
func encodeTime(t time.Time) []byte { return fields.Number(float64(t.UnixMilli())) }

// appendValues appends to dst the index encodings of a stored value of f: one for a scalar
// (Null when missing), one per distinct element for arrays, none for json fields (ok false).
// A record's fields append to one slice, one allocation for all of them.
func appendValues(dst [][]byte, f *Field, v any) (out [][]byte, ok bool) {
	if !f.Indexed {
		return dst, false
	}
	if f.Array {
		arr, _ := v.([]any)
		var seen map[string]bool // past smallArray elements; below, earlier ones are compared
		if len(arr) > smallArray {
			seen = make(map[string]bool, len(arr))
		}
		for i, e := range arr {
			s, ok := e.(string)
			if !ok || seen != nil && seen[s] || seen == nil && slices.Contains(arr[:i], any(s)) {
				continue
			}
			if seen != nil {
				seen[s] = true
			}
			dst = append(dst, fields.String(s))
		}
		return dst, true
	}
	if enc := encodeScalar(f, v); enc != nil {
		return append(dst, enc), true
	}
	return append(dst, fields.Null()), true
}

// smallArray is the most elements appendValues dedupes by comparing each with those before it.
const smallArray = 16

func encodeScalar(f *Field, v any) []byte {
	switch f.Type {
	case "number":
		switch n := v.(type) {
		case float64:
			return fields.Number(n)
		case int:
			return fields.Number(float64(n))
		case int64:
			return fields.Number(float64(n))
		case json.Number:
			if x, err := n.Float64(); err == nil {
				return fields.Number(x)
			}
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return fields.Bool(b)
		}
	case "date":
		if s, ok := v.(string); ok {
			if t, ok := parseDate(s); ok {
				return encodeTime(t)
			}
		}
	default:
		if s, ok := v.(string); ok {
			return fields.String(s)
		}
	}
	return nil
}

// timeText renders milliseconds since the epoch in the interface's timestamp form.
func timeText(ms int64) string { return time.UnixMilli(ms).UTC().Format(apitime.Layout) }
