package records

import (
	"bytes"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/index/fields"
)

// Filter operators (interface: in, gte, lte; decisions.md adds the rest).
var filterOps = map[string]bool{"eq": true, "ne": true, "gt": true, "lt": true, "gte": true,
	"lte": true, "in": true, "nin": true, "exists": true}

// Filter is one parsed `filter=<field>:<op>:<value>` parameter.
type Filter struct {
	Field string
	Op    string
	// Values are the encoded comparison values (one, or several for in and nin).
	Values [][]byte
	// Exists is the value of an exists filter.
	Exists bool
	f      *Field
}

// SortKey is one comma-separated part of `sort`.
type SortKey struct {
	Field string
	Desc  bool
}

// ParseFilter reads the raw form `<field>:<op>:<value>`. The value is everything after the
// second colon (so it may hold colons); in and nin split it on commas, and each value is
// percent-decoded after the split, so a comma inside a value is written %2C (%252C on the wire).
func ParseFilter(raw string) (field, op string, values []string, err error) {
	field, rest, ok := strings.Cut(raw, ":")
	if !ok || field == "" {
		return "", "", nil, invalidFilter("filter must be <field>:<op>:<value>, got " + strconv.Quote(raw))
	}
	op, value, ok := strings.Cut(rest, ":")
	if !ok && op != "exists" {
		return "", "", nil, invalidFilter("filter must be <field>:<op>:<value>, got " + strconv.Quote(raw))
	}
	if !filterOps[op] {
		return "", "", nil, invalidFilter("unknown filter operator " + strconv.Quote(op))
	}
	parts := []string{value}
	if op == "in" || op == "nin" {
		parts = strings.Split(value, ",")
	}
	for _, p := range parts {
		v, uerr := url.PathUnescape(p)
		if uerr != nil {
			return "", "", nil, invalidFilter("filter value " + strconv.Quote(p) + " is not valid percent-encoding")
		}
		values = append(values, v)
	}
	return field, op, values, nil
}

// compileFilter checks a filter against the schema and encodes its values by the field's type.
func compileFilter(s *Schema, raw string, secret bool) (Filter, error) {
	name, op, vals, err := ParseFilter(raw)
	if err != nil {
		return Filter{}, err
	}
	f := s.field(name)
	if f == nil || (!f.Indexed && f.Name != fieldID) {
		return Filter{}, invalidFilter("unknown or unfilterable field " + strconv.Quote(name))
	}
	if f.Private && !secret {
		return Filter{}, privateField(name)
	}
	flt := Filter{Field: name, Op: op, f: f}
	if op == "exists" {
		switch vals[0] {
		case "", "true":
			flt.Exists = true
		case "false":
		default:
			return Filter{}, invalidFilter("exists takes true or false")
		}
		return flt, nil
	}
	for _, v := range vals {
		enc, err := encodeQueryValue(f, v)
		if err != nil {
			return Filter{}, err
		}
		flt.Values = append(flt.Values, enc)
	}
	return flt, nil
}

func encodeQueryValue(f *Field, v string) ([]byte, error) {
	switch f.Type {
	case "number":
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
			// NaN and the infinities parse, but no stored number is one (JSON has none), and
			// NaN would compare as a number beyond every other in the index encoding.
			return nil, invalidFilter("field " + f.Name + " is a number; " + strconv.Quote(v) + " is not a finite number")
		}
		return fields.Number(n), nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return nil, invalidFilter("field " + f.Name + " is a boolean: use true or false")
		}
		return fields.Bool(b), nil
	case "date":
		t, ok := parseDate(v)
		if !ok {
			return nil, invalidFilter("field " + f.Name + " is a date: use RFC 3339 or YYYY-MM-DD")
		}
		return encodeTime(t), nil
	}
	return fields.String(v), nil
}

