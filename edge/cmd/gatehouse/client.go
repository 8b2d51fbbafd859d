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

	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// adminClient talks to a running server's admin API.
type adminClient struct {
	server, token string
	http          *http.Client
}

// clientFlags adds --server and --token to fs, defaulting from the environment.
func clientFlags(fs *flag.FlagSet, env []string) func() *adminClient {
	// The environment is read after parsing, not shown as a default: --help must not print
	// the admin token.
	server := fs.String("server", "", "server base URL (default $GATEHOUSE_SERVER or http://localhost:8787)")
	token := fs.String("token", "", "admin token (default $GATEHOUSE_ADMIN_TOKEN)")
	return func() *adminClient {
		s, tok := *server, *token
		if s == "" {
			s = envOr(env, "GATEHOUSE_SERVER", "http://localhost:8787")
		}
		if tok == "" {
			tok = envOr(env, "GATEHOUSE_ADMIN_TOKEN", "")
		}
		return &adminClient{server: strings.TrimRight(s, "/"), token: tok, http: &http.Client{Timeout: 10 * time.Minute}}
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

// do sends one admin request and decodes a JSON answer into out (when not nil).
func (c *adminClient) do(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	if c.token == "" {
		return fmt.Errorf("an admin token is required: --token or GATEHOUSE_ADMIN_TOKEN")
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+"/admin/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		e := &apiError{Method: method, Path: path, Status: resp.StatusCode}
		_ = json.Unmarshal(raw, e)
		if e.Message == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return e
	}
	if out != nil && len(raw) > 0 {
		return json.Unmarshal(raw, out)
	}
	return nil
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
	var rep struct {
		Changed   bool `json:"changed"`
		Created   int  `json:"created"`
		Updated   int  `json:"updated"`
		Deleted   int  `json:"deleted"`
		Unchanged int  `json:"unchanged"`
		Changes   []struct {
			Op, Kind, Path string
		} `json:"changes"`
		Generated []struct{ Org, Project, Name, Value string } `json:"generatedKeys"`
		Secrets   []tenancy.GeneratedSecret                    `json:"generatedSecrets"`
	}
	if err := client().do(ctx, http.MethodPost, "/apply", "application/yaml", bytes.NewReader(raw), &rep); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && len(ae.Details) > 0 {
			return errors.New(ae.inFile(*file))
		}
		return err
	}
	if !rep.Changed {
		fmt.Fprintf(stdout, "no change (%d entities unchanged)\n", rep.Unchanged)
	}
	for _, c := range rep.Changes {
		fmt.Fprintf(stdout, "%s %s %s\n", c.Op, c.Kind, c.Path)
	}
	for _, g := range rep.Generated {
		fmt.Fprintf(stdout, "generated key %s (shown once): %s\n", keyLabel(g.Org, g.Project, g.Name), g.Value)
	}
	printSecrets(stdout, rep.Secrets)
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
		path := "/orgs/" + *org + "/keys/" + *name
		if *project != "" {
			path = "/orgs/" + *org + "/projects/" + *project + "/keys/" + *name
		}
		if err := client().do(ctx, http.MethodDelete, path, "", nil, nil); err != nil {
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
	body, _ := json.Marshal(map[string]any{"org": *org, "project": *project, "name": *name, "kind": *kind, "products": list})
	var out struct{ Org, Project, Name, Value string }
	if err := client().do(ctx, http.MethodPost, "/keys", "application/json", bytes.NewReader(body), &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n", out.Value)
	fmt.Fprintf(os.Stderr, "key %s created; the value above is shown once and cannot be read again\n", keyLabel(out.Org, out.Project, out.Name))
	return nil
}
