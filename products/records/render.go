package records

import (
	"encoding/json"
	"strings"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// populated holds, per populated relation field, the rendered target records by id; a target
// that is missing, unpublished or not visible is absent.
type populated map[string]map[string][]byte

// renderFields writes a record's JSON: id, its fields in definition order, createdAt, updatedAt.
// Private fields are left out unless secret; sel (nil = all) narrows the fields; pop replaces
// relation references by populated records.
func renderFields(r *record, secret bool, sel map[string]bool, pop populated) []byte {
	n := 16 + len(r.id)
	for _, s := range r.segs {
		n += len(s.name) + len(s.raw) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, `{"id":`...)
	b = appendJSONString(b, r.id)
	for _, s := range r.segs {
		if s.private && !secret {
			continue
		}
		if sel != nil && !sel[s.name] {
			continue
		}
		b = append(b, ',', '"')
		b = append(b, s.name...)
		b = append(b, '"', ':')
		targets, ok := pop[s.name]
		if !ok {
			b = append(b, s.raw...)
			continue
		}
		ids := relationIDs(r, s.name)
		if len(s.raw) > 0 && s.raw[0] == '[' {
			b = append(b, '[')
			first := true
			for _, id := range ids {
				if t, ok := targets[id]; ok {
					if !first {
						b = append(b, ',')
					}
					first = false
					b = append(b, t...)
				}
			}
			b = append(b, ']')
			continue
		}
		if len(ids) == 1 {
			if t, ok := targets[ids[0]]; ok {
				b = append(b, t...)
				continue
			}
		}
		b = append(b, "null"...)
	}
	return append(b, '}')
}

// relationIDs returns the target ids of a relation field of r, in stored order.
func relationIDs(r *record, field string) []string {
	encs := r.values(field)
	out := make([]string, 0, len(encs))
	for _, e := range encs {
		if len(e) > 0 && e[0] == fields.TagString {
			if v, err := fields.Decode(e); err == nil {
				out = append(out, v.(string))
			}
		}
	}
	return out
}

func appendJSONString(b []byte, s string) []byte {
	if !strings.ContainsAny(s, "\"\\<>&") && isPlainASCII(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s)
	return append(b, q...)
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}
