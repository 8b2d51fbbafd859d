package records

import (
	"context"
	"strconv"
	"strings"
)

// output is how records of one response are rendered: the fields= selection and the
// populate= relations, with their target schemas.
type output struct {
	secret  bool
	sel     map[string]bool            // nil: every field
	nested  map[string]map[string]bool // relation field -> selection of its populated records
	targets map[string]*Schema         // populated relation field -> readable target (nil: none)
	project string
}

// newOutput checks populate and fields against the schema. Private fields are unknown to a
// publishable key here (VALIDATION_FAILED, the same as a name that does not exist).
func (s *Service) newOutput(ctx context.Context, sch *Schema, secret bool, populate, fieldsSel string) (*output, error) {
	o := &output{secret: secret, project: sch.Project}
	visible := func(name string) *Field {
		f := sch.userField(name)
		if f == nil || (f.Private && !secret) {
			return nil
		}
		return f
	}
	if populate != "" {
		o.targets = map[string]*Schema{}
		var names []string
		if strings.TrimSpace(populate) == "*" {
			for _, f := range sch.Fields {
				if f.Relation() && (!f.Private || secret) {
					names = append(names, f.Name)
				}
			}
		} else {
			names = strings.Split(populate, ",")
		}
		for _, n := range names {
			n = strings.TrimSpace(n)
			f := visible(n)
			if f == nil || !f.Relation() {
				return nil, validation("populate", strconv.Quote(n)+" is not a relation field")
			}
			t, err := s.readable(ctx, sch.Project, f.Target, secret)
			if err != nil {
				t = nil // a hidden or missing target populates as null / nothing
			}
			o.targets[n] = t
		}
	}
	if fieldsSel != "" {
		o.sel = map[string]bool{}
		for _, n := range strings.Split(fieldsSel, ",") {
			n = strings.TrimSpace(n)
			if n == "" || n == fieldID {
				continue
			}
			top, sub, dotted := strings.Cut(n, ".")
			if top == fieldCreatedAt || top == fieldUpdatedAt {
				if dotted {
					return nil, validation("fields", strconv.Quote(n)+" is not a field")
				}
				o.sel[top] = true
				continue
			}
			f := visible(top)
			if f == nil {
				return nil, validation("fields", strconv.Quote(n)+" is not a field")
			}
			o.sel[top] = true
			if dotted {
				if !f.Relation() {
					return nil, validation("fields", strconv.Quote(n)+": only relations have nested fields")
				}
				if o.nested == nil {
					o.nested = map[string]map[string]bool{}
				}
				if o.nested[top] == nil {
					o.nested[top] = map[string]bool{}
				}
				o.nested[top][sub] = true
			}
		}
	}
	return o, nil
}

// render renders recs, populating relations with one batch of reads per relation field
// (getBatch targets at a time).
func (o *output) render(rd *recReader, recs []*record) ([][]byte, error) {
	out := make([][]byte, 0, len(recs))
	if o.sel == nil && o.targets == nil {
		for _, r := range recs {
			out = append(out, r.json(o.secret))
		}
		return out, nil
	}
	var pop populated
	if len(o.targets) > 0 {
		pop = populated{}
		for field, target := range o.targets {
			if o.sel != nil && !o.sel[field] {
				continue
			}
			byID := map[string][]byte{}
			pop[field] = byID
			if target == nil {
				continue
			}
			// The page's distinct targets of the field, read in one batch (getAll: one round
			// trip on a shared store).
			var ids []string
			seen := map[string]bool{}
			for _, r := range recs {
				for _, id := range relationIDs(r, field) {
					if !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
			for len(ids) > 0 {
				n := min(len(ids), getBatch)
				ts, err := rd.getAll(o.project, target.Name, ids[:n])
				if err != nil {
					return nil, err
				}
				for i, t := range ts {
					if t == nil || !t.published {
						continue
					}
					if sub := o.nested[field]; sub != nil {
						byID[ids[i]] = renderFields(t, o.secret, sub, nil)
					} else {
						byID[ids[i]] = t.json(o.secret)
					}
				}
				ids = ids[n:]
			}
		}
	}
	for _, r := range recs {
		out = append(out, renderFields(r, o.secret, o.sel, pop))
	}
	return out, nil
}
