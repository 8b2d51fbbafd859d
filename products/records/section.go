package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Collection is a record collection of a project: one entry of a project's collections in the
// tenants document (Records only there; the stored definition has none).
type Collection struct {
	Name    string            `json:"name"`
	Public  bool              `json:"public"`
	Fields  []CollectionField `json:"fields"`
	Records []DocRecord       `json:"records,omitempty"`
}

// CollectionField defines one field of a collection.
type CollectionField struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"` // text, number, boolean, date, select, multiselect, relation, relations, json, email, url
	Options    []string `json:"options,omitempty"`
	Collection string   `json:"collection,omitempty"` // target of relation(s)
	Private    bool     `json:"private,omitempty"`
	Required   bool     `json:"required,omitempty"`
}

// DocRecord is one record of a collection, as the document gives it.
type DocRecord struct {
	ID        string         `json:"id"`
	Published bool           `json:"published"`
	Data      map[string]any `json:"data"`
}

// docCopy is what the section keeps of a document record, to tell a re-apply that changes
// nothing (createdAt kept, updatedAt kept when the content is the same) from an edit, and to
// prune the document's records only: records written through the admin API are not the
// document's.
type docCopy struct {
	ID        string         `json:"id"`
	Published bool           `json:"published"`
	Data      map[string]any `json:"data"`
	CreatedAt string         `json:"createdAt"`
	UpdatedAt string         `json:"updatedAt"`
}

// Key layout of the section: records/c/<project>/<name> -> Collection (no records);
// records/d/<project>/<collection>/<id> -> docCopy. The records themselves, their indexes,
// counters and title journal are written by txWriter in the same transaction.
func collKey(project, name string) []byte { return store.Key(root, "c", project, name) }
func collPrefix(project string) []byte    { return store.Prefix(root, "c", project) }
func docKey(project, coll, id string) []byte {
	return store.Key(root, "d", project, coll, id)
}

var (
	collRoot = store.Prefix(root, "c")
	docRoot  = store.Prefix(root, "d")
)

// maxOptionLen bounds the options of select and multiselect fields: their values are kept
// whole in the keys of per-value counters and compound indexes (store.MaxKeyLen), as relation
// values are, which are record ids (recordIDRe).
const maxOptionLen = 256

