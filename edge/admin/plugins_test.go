package admin_test

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
)

// Decisions 9.5: a plugin status carries every listed field; lastError and lastErrorAt are
// null when there is none, and the error's text and time when there is one.
func TestPluginStatusJSON(t *testing.T) {
	msg, at := "circuit open", "2026-11-28T08:00:00.000Z"
	cases := []struct {
		name            string
		st              admin.PluginStatus
		wantErr, wantAt string
	}{
		{"no error", admin.PluginStatus{Name: "p", Hooks: []string{"forms.submit"}, Status: "running", Errors: map[string]int64{}}, "null", "null"},
		{"refused, no call failed yet", admin.PluginStatus{Name: "p", Status: "refused", LastError: &msg}, `"circuit open"`, "null"},
		{"failed", admin.PluginStatus{Name: "p", Status: "disabled", LastError: &msg, LastErrorAt: &at}, `"circuit open"`, `"` + at + `"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.st)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"name", "hooks", "status", "lastError", "lastErrorAt", "calls", "errors"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s: no %q key", raw, k)
				}
			}
			if got := string(m["lastError"]); got != tc.wantErr {
				t.Errorf("lastError = %s, want %s", got, tc.wantErr)
			}
			if got := string(m["lastErrorAt"]); got != tc.wantAt {
				t.Errorf("lastErrorAt = %s, want %s", got, tc.wantAt)
			}
		})
	}
}
