package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/gatehouse-dev/gatehouse/edge/egress"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
	"github.com/gatehouse-dev/gatehouse/plugins/pdk"
)

// The plugin author's loop (decisions.md 8.5): `gatehouse plugins init` writes a plugin
// folder that builds offline, `gatehouse plugins run` runs a module in the same host, with
// the same limits, as the server does, and prints what the gateway would see.

// The synopses of the plugins subcommands, as their --help prints them.
const (
	pluginsRunSynopsis  = "  gatehouse plugins run MODULE --hook HOOK --input FILE|- [--config k=v]... [--allow-host H]..."
	pluginsInitSynopsis = "  gatehouse plugins init DIR [--hook HOOK] [--module PATH]"
)

func pluginsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("plugins needs a subcommand: run or init")
	}
	switch args[0] {
	case "run":
		return pluginsRun(ctx, args[1:], stdout, stderr)
	case "init":
		return pluginsInit(args[1:], stdout, stderr)
	case "-h", "--help", "-help", "help":
		fmt.Fprintf(stdout, "Usage:\n%s\n%s\n\n'gatehouse plugins run --help' and 'gatehouse plugins init --help' list their flags.\n",
			pluginsRunSynopsis, pluginsInitSynopsis)
		return flag.ErrHelp
	}
	return fmt.Errorf("plugins: unknown subcommand %q (run or init)", args[0])
}

// parseWithArgs parses fs from args, allowing flags before and after the positional
// arguments (the standard flag package stops at the first one), and returns those.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// keyValues is a repeatable k=v flag.
type keyValues map[string]string

func (kv keyValues) String() string { return fmt.Sprint(map[string]string(kv)) }

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", s)
	}
	kv[k] = v
	return nil
}

// repeated is a repeatable string flag.
type repeated []string

func (r *repeated) String() string { return strings.Join(*r, ",") }

func (r *repeated) Set(s string) error {
	*r = append(*r, s)
	return nil
}

// hookInput is every hook's input document (docs/plugins.md, "Documents"); each hook reads
// its own members.
type hookInput struct {
	Project    string            `json:"project"`
	Form       string            `json:"form"`
	Data       map[string]any    `json:"data"`
	Collection string            `json:"collection"`
	Records    []json.RawMessage `json:"records"`
	Email      *host.EmailInput  `json:"email"`
	Token      string            `json:"token"`
	RemoteIP   string            `json:"remoteIP"`
}

func pluginsRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("plugins run", flag.ContinueOnError)
	flags.SetOutput(stderr)
	setUsage(flags, stdout, pluginsRunSynopsis, nil)
	hook := flags.String("hook", "", "the hook to call: forms.submit, records.read, email.send or captcha.verify")
	inputFile := flags.String("input", "", "the hook's input document (JSON, as docs/plugins.md shows it), - for stdin")
	name := flags.String("name", "", "the plugin's name (default: the module's file name)")
	memoryMB := flags.Int("memory-mb", 0, fmt.Sprintf("limits.memoryMB (default %d)", host.DefaultMemoryMB))
	timeoutMs := flags.Int("timeout-ms", 0, fmt.Sprintf("limits.timeoutMs (default %d)", host.DefaultTimeoutMs))
	config := keyValues{}
	flags.Var(config, "config", "a config value, key=value (repeatable)")
	var allowHosts repeated
	flags.Var(&allowHosts, "allow-host", "an allowHosts entry for http_fetch (repeatable)")
	allowPrivate := flags.Bool("allow-private-networks", false, "let http_fetch reach loopback and private addresses, as egress.allow_private_networks does for the gateway")
	pos, err := parseWithArgs(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *hook == "" || *inputFile == "" {
		return errors.New("usage: gatehouse plugins run MODULE --hook HOOK --input FILE [--config k=v]... [--allow-host H]... [--allow-private-networks] [--memory-mb N] [--timeout-ms N]")
	}
	module := pos[0]
	wasm, err := os.ReadFile(module)
	if err != nil {
		return err
	}
	raw, err := readFileOrStdin(*inputFile)
	if err != nil {
		return err
	}
	var in hookInput
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("input %s: %w", *inputFile, err)
	}
	if dec.More() {
		return fmt.Errorf("input %s: more than one JSON document", *inputFile)
	}
	if in.Project == "" {
		in.Project = "demo"
	}
	if *name == "" {
		*name = pluginFileName(module)
	}

	opts := host.DefaultOptions()
	// http_fetch runs under the gateway's egress policy: public addresses only, unless
	// --allow-private-networks.
	opts.Egress = egress.New(egress.Options{AllowPrivateNetworks: *allowPrivate})
	opts.Log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})) // failed calls are printed as the verdict
	h, err := host.New(opts)
	if err != nil {
		return err
	}
	defer h.Close()
	// Fail closed, so that a failed call is reported rather than skipped.
	err = h.Register(ctx, host.Registration{
		Project: in.Project, Name: *name, Module: wasm, Hooks: []string{*hook}, OnError: host.OnErrorClosed,
		AllowHosts: allowHosts, Config: config, Limits: host.Limits{MemoryMB: *memoryMB, TimeoutMs: *timeoutMs},
	})
	if err != nil {
		return fmt.Errorf("the host refuses %s: %w", module, err)
	}

	verdict, output, callErr := callHook(ctx, h, *hook, *name, in)
	if callErr != nil {
		fmt.Fprintf(stdout, "verdict: failed: %v\n", callErr)
	} else {
		fmt.Fprintf(stdout, "verdict: %s\n", verdict)
		if output != nil {
			fmt.Fprintf(stdout, "output:  %s\n", output)
		}
	}
	logs := h.Logs(in.Project, *name)
	fmt.Fprintf(stdout, "log:     %d line(s)\n", len(logs))
	for _, l := range logs {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	if callErr != nil {
		return errors.New("the plugin call failed")
	}
	return nil
}

// callHook calls one hook of the registered plugin and describes the outcome: a one-line
// verdict and the output document as the host understood it (nil when there is none).
func callHook(ctx context.Context, h *host.Host, hook, name string, in hookInput) (string, []byte, error) {
	switch hook {
	case host.HookFormsSubmit:
		v, err := h.FormsSubmit(ctx, in.Project, in.Form, in.Data)
		if err != nil {
			return "", nil, err
		}
		return filterOutcome(string(v.Action), v.Code, v.Message, map[string]any{"data": v.Data})
	case host.HookEmailSend:
		if in.Email == nil {
			return "", nil, errors.New(`the input has no "email"`)
		}
		v, err := h.EmailSend(ctx, in.Project, *in.Email)
		if err != nil {
			return "", nil, err
		}
		return filterOutcome(string(v.Action), v.Code, v.Message, map[string]any{"variables": v.Variables, "tags": v.Tags})
	case host.HookRecordsRead:
		recs, err := h.RecordsRead(ctx, in.Project, in.Collection, in.Records)
		if err != nil {
			return "", nil, err
		}
		out, err := json.Marshal(map[string]any{"records": recs})
		verdict := "unchanged"
		if !bytes.Equal(out, mustJSON(map[string]any{"records": in.Records})) {
			verdict = "rewritten"
		}
		return verdict, out, err
	case host.HookCaptchaVerify:
		ok, err := h.CaptchaVerify(ctx, in.Project, name, in.Token, in.RemoteIP)
		if err != nil {
			return "", nil, err
		}
		verdict := "failure (the token is refused)"
		if ok {
			verdict = "success (the token is accepted)"
		}
		return verdict, mustJSON(map[string]bool{"success": ok}), nil
	}
	return "", nil, fmt.Errorf("unknown hook %q", hook)
}