var (
	fieldNameRe          = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,62}$`)
	collectionFieldTypes = map[string]bool{"text": true, "number": true, "boolean": true, "date": true,
		"select": true, "multiselect": true, "relation": true, "relations": true, "json": true, "email": true, "url": true}
)

// Sections implements tenancy.Owner: the collections key of projects.
func (s *Service) Sections() []tenancy.Section { return []tenancy.Section{collectionsSection{s: s}} }

var (
	_ tenancy.Owner   = (*Service)(nil)
	_ tenancy.Section = collectionsSection{}
)

// collectionsSection is the collections key of a project: definitions upserted by name, and their
// records written into the product's store (with indexes) in the apply's transaction.
type collectionsSection struct {
	// s is the service whose counter stripe the section's writes use (counters.go).
	s *Service
}

// stripe is the counter stripe the section writes (0 for a section without a service).
func (sec collectionsSection) stripe() int {
	if sec.s == nil {
		return 0
	}
	return sec.s.writeStripe()
}

func (collectionsSection) Name() string         { return "collections" }
func (collectionsSection) Level() tenancy.Level { return tenancy.ProjectLevel }

func (collectionsSection) Check(c *tenancy.Check, raw json.RawMessage) {
	var cols []Collection
	if !c.Decode(raw, &cols) {
		return
	}
	colls := map[string]bool{}
	seen := map[string]string{}
	for i, col := range cols {
		if !tenancy.IsName(col.Name) {
			c.Add(fmt.Sprintf("[%d].name", i), "must be 1-63 letters, digits, - or _")
			continue
		}
		c.Unique(seen, col.Name, fmt.Sprintf("[%d]", i), "collection")
		colls[col.Name] = true
	}
	for i, col := range cols {
		checkCollection(c, fmt.Sprintf("[%d]", i), col, colls)
	}
}

func checkCollection(c *tenancy.Check, cp string, col Collection, colls map[string]bool) {
	fields := map[string]CollectionField{}
	seen := map[string]string{}
	for i, f := range col.Fields {
		path := fmt.Sprintf("%s.fields[%d]", cp, i)
		if !fieldNameRe.MatchString(f.Name) || f.Name == "id" || f.Name == "createdAt" || f.Name == "updatedAt" {
			c.Add(path+".name", "must be a letter or _ followed by letters, digits, - or _, and not id, createdAt or updatedAt")
			continue
		}
		c.Unique(seen, f.Name, path, "field")
		fields[f.Name] = f
		if !collectionFieldTypes[f.Type] {
			c.Add(path+".type", "%q is not a collection field type", f.Type)
		}
		if (f.Type == "select" || f.Type == "multiselect") && len(f.Options) == 0 {
			c.Add(path+".options", "a %s field needs options", f.Type)
		}
		for j, o := range f.Options {
			if len(o) > maxOptionLen {
				c.Add(fmt.Sprintf("%s.options[%d]", path, j), "an option has at most %d bytes", maxOptionLen)
			}
		}
		if (f.Type == "relation" || f.Type == "relations") && !colls[f.Collection] {
			c.Add(path+".collection", "no collection %q in this project", f.Collection)
		}
	}
	ids := map[string]string{}
	for i, r := range col.Records {
		rp := fmt.Sprintf("%s.records[%d]", cp, i)
		if !recordIDRe.MatchString(r.ID) {
			c.Add(rp+".id", "must be 1-128 letters, digits, ., - or _")
		} else {
			c.Unique(ids, r.ID, rp, "record id")
		}
		for name, v := range r.Data {
			f, ok := fields[name]
			if !ok {
				c.Add(rp+".data."+name, "no field %q in collection %s", name, col.Name)
				continue
			}
			if msg := CheckValue(f, v); msg != "" {
				c.Add(rp+".data."+name, "%s", msg)
			}
		}
	}
}

func (sec collectionsSection) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var cols []Collection
	if err := tenancy.Decode(raw, &cols); err != nil {
		return err
	}
	tw := newTxWriter(w.Txn, sec.stripe())
	for _, col := range cols {
		recs := col.Records
		col.Records = nil
		old, err := w.Txn.Get(collKey(w.Project, col.Name))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := w.Put(collKey(w.Project, col.Name), "collection", col.Name, col); err != nil {
			return err
		}
		if old != nil && fieldsChanged(old, col.Fields) {
			// Its stored records are re-derived after the commit (tasks.go).
			if err := recordTask(w.Txn, w.Project, col.Name); err != nil {
				return err
			}
		}
		sch := compileSchema(w.Project, col)
		for _, r := range recs {
			if err := sec.record(w, tw, sch, r); err != nil {
				return err
			}
		}
	}
	return tw.flush()
}

// record applies one document record: its document copy, and (when that changed) the record in
// the product's store with its indexes.
func (collectionsSection) record(w *tenancy.Writer, tw *txWriter, sch *Schema, r DocRecord) error {
	k := docKey(w.Project, sch.Name, r.ID)
	dc := docCopy{ID: r.ID, Published: r.Published, Data: r.Data, CreatedAt: w.Now, UpdatedAt: w.Now}
	if dc.Data == nil {
		dc.Data = map[string]any{}
	}
	if raw, err := w.Txn.Get(k); err == nil {
		var prev docCopy
		if json.Unmarshal(raw, &prev) == nil {
			dc.CreatedAt = prev.CreatedAt
			// Same content: keep the stored UpdatedAt so the value (and the report) is unchanged.
			a, _ := json.Marshal(prev.Data)
			b, _ := json.Marshal(dc.Data)
			if prev.Published == dc.Published && string(a) == string(b) {
				dc.UpdatedAt = prev.UpdatedAt
			}
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	changed, err := w.PutChanged(k, "record", sch.Name+"/"+r.ID, dc)
	if err != nil || !changed {
		return err
	}
	created, _ := time.Parse(time.RFC3339Nano, dc.CreatedAt)
	updated, _ := time.Parse(time.RFC3339Nano, dc.UpdatedAt)
	_, err = tw.put(w.Project, sch.Name, sch, buildRecord(sch, dc.ID, dc.Published, dc.Data, created, updated))
	return err
}

func (sec collectionsSection) Prune(w *tenancy.Writer) error {
	// A deleted collection's data goes after the commit (tasks.go).
	err := w.Prune(collRoot, "collection", tenancy.ProjectLevel, nil, func(project, name string, _ []byte) error {
		return recordTask(w.Txn, project, name)
	})
	if err != nil {
		return err
	}
	tw := newTxWriter(w.Txn, sec.stripe())
	err = w.Prune(docRoot, "record", tenancy.ProjectLevel, nil, func(project, name string, _ []byte) error {
		coll, id, _ := strings.Cut(name, "/")
		sch, err := schemaIn(w.Txn, project, coll)
		if err != nil {
			return err
		}
		_, err = tw.del(project, coll, sch, id)
		return err
	})
	if err != nil {
		return err
	}
	return tw.flush()
}

// schemaIn reads a collection's schema inside txn; nil when the collection is gone (its index
// entries go with it).
func schemaIn(txn *store.Txn, project, coll string) (*Schema, error) {
	raw, err := txn.Get(collKey(project, coll))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Collection
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return compileSchema(project, c), nil
}

// readCollection reads a collection definition, or ErrCollectionNotFound.
func (s *Service) readCollection(ctx context.Context, project, name string) (Collection, error) {
	var c Collection
	err := s.db.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(collKey(project, name))
		if errors.Is(err, store.ErrNotFound) {
			return ErrCollectionNotFound
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &c)
	})
	return c, err
}

// eachCollection calls fn for every collection of every project, in key order.
func (s *Service) eachCollection(ctx context.Context, fn func(project string, c Collection) error) error {
	type pc struct {
		project string
		c       Collection
	}
	var all []pc
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: collRoot}, func(k, v []byte) (bool, error) {
			project, _, _ := strings.Cut(string(k[len(collRoot):]), string(store.Sep))
			var c Collection
			if err := json.Unmarshal(v, &c); err != nil {
				return false, err
			}
			all = append(all, pc{project, c})
			return true, nil
		})
	})
	if err != nil {
		return err
	}
	for _, x := range all {
		if err := fn(x.project, x.c); err != nil {
			return err
		}
	}
	return nil
}

// Changed implements tenancy.Owner: after an apply committed, cached schemas, projects and the
// records it wrote are forgotten, the collection tasks it recorded run (indexes of collections
// whose fields changed are rebuilt, the data of deleted collections is dropped: tasks.go), and
// the title index catches up.
func (s *Service) Changed(ctx context.Context, changes []journal.Change) {
	s.schemas.Changed(ctx, changes)
	s.projects.Changed(ctx, changes)
	var keys []string
	for _, c := range changes {
		if c.Kind == "record" {
			coll, id, _ := strings.Cut(c.Name, "/")
			keys = append(keys, string(recKey(c.Project, coll, id)))
		}
	}
	s.invalidate(keys)
	local := false
	for _, c := range changes {
		if c.Kind != "collection" {
			continue
		}
		if c.Remote {
			// The node that made it (edge/bus) runs its tasks in the shared store: doing that
			// again here would race its rebuild. This node only forgets the records it holds,
			// and drops a deleted collection's titles from its own title index (the store's
			// deletion of the records journals nothing; a rebuild journals every record).
			s.invalidate(nil)
			if c.Op == "deleted" {
				if err := s.dropTitles(c.Project, c.Name); err != nil {
					s.log.Error("records: drop a deleted collection's titles", "collection", c.Path(), "err", err)
				}
			}
			continue
		}
		local = true
	}
	if local {
		if err := s.runTasks(ctx); err != nil {
			s.log.Error("records: collection tasks failed; the next apply or start runs them again", "err", err)
		}
	}
	s.drainTitles(ctx)
}

// fieldsChanged reports whether a stored collection definition has other fields than fields.
func fieldsChanged(oldRaw []byte, fields []CollectionField) bool {
	var a struct {
		Fields []CollectionField `json:"fields"`
	}
	if jsonUnmarshal(oldRaw, &a) != nil {
		return true
	}
	x, _ := jsonMarshal(a.Fields)
	y, _ := jsonMarshal(fields)
	return string(x) != string(y)
}

// CheckValue checks one record value against its field definition; "" means valid.
func CheckValue(f CollectionField, v any) string {
	if v == nil {
		return ""
	}
	switch f.Type {
	case "text", "email", "url", "date":
		if _, ok := v.(string); !ok {
			return fmt.Sprintf("%s field needs a string", f.Type)
		}
	case "relation":
		if s, ok := v.(string); !ok || !recordIDRe.MatchString(s) {
			return "relation field needs a record id (" + recordIDRule + ")"
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
			if f.Type == "relations" && !recordIDRe.MatchString(s) {
				return "every element must be a record id (" + recordIDRule + ")"
			}
		}
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
