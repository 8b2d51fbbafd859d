// Package yamldoc reads the operator's YAML documents (server config, tenants documents)
// strictly: YAML 1.2 (so JSON too, and `no`/`off` stay strings), through the JSON form so the
// same json struct tags serve both, with unknown keys refused.
package yamldoc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Decode decodes YAML 1.2 (so JSON too) into v through its JSON form, refusing unknown keys.
// YAML 1.2 keeps `no`, `n` and `off` strings, so record data and option lists mean what they say.
func Decode(data []byte, v any) error {
	var tree any
	if err := yaml.Unmarshal(data, &tree); err != nil {
		return err
	}
	tree, err := jsonable(tree)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// jsonable turns YAML's map[string]any / map[any]any trees into what encoding/json accepts.
func jsonable(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = c
		}
		return m, nil
	case []any:
		for i, e := range t {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	}
	return v, nil
}