// filterOutcome describes a filter's verdict (forms.submit, email.send).
func filterOutcome(action, code, message string, rewrite map[string]any) (string, []byte, error) {
	switch action {
	case string(host.Reject):
		return fmt.Sprintf("reject %s %q", code, message), mustJSON(map[string]string{"action": action, "code": code, "message": message}), nil
	case string(host.Rewrite):
		rewrite["action"] = action
		return "rewrite", mustJSON(rewrite), nil
	}
	return "allow", nil, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of JSON values reach here
	}
	return b
}

func readFileOrStdin(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(name)
}

//go:embed plugintemplate
var pluginTemplate embed.FS

// pluginFolder is what the templates of plugintemplate/ are rendered with.
type pluginFolder struct {
	Name     string // file and plugin name: NAME.wasm
	Module   string // the Go module path
	Hook     string
	RunFlags string // what `make run` adds to `gatehouse plugins run`
	Version  string // the gatehouse that wrote the folder
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9_-]+`)

// pluginFileName turns a module's file name into a plugin and file name: lower case
// letters, digits, - and _ ("My Filter.wasm" is my-filter), "plugin" when nothing is left.
func pluginFileName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	name := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(base), "-"), "-_")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return "plugin"
	}
	return name
}

func pluginsInit(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("plugins init", flag.ContinueOnError)
	flags.SetOutput(stderr)
	setUsage(flags, stdout, pluginsInitSynopsis, nil)
	hook := flags.String("hook", host.HookFormsSubmit, "the hook the plugin serves: forms.submit, records.read, email.send or captcha.verify")
	module := flags.String("module", "", "the Go module path (default: the folder's name)")
	pos, err := parseWithArgs(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("usage: gatehouse plugins init DIR [--hook HOOK] [--module PATH]")
	}
	dir := pos[0]
	if !validHook(*hook) {
		return fmt.Errorf("unknown hook %q: forms.submit, records.read, email.send or captcha.verify", *hook)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	f := pluginFolder{Name: pluginFileName(abs + ".wasm"), Hook: *hook, Version: version}
	f.Module = *module
	if f.Module == "" {
		f.Module = f.Name
	}
	if *hook == host.HookCaptchaVerify {
		f.RunFlags = "--config token=letmein"
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty", dir)
	}

	files := map[string][]byte{}
	render := func(tmpl, out string) error {
		src, err := fs.ReadFile(pluginTemplate, "plugintemplate/"+tmpl)
		if err != nil {
			return err
		}
		t, err := template.New(tmpl).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, f); err != nil {
			return err
		}
		files[out] = b.Bytes()
		return nil
	}
	for tmpl, out := range map[string]string{
		"go.mod.tmpl":                "go.mod",
		"Makefile.tmpl":              "Makefile",
		"gitignore.tmpl":             ".gitignore",
		*hook + "/main.go.tmpl":      "main.go",
		*hook + "/main_test.go.tmpl": "main_test.go",
		*hook + "/input.json.tmpl":   "testdata/input.json",
	} {
		if err := render(tmpl, out); err != nil {
			return err
		}
	}
	// The PDK itself, without its own tests: the folder's go.mod replaces the PDK's module
	// path with this copy.
	err = fs.WalkDir(pdk.Source, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := fs.ReadFile(pdk.Source, p)
		files[path.Join("gatehouse-pdk", p)] = b
		return err
	})
	if err != nil {
		return err
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, `wrote a %s plugin to %s (Go module %s, the PDK in gatehouse-pdk/)
next:
  cd %s
  make test    # vet, and the handler's tests run natively
  make         # builds %s.wasm
  make run     # %s
`, f.Hook, dir, f.Module, dir, f.Name, strings.TrimSpace(fmt.Sprintf("gatehouse plugins run %s.wasm --hook %s --input testdata/input.json %s", f.Name, f.Hook, f.RunFlags)))
	return nil
}

func validHook(h string) bool {
	switch h {
	case host.HookFormsSubmit, host.HookRecordsRead, host.HookEmailSend, host.HookCaptchaVerify:
		return true
	}
	return false
}
