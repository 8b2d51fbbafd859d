package pluginsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/pluginreg"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
)

// TestMain stops the private PostgreSQL server of GATEHOUSE_TEST_STORE=postgres after the tests.
func TestMain(m *testing.M) { storetest.Main(m) }

// buildSpamguard compiles plugins/examples/spamguard as plugin authors are told to.
func buildSpamguard(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "spamguard.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, ".")
	cmd.Dir = filepath.Join("..", "..", "..", "..", "..", "plugins", "examples", "spamguard")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building spamguard: %v\n%s", err, b)
	}
	return out
}

// rig is a tenancy service with the plugin registry, a real host and the Syncer between them,
// wired as serve wires them.
type rig struct {
	ten *tenancy.Service
	reg *pluginreg.Registry
	h   *host.Host
	s   *Syncer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	db, err := storetest.Open(t, store.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	reg := pluginreg.New(pluginreg.Options{DB: db, Tenancy: ten})
	if err := ten.Add(reg); err != nil {
		t.Fatal(err)
	}
	o := host.DefaultOptions()
	o.CacheDir = t.TempDir()
	h, err := host.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	s := New(h, reg, slog.New(slog.DiscardHandler))
	ten.OnChange(s.Changed)
	reg.CheckWith(s)
	return &rig{ten: ten, reg: reg, h: h, s: s}
}

// apply applies a document of org acme, project demo, with the given plugins list (YAML flow).
func (r *rig) apply(t *testing.T, plugins string) error {
	t.Helper()
	doc, err := r.ten.Parse([]byte(fmt.Sprintf("prune: true\norgs:\n  - slug: acme\n    projects:\n      - id: demo\n        plugins: %s\n", plugins)))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	_, err = r.ten.Apply(context.Background(), doc)
	return err
}

// statuses is the host's view of demo's plugins: name -> status (and the last error).
func (r *rig) statuses() map[string]string {
	out := map[string]string{}
	for _, st := range r.h.Status("demo") {
		out[st.Name] = st.Status
		if st.LastError != "" {
			out[st.Name] += ": " + st.LastError
		}
	}
	return out
}

// TestSyncFollowsTheDocument: the Syncer registers what the document lists, keeps a plugin
// whose upload is missing as refused (with why), refuses an unreadable module before the
// apply stores it, and unregisters what the document drops.
func TestSyncFollowsTheDocument(t *testing.T) {
	wasm := buildSpamguard(t)
	r := newRig(t)

	if err := r.apply(t, fmt.Sprintf(`[{name: spam, module: %q, hooks: [forms.submit], config: {blockedWords: casino}}]`, wasm)); err != nil {
		t.Fatalf("apply with spamguard: %v", err)
	}
	if got := r.statuses(); got["spam"] != host.StatusRunning || len(got) != 1 {
		t.Fatalf("after the apply: %v, want spam %s", got, host.StatusRunning)
	}

	// A module naming an upload that is not there: accepted, shown as refused with the reason.
	if err := r.apply(t, `[{name: later, module: notyet, hooks: [forms.submit]}]`); err != nil {
		t.Fatalf("apply naming a missing upload: %v", err)
	}
	got := r.statuses()
	if _, still := got["spam"]; still {
		t.Errorf("spam is still registered after the document dropped it: %v", got)
	}
	if !strings.HasPrefix(got["later"], host.StatusRefused) || !strings.Contains(got["later"], "has not been uploaded") {
		t.Errorf("later = %q, want refused, not uploaded", got["later"])
	}

	// An unreadable module path is refused before anything is stored.
	junk := filepath.Join(t.TempDir(), "junk.wasm")
	if err := os.WriteFile(junk, []byte("not wasm"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.apply(t, fmt.Sprintf(`[{name: junk, module: %q, hooks: [forms.submit]}]`, junk)); err == nil {
		t.Fatal("an apply with a module that is not Wasm was accepted")
	}
	if got := r.statuses(); len(got) != 1 || !strings.HasPrefix(got["later"], host.StatusRefused) {
		t.Errorf("after the refused apply: %v, want only later (refused)", got)
	}

	// SyncAll at start registers what is stored; a plugin registered as it is is not
	// registered twice (its fingerprint is unchanged).
	r.s.SyncAll(context.Background(), []string{"demo"})
	if got := r.statuses(); len(got) != 1 {
		t.Errorf("after SyncAll: %v", got)
	}
	if err := r.s.CheckPlugin(context.Background(), "demo", pluginreg.Plugin{Name: "x", Module: "notyet", Hooks: []string{"forms.submit"}}); err != nil {
		t.Errorf("CheckPlugin of a plugin naming a missing upload = %v, want nil (refused until uploaded)", err)
	}
	if err := r.s.CheckModule(context.Background(), "demo", "notyet", []byte("not wasm")); err == nil || errors.Is(err, errNotUploaded) {
		t.Errorf("CheckModule of bytes that are not Wasm = %v, want a refusal", err)
	}
}
