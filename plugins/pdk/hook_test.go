//go:build !wasip1

package pdk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormSubmitHook(t *testing.T) {
	OnFormSubmit(func(s Submission) Verdict {
		if s.Form != "contact" {
			return Reject("WRONG_FORM", s.Form)
		}
		if s.Field("message").Text() == ConfigOr("word", "spam") {
			return Reject("SPAM_DETECTED", "no \"spam\"")
		}
		return Allow()
	})
	out, err := TestCall("forms.submit", `{"project":"demo","form":"contact","data":{"message":"spam"}}`, nil)
	var v map[string]string
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v["action"] != "reject" || v["code"] != "SPAM_DETECTED" || v["message"] != `no "spam"` {
		t.Errorf("TestCall(spam) = %s, %v; want a SPAM_DETECTED reject", out, err)
	}
	if out, err := TestCall("forms.submit", `{"project":"demo","form":"contact","data":{"message":"hello"}}`, nil); err != nil || out != "" {
		t.Errorf("TestCall(hello) = %q, %v; want empty output (allow)", out, err)
	}
	// Config is read through config_get and cached per instance; TestCall
	// starts each call with the config it is given.
	if out, _ := TestCall("forms.submit", `{"project":"demo","form":"contact","data":{"message":"ham"}}`, map[string]string{"word": "ham"}); !strings.Contains(out, "SPAM_DETECTED") {
		t.Errorf("TestCall with config word=ham = %q, want a reject", out)
	}
	if out, _ := TestCall("forms.submit", `{"project":"demo","form":"contact","data":{"message":"ham"}}`, nil); out != "" {
		t.Errorf("TestCall without config = %q: the previous call's config leaked", out)
	}
}

func TestHookErrors(t *testing.T) {
	handlers.captchaVerify = nil
	if _, err := TestCall("captcha.verify", `{"project":"demo","token":"t"}`, nil); err == nil || !strings.Contains(err.Error(), "no captcha.verify handler") {
		t.Errorf("TestCall without a handler: err = %v", err)
	}
	if _, err := TestCall("nope", `{}`, nil); err == nil {
		t.Errorf("TestCall of an unknown hook succeeded")
	}
	OnRecordsRead(func(p Page) ([][]byte, error) {
		var out [][]byte
		p.Records.Elements(func(_ int, r Value) bool {
			out = append(out, []byte(`{"id":`+string(r.Get("id").Raw())+`}`))
			return true
		})
		return out, nil
	})
	if out, err := TestCall("records.read", `{"project":"demo","collection":"c","records":[{"id":"a","x":1},{"id":"b"}]}`, nil); err != nil || out != `{"records":[{"id":"a"},{"id":"b"}]}` {
		t.Errorf("TestCall(records.read) = %s, %v", out, err)
	}
}
