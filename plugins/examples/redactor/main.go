//go:build wasip1

// Command redactor is a records.read filter: it removes the configured
// fields from every record of a page, and from the records populated inside
// it (relations), at any depth.
//
// Config: fields (comma-separated names, e.g. "email,internalNote").
package main

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

var fields map[string]bool

func init() {
	pdk.OnRecordsRead(func(p pdk.Page) ([][]byte, error) {
		if fields == nil {
			fields = map[string]bool{}
			for _, f := range strings.Split(pdk.ConfigOr("fields", ""), ",") {
				if f = strings.TrimSpace(f); f != "" {
					fields[f] = true
				}
			}
		}
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