// key is the filter in a canonical form, for cursor scopes.
func (f *Filter) key() string {
	var b strings.Builder
	b.WriteString(f.Field)
	b.WriteByte(0)
	b.WriteString(f.Op)
	b.WriteByte(0)
	if f.Op == "exists" {
		b.WriteString(strconv.FormatBool(f.Exists))
	}
	vals := make([]string, len(f.Values))
	for i, v := range f.Values {
		vals[i] = string(v)
	}
	if f.Op == "in" || f.Op == "nin" {
		sort.Strings(vals)
	}
	for _, v := range vals {
		b.WriteString(strconv.Quote(v))
		b.WriteByte(',')
	}
	return b.String()
}

// rng is the index range an eq or comparison filter selects; ok is false for other operators.
func (f *Filter) rng() (fields.Range, bool) {
	if len(f.Values) == 0 {
		return fields.Range{}, false
	}
	v := f.Values[0]
	tag := []byte{v[0]}
	tagEnd := []byte{v[0] + 1}
	switch f.Op {
	case "eq":
		return fields.Eq(v), true
	case "gt":
		return fields.Range{Lo: fields.Bound{Value: v}, Hi: fields.Bound{Value: tagEnd}}, true
	case "gte":
		return fields.Range{Lo: fields.Bound{Value: v, Inclusive: true}, Hi: fields.Bound{Value: tagEnd}}, true
	case "lt":
		return fields.Range{Lo: fields.Bound{Value: tag, Inclusive: true}, Hi: fields.Bound{Value: v}}, true
	case "lte":
		return fields.Range{Lo: fields.Bound{Value: tag, Inclusive: true}, Hi: fields.Bound{Value: v, Inclusive: true}}, true
	}
	return fields.Range{}, false
}

// match evaluates the filter on a record's encoded values.
func (f *Filter) match(r *record) bool {
	var encs [][]byte
	if f.Field == fieldID {
		encs = [][]byte{fields.String(r.id)}
	} else {
		encs = r.values(f.Field)
	}
	has := false
	for _, e := range encs {
		if len(e) > 0 && e[0] != fields.TagNull {
			has = true
			break
		}
	}
	switch f.Op {
	case "exists":
		return has == f.Exists
	case "eq", "in":
		return anyIn(encs, f.Values)
	case "ne", "nin":
		return !anyIn(encs, f.Values)
	}
	// A comparison: values of the same type only (what rng selects), without building the range.
	v := f.Values[0]
	for _, e := range encs {
		if len(e) == 0 || e[0] != v[0] {
			continue
		}
		c := bytes.Compare(e, v)
		switch f.Op {
		case "gt":
			if c > 0 {
				return true
			}
		case "gte":
			if c >= 0 {
				return true
			}
		case "lt":
			if c < 0 {
				return true
			}
		case "lte":
			if c <= 0 {
				return true
			}
		}
	}
	return false
}

func anyIn(encs, vals [][]byte) bool {
	for _, e := range encs {
		for _, v := range vals {
			if bytes.Equal(e, v) {
				return true
			}
		}
	}
	return false
}

// parseSort reads `sort`: comma-separated fields, '-' for descending; default createdAt.
func parseSort(s *Schema, raw string, secret bool) ([]SortKey, error) {
	if raw == "" {
		return []SortKey{{Field: fieldCreatedAt}}, nil
	}
	var keys []SortKey
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		k := SortKey{Field: strings.TrimSpace(part)}
		if strings.HasPrefix(k.Field, "-") {
			k.Field, k.Desc = k.Field[1:], true
		} else if strings.HasPrefix(k.Field, "+") {
			k.Field = k.Field[1:]
		}
		f := s.field(k.Field)
		if f == nil || f.Array || (!f.Indexed && f.Name != fieldID) {
			return nil, invalidSort("field " + strconv.Quote(k.Field) + " is not sortable")
		}
		if f.Private && !secret {
			return nil, privateField(k.Field)
		}
		if seen[k.Field] {
			return nil, invalidSort("field " + strconv.Quote(k.Field) + " appears twice in sort")
		}
		seen[k.Field] = true
		keys = append(keys, k)
		if k.Field == fieldID {
			break // id is unique: later keys cannot matter
		}
	}
	return keys, nil
}
