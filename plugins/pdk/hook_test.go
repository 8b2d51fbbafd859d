//go:build !wasip1

package pdk

import (
	"encoding/json"
	"testing"
)

func TestFormSubmitHook(t *testing.T) {
	OnFormSubmit(func(s Submission) Verdict {
		if s.Form != "contact" {
			return Reject("WRONG_FORM", s.Form)
		}
		if s.Field("message").Text() == "spam" {
			return Reject("SPAM_DETECTED", "no \"spam\"")
		}
		return Allow()
	})
	testInput = []byte(`{"project":"demo","form":"contact","data":{"message":"spam"}}`)
	testOutput = nil
	if code := runFormSubmit(); code != codeOK {
		t.Fatalf("runFormSubmit = %d", code)
	}
	var out map[string]string
	if err := json.Unmarshal(testOutput, &out); err != nil || out["action"] != "reject" || out["code"] != "SPAM_DETECTED" || out["message"] != `no "spam"` {
		t.Errorf("output = %s (%v)", testOutput, err)
	}
	testInput = []byte(`{"project":"demo","form":"contact","data":{"message":"hello"}}`)
	testOutput = nil
	if code := runFormSubmit(); code != codeOK || len(testOutput) != 0 {
		t.Errorf("allow: code %d, output %q; want 0 and empty", code, testOutput)
	}
}
