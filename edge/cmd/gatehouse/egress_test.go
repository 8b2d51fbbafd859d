package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// One egress policy (decisions.md 8.3) for webhooks and plugins, in the real gateway. Without
// egress.allow_private_networks: a webhook endpoint on loopback (a name resolving there) is
// refused when the tenants document is applied, with its path; a plugin's http_fetch to a
// loopback address in its allowHosts is refused at connect time and the server is not
// reached. With it, the same fetch reaches the server. `gatehouse plugins run` fetches under
// the same policy, private networks allowed only with --allow-private-networks.
func TestEgressPolicyInTheGateway(t *testing.T) {
	t.Parallel()
	mods := hostileModules(t, "fetcher")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "fetched")
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	tenants := fmt.Sprintf(`orgs:
  - slug: acme
    projects:
      - id: site
        keys:
          - {name: web, value: pk_live_site_web, products: [forms]}
        forms:
          - {slug: contact, published: true, fields: [{name: message, type: text, required: true}]}
        plugins:
          - {name: fetcher, module: %q, hooks: [forms.submit], allowHosts: ["http://127.0.0.1:%s"]}
`, mods["fetcher"], u.Port())
	submit := fmt.Sprintf(`{"data":{"message":%q}}`, srv.URL+"/check")

	input := writeFile(t, t.TempDir(), "input.json", submit)
	for _, tc := range []struct {
		flags   []string
		verdict string
	}{
		{nil, `reject FETCH_DENIED`},
		{[]string{"--allow-private-networks"}, `reject FETCH_200 "fetched"`},
	} {
		before := hits.Load()
		args := append([]string{"plugins", "run", mods["fetcher"], "--hook", "forms.submit", "--input", input,
			"--allow-host", "http://127.0.0.1:" + u.Port()}, tc.flags...)
		if _, out, errOut := runCLI(t, args...); !strings.Contains(out, "verdict: "+tc.verdict) {
			t.Errorf("plugins run %v: %s %s; want verdict %s", tc.flags, out, errOut, tc.verdict)
		}
		if reached := hits.Load() > before; reached != (tc.flags != nil) {
			t.Errorf("plugins run %v: the loopback server reached = %v", tc.flags, reached)
		}
	}

	for _, tc := range []struct {
		name, env, want string
		reached         bool
	}{
		{"private networks refused", "GATEHOUSE_EGRESS_ALLOW_PRIVATE_NETWORKS=false", `"error":"FETCH_DENIED"`, false},
		{"private networks allowed", "GATEHOUSE_EGRESS_ALLOW_PRIVATE_NETWORKS=true", `"error":"FETCH_200"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			p := startProcEnv(t, []string{tc.env}, "--data", data, "--config", writeFile(t, data, "config.yaml", "{}\n"),
				"--tenants", writeFile(t, data, "tenants.yaml", tenants))
			before := hits.Load()
			code, body := do(t, "POST", p.url+"/forms/forms/contact/submit", "pk_live_site_web", submit)
			if code != 422 || !strings.Contains(body, tc.want) {
				t.Errorf("submission whose plugin fetches %s = %d %s, want 422 %s", srv.URL, code, body, tc.want)
			}
			if reached := hits.Load() > before; reached != tc.reached {
				t.Errorf("the loopback server reached = %v, want %v", reached, tc.reached)
			}
			if tc.reached {
				return
			}
			hook := strings.Replace(tenants, "        plugins:", "        webhooks:\n          - {name: main, url: \"http://localhost:"+u.Port()+"/in\", events: [form.submitted]}\n        plugins:", 1)
			code, raw := p.admin(t, "POST", "/apply", hook)
			if code != 400 || !strings.Contains(string(raw), "orgs[0].projects[0].webhooks[0].url") || !strings.Contains(string(raw), "egress") {
				t.Errorf("apply of a webhook to localhost without allow_private_networks = %d %s, want 400 at webhooks[0].url", code, raw)
			}
		})
	}
}
