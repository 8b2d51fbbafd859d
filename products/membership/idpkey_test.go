package membership_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/membership"
)

// TestCheckIdpKey covers the apply-time check of a connection's identity provider key
// (membership.CheckIdpKey): prefix, base64 of "<frontend host>$" with or without padding, and a
// decoded host equal to the instance domain or below it.
func TestCheckIdpKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, key, domain string
		ok                bool
		errHas            string
	}{
		{"test key, unpadded", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "clerk.example.com", true, ""},
		{"live key, unpadded", "pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA", "clerk.next.example", true, ""},
		{"live key, padded", "pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA==", "clerk.next.example", true, ""},
		{"frontend host below the domain", "pk_live_Y2xlcmsubmV4dC5leGFtcGxlJA", "next.example", true, ""},
		{"other host", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "clerk.other.example", false, "does not match idpInstanceDomain"},
		{"domain is only a suffix of a label", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "ample.com", false, "does not match"},
		{"host is the parent of the domain", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "x.clerk.example.com", false, "does not match"},
		{"secret key", "sk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "clerk.example.com", false, "must start with pk_test_ or pk_live_"},
		{"gateway key shape", "pk_live_demo_web", "clerk.example.com", false, ""},
		{"not base64", "pk_test_!!!!", "clerk.example.com", false, "is not base64"},
		{"no dollar", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20", "clerk.example.com", false, ""},
		{"only a dollar", "pk_test_JA", "clerk.example.com", false, "does not decode"},
		{"empty after prefix", "pk_test_", "clerk.example.com", false, ""},
		{"empty key", "", "clerk.example.com", false, "must start with"},
		{"no domain", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "", false, "needs idpInstanceDomain"},
		{"domain with a scheme", "pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "https://clerk.example.com", false, "does not match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := membership.CheckIdpKey(tc.key, tc.domain)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckIdpKey(%q, %q) = %v, want ok=%v", tc.key, tc.domain, err, tc.ok)
			}
			if err != nil && tc.errHas != "" && !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("CheckIdpKey(%q, %q) = %q, want it to mention %q", tc.key, tc.domain, err, tc.errHas)
			}
		})
	}
}

// TestCheckIdpKeyHostChecks: the decoded host must be a host name, and hosts compare
// without regard to case.
func TestCheckIdpKeyHostChecks(t *testing.T) {
	t.Parallel()
	// base64("evil.test#.clerk.example.com$"): Clerk would load clerk-js from https://evil.test.
	if err := membership.CheckIdpKey("pk_live_ZXZpbC50ZXN0Iy5jbGVyay5leGFtcGxlLmNvbSQ", "clerk.example.com"); err == nil {
		t.Errorf("CheckIdpKey accepts a key whose decoded host is evil.test#.clerk.example.com")
	}
	if err := membership.CheckIdpKey("pk_test_Y2xlcmsuZXhhbXBsZS5jb20k", "Clerk.Example.com"); err != nil {
		t.Errorf("CheckIdpKey refuses a domain that differs only in case: %v", err)
	}
}

// TestApplyRefusesMismatchedIdpKey applies a connection whose key points at another host,
// through the service and the admin API: refused with the path of the bad entry, and the
// served answer stays the old one.
func TestApplyRefusesMismatchedIdpKey(t *testing.T) {
	t.Parallel()
	h := start(t)
	bad := `
orgs:
  - slug: acme
    projects:
      - id: demo
        membership:
          connections:
            - {name: main, active: false, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: clerk.example.com}
            - {name: next, active: true, idpPublishableKey: pk_test_Y2xlcmsuZXhhbXBsZS5jb20k, idpInstanceDomain: auth.other.example}
`
	const path = "orgs[0].projects[0].membership.connections[1].idpPublishableKey"
	doc, err := tenancy.Parse([]byte(bad))
	if err == nil {
		err = h.Tenancy.Validate(doc)
	}
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Validate(mismatched key) = %v, want an error naming %s", err, path)
	}
	r := h.Admin("POST", "/apply", bad)
	if r.Status != 400 || r.Code() != "VALIDATION_FAILED" {
		t.Fatalf("POST /admin/v1/apply (mismatched key) = %d %s, want 400 VALIDATION_FAILED", r.Status, r.Body)
	}
	var body struct {
		Details []struct{ Field, Problem string } `json:"details"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if len(body.Details) != 1 || body.Details[0].Field != path || !strings.Contains(body.Details[0].Problem, "auth.other.example") {
		t.Errorf("details = %+v, want one problem at %s naming the domain", body.Details, path)
	}
	got := h.Do("GET", "/membership/config", nil, "X-API-Key", "pk_live_demo_web")
	if got.Status != 200 || !strings.Contains(string(got.Body), `"idpInstanceDomain":"clerk.example.com"`) {
		t.Errorf("after a refused apply: %d %s, want the old connection", got.Status, got.Body)
	}
	// Two active connections are refused as well.
	two := strings.Replace(bad, "auth.other.example", "clerk.example.com", 1)
	two = strings.Replace(two, "active: false", "active: true", 1)
	if r := h.Admin("POST", "/apply", two); r.Status != 400 || !strings.Contains(string(r.Body), "only one connection may be active") {
		t.Errorf("POST /admin/v1/apply (two active) = %d %s, want 400 naming the rule", r.Status, r.Body)
	}
}
