//go:build wasip1

// Command redactor keeps the configured fields out of what leaves the
// gateway. As a records.read filter it removes them from every record of a
// page, and from the records populated inside it (relations), at any depth.
// As an email.send filter it masks the template variables of those names
// before the template is rendered, and tags the email "redacted".
//
// Config: fields (comma-separated names, e.g. "email,internalNote"), mask
// (what a masked variable becomes, default "[redacted]").
package main

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

var fields map[string]bool

func load() {
	if fields != nil {
		return
	}
	fields = map[string]bool{}
	for _, f := range strings.Split(pdk.ConfigOr("fields", ""), ",") {
		if f = strings.TrimSpace(f); f != "" {
			fields[f] = true
		}
	}
}

func init() {
	pdk.OnEmailSend(func(e pdk.Email) pdk.Verdict {
		load()
		vars := map[string]any{}
		masked := false
		e.Doc.Get("variables").Members(func(k string, v pdk.Value) bool {
			if fields[k] {
				vars[k], masked = pdk.ConfigOr("mask", "[redacted]"), true
			} else {
				vars[k] = json.RawMessage(v.Raw())
			}
			return true
		})
		if !masked {
			return pdk.Allow()
		}
		var tags []string
		e.Doc.Get("tags").Elements(func(_ int, t pdk.Value) bool {
			tags = append(tags, t.Text())
			return true
		})
		if !slices.Contains(tags, "redacted") {
			tags = append(tags, "redacted")
		}
		return pdk.RewriteEmail(vars, tags)
	})
	pdk.OnRecordsRead(func(p pdk.Page) ([][]byte, error) {
		load()
		if len(fields) == 0 {
			return nil, nil // nothing to redact: page unchanged
		}
		var out [][]byte
		p.Records.Elements(func(_ int, rec pdk.Value) bool {
			out = append(out, redact(nil, rec))
			return true
		})
		return out, nil
	})
}

// redact appends v to dst with the configured members removed from every
// object inside it.
func redact(dst []byte, v pdk.Value) []byte {
	switch v.Kind() {
	case pdk.Object:
		dst = append(dst, '{')
		first := true
		v.Members(func(k string, m pdk.Value) bool {
			if fields[k] {
				return true
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = pdk.AppendString(dst, k)
			dst = append(dst, ':')
			dst = redact(dst, m)
			return true
		})
		return append(dst, '}')
	case pdk.Array:
		dst = append(dst, '[')
		v.Elements(func(i int, e pdk.Value) bool {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = redact(dst, e)
			return true
		})
		return append(dst, ']')
	default:
		return append(dst, v.Raw()...)
	}
}

func main() {}
