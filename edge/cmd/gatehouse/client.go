package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apiclient"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// adminClient talks to a running server's admin API through edge/apiclient, the client
// generated from the OpenAPI document the server serves, so the CLI's requests and the answers
// it reads are the contract's.
type adminClient struct {
	api *apiclient.ClientWithResponses
}

// clientFlags adds --server and --token to fs, defaulting from the environment. The function it
// returns builds the client once the flags are parsed; it fails without an admin token.
func clientFlags(fs *flag.FlagSet, env []string) func() (*adminClient, error) {
	// The environment is read after parsing, not shown as a default: --help must not print
	// the admin token.
	server := fs.String("server", "", "server base URL (default $GATEHOUSE_SERVER or http://localhost:8787)")
	token := fs.String("token", "", "admin token (default $GATEHOUSE_ADMIN_TOKEN)")
	return func() (*adminClient, error) {
		s, tok := *server, *token
		if s == "" {
			s = envOr(env, "GATEHOUSE_SERVER", "http://localhost:8787")
		}
		if tok == "" {
			tok = envOr(env, "GATEHOUSE_ADMIN_TOKEN", "")
		}
		if tok == "" {
			return nil, fmt.Errorf("an admin token is required: --token or GATEHOUSE_ADMIN_TOKEN")
		}
		api, err := apiclient.NewClientWithResponses(strings.TrimRight(s, "/"),
			apiclient.WithHTTPClient(&http.Client{Timeout: 10 * time.Minute}),
			apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
				req.Header.Set("Authorization", "Bearer "+tok)
				return nil
			}))
		if err != nil {
			return nil, fmt.Errorf("--server %q: %w", s, err)
		}
		return &adminClient{api: api}, nil
	}
}

func envOr(env []string, name, def string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name && v != "" {
			return v
		}
	}
	return def
}

// answered returns the typed body of a successful answer: an *apiError for a status of 300
// or more (its envelope decoded), an error when a 2xx answer lacks the documented body.
// resp and raw are the generated response's HTTPResponse and Body, out its typed 2xx field.
func answered[T any](resp *http.Response, raw []byte, out *T) (*T, error) {
	if err := refused(resp, raw); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("%s %s: %d answer without the documented JSON body", resp.Request.Method, adminPath(resp), resp.StatusCode)
	}
	return out, nil
}

// refused turns an answer of 300 or more into an *apiError; nil for a success.
func refused(resp *http.Response, raw []byte) error {
	if resp.StatusCode < 300 {
		return nil
	}
	e := &apiError{Method: resp.Request.Method, Path: adminPath(resp), Status: resp.StatusCode}
	if json.Unmarshal(raw, e) != nil || e.Message == "" {
		e.Message = strings.TrimSpace(string(raw))
	}
	return e
}

// adminPath is the request's path below /admin/v1, as errors show it.
func adminPath(resp *http.Response) string {
	if _, p, ok := strings.Cut(resp.Request.URL.Path, "/admin/v1"); ok {
		return p
	}
	return resp.Request.URL.Path
}

