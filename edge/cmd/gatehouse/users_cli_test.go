package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
)

// signIn posts a sign-in to a running gatehouse and returns the status.
func signIn(t *testing.T, url, email, password string) int {
	t.Helper()
	resp, err := http.Post(url+"/admin/v1/session", "application/json",
		strings.NewReader(`{"email":"`+email+`","password":"`+password+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// gatehouse users create, against a running server and into a stopped node's store.
func TestUsersCreateCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cfg := emptyConfig(t, data)
	p := startProc(t, "--data", data, "--config", cfg, "--tenants", "../../../configs/demo.tenants.yaml")
	env := []string{"GATEHOUSE_SERVER=" + p.url, "GATEHOUSE_ADMIN_TOKEN=restart-token"}
	users := func(stdin string, args ...string) (int, string) {
		var out bytes.Buffer
		err := usersCmd(context.Background(), append([]string{"create"}, args...), strings.NewReader(stdin), &out, env)
		if err != nil {
			return 1, err.Error()
		}
		return 0, out.String()
	}
	if code, out := users("owner password\r\n", "--email", "Owner@Acme.test", "--org", "acme", "--role", "owner"); code != 0 || !strings.Contains(out, "owner@acme.test (owner of acme)") {
		t.Fatalf("users create --server = %d %q", code, out)
	}
	if got := signIn(t, p.url, "owner@acme.test", "owner password"); got != 200 {
		t.Errorf("sign-in as the created owner = %d", got)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"no password", "", []string{"--email", "x@acme.test", "--org", "acme"}, "standard input"},
		{"org and operator", "pw pw pw pw\n", []string{"--email", "x@acme.test", "--org", "acme", "--operator"}, "--org or --operator"},
		{"taken", "pw pw pw pw\n", []string{"--email", "owner@acme.test", "--org", "acme"}, "409"},
		{"unknown org", "pw pw pw pw\n", []string{"--email", "y@acme.test", "--org", "nope"}, "404"},
	} {
		if code, out := users(tc.stdin, tc.args...); code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: users create = %d %q, want an error with %q", tc.name, code, out, tc.want)
		}
	}
	var help bytes.Buffer
	if code := run(context.Background(), []string{"users", "--help"}, &help, &help, env); code != 0 || !strings.Contains(help.String(), "-operator") || !strings.Contains(help.String(), "standard input") {
		t.Errorf("users --help = %d %q", code, help.String())
	}
	// While the node runs, its store is locked.
	if code, _ := users("operator password\n", "--email", "op@example.test", "--operator", "--data", data); code == 0 {
		t.Errorf("users create --data on a running node succeeded")
	}
	p.stop(t)
	if code, out := users("operator password\n", "--email", "op@example.test", "--operator", "--data", data); code != 0 {
		t.Fatalf("users create --data = %d %q", code, out)
	}
	p2 := startProc(t, "--data", data, "--config", cfg)
	if got := signIn(t, p2.url, "op@example.test", "operator password"); got != 200 {
		t.Errorf("sign-in as the operator created offline = %d", got)
	}
	if got := signIn(t, p2.url, "owner@acme.test", "owner password"); got != 200 {
		t.Errorf("sign-in as the owner after restart = %d", got)
	}
	p2.stop(t)
}