// apiError is an error answer of the admin API.
type apiError struct {
	Method, Path string
	Status       int
	Code         string `json:"error"`
	Message      string `json:"message"`
	Details      []struct {
		Field   string `json:"field"`
		Problem string `json:"problem"`
		Line    int    `json:"line"`
	} `json:"details"`
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%s %s: %d %s %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// inFile renders the problems of a refused document as "file:line: path: problem" lines.
func (e *apiError) inFile(file string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: the server refused the document (%d %s)", file, e.Status, e.Code)
	for _, d := range e.Details {
		b.WriteString("\n  " + file + ":")
		if d.Line > 0 {
			fmt.Fprintf(&b, "%d:", d.Line)
		}
		fmt.Fprintf(&b, " %s: %s", d.Field, d.Problem)
	}
	return b.String()
}

func applyCmd(ctx context.Context, args []string, stdout io.Writer, env []string) error {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	file := fs.String("f", "", "tenants document (YAML or JSON), - for stdin")
	client := clientFlags(fs, env)
	setUsage(fs, stdout, "  gatehouse apply -f FILE [--server URL] [--token T]\n\nApplies a tenants document to a running server through its admin API.", clientEnv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return fmt.Errorf("apply needs -f FILE")
	}
	var raw []byte
	var err error
	if *file == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(*file)
	}
	if err != nil {
		return err
	}
	ac, err := client()
	if err != nil {
		return err
	}
	res, err := ac.api.ApplyTenantsWithBodyWithResponse(ctx, "application/yaml", bytes.NewReader(raw))
	if err != nil {
		return err
	}
	rep, err := answered(res.HTTPResponse, res.Body, res.JSON200)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) && len(ae.Details) > 0 {
			return errors.New(ae.inFile(*file))
		}
		return err
	}
	if !rep.Changed {
		fmt.Fprintf(stdout, "no change (%d entities unchanged)\n", rep.Unchanged)
	}
	for _, c := range deref(rep.Changes) {
		fmt.Fprintf(stdout, "%s %s %s\n", c.Op, c.Kind, c.Path)
	}
	for _, g := range deref(rep.GeneratedKeys) {
		fmt.Fprintf(stdout, "generated key %s (shown once): %s\n", keyLabel(g.Org, deref(g.Project), g.Name), g.Value)
	}
	secrets := make([]tenancy.GeneratedSecret, 0, len(deref(rep.GeneratedSecrets)))
	for _, g := range deref(rep.GeneratedSecrets) {
		secrets = append(secrets, tenancy.GeneratedSecret{Org: deref(g.Org), Project: deref(g.Project), Kind: g.Kind, Name: g.Name, Value: g.Value})
	}
	printSecrets(stdout, secrets)
	return nil
}

func keysCmd(ctx context.Context, args []string, stdout io.Writer, env []string) error {
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	org := fs.String("org", "", "organization slug")
	project := fs.String("project", "", "project id (empty for an org-only key)")
	name := fs.String("name", "", "key name (generated when empty; required to revoke)")
	products := fs.String("products", "", "comma-separated products: email,files,forms,membership,records")
	kind := fs.String("kind", "", "publishable, secret or test")
	client := clientFlags(fs, env)
	setUsage(fs, stdout, keysSynopsis, clientEnv)
	switch sub {
	case "create", "revoke":
	case "-h", "--help", "-help", "help":
		fs.Usage()
		return flag.ErrHelp
	default:
		return fmt.Errorf("usage: gatehouse keys create|revoke ... (see gatehouse keys --help)")
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *org == "" {
		return fmt.Errorf("--org is required")
	}
	if sub == "revoke" {
		if *name == "" {
			return fmt.Errorf("--name is required")
		}
		ac, err := client()
		if err != nil {
			return err
		}
		var resp *http.Response
		var raw []byte
		if *project == "" {
			res, err := ac.api.RevokeOrgKeyWithResponse(ctx, *org, *name)
			if err != nil {
				return err
			}
			resp, raw = res.HTTPResponse, res.Body
		} else {
			res, err := ac.api.RevokeProjectKeyWithResponse(ctx, *org, *project, *name)
			if err != nil {
				return err
			}
			resp, raw = res.HTTPResponse, res.Body
		}
		if err := refused(resp, raw); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", keyLabel(*org, *project, *name))
		return nil
	}
	var list []string
	for _, p := range strings.Split(*products, ",") {
		if p = strings.TrimSpace(p); p != "" {
			list = append(list, p)
		}
	}
	ac, err := client()
	if err != nil {
		return err
	}
	res, err := ac.api.CreateKeyWithResponse(ctx, apiclient.CreateKeyJSONRequestBody{
		Org: org, Project: optional(*project), Name: optional(*name),
		Kind: optional(apiclient.CreateKeyJSONBodyKind(*kind)), Products: &list,
	})
	if err != nil {
		return err
	}
	out, err := answered(res.HTTPResponse, res.Body, res.JSON201)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", out.Value)
	fmt.Fprintf(os.Stderr, "key %s created; the value above is shown once and cannot be read again\n", keyLabel(out.Org, deref(out.Project), out.Name))
	return nil
}

// optional is v as an optional field of a request: nil for the zero value.
func optional[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// deref is the value of an optional field of an answer, or its zero value.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
