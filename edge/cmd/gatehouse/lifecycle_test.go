package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/module"
	"github.com/gatehouse-dev/gatehouse/index/title"
	"github.com/gatehouse-dev/gatehouse/plugins/host"
)

// fakeComponent records its lifecycle calls.
type fakeComponent struct {
	name     string
	startErr error
	log      *[]string
}

func (f *fakeComponent) Start(context.Context) error {
	*f.log = append(*f.log, "start "+f.name)
	return f.startErr
}

func (f *fakeComponent) Stop(context.Context) error {
	*f.log = append(*f.log, "stop "+f.name)
	return nil
}

// /readyz answers 503 until every component started; a failed start leaves it so.
func TestAssemblyReadyOnlyAfterStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var log []string
	a := &assembly{components: []module.Component{&fakeComponent{name: "a", log: &log}, &fakeComponent{name: "b", log: &log}}}
	if err := a.ready(); !errors.Is(err, errStarting) {
		t.Fatalf("ready() before start = %v, want errStarting", err)
	}
	if err := a.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.ready(); err != nil {
		t.Errorf("ready() after start = %v", err)
	}
	if err := a.stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(log, ","), "start a,start b,stop b,stop a"; got != want {
		t.Errorf("lifecycle = %s, want %s", got, want)
	}

	boom := errors.New("boom")
	failing := &assembly{components: []module.Component{&fakeComponent{name: "a", log: &log}, &fakeComponent{name: "b", startErr: boom, log: &log}}}
	if err := failing.start(ctx); !errors.Is(err, boom) {
		t.Fatalf("start = %v, want boom", err)
	}
	if err := failing.ready(); !errors.Is(err, errStarting) {
		t.Errorf("ready() after a failed start = %v, want errStarting", err)
	}
}

// sickComponent is a component whose Healthy answers what health holds.
type sickComponent struct {
	fakeComponent
	health error
}

func (s *sickComponent) Healthy() error { return s.health }

// /readyz answers 503 again while a started component reports itself unhealthy (module.Healthy),
// and ready once it recovers; components without Healthy take no part.
func TestAssemblyReadyFollowsHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var log []string
	sick := &sickComponent{fakeComponent: fakeComponent{name: "worker", log: &log}}
	a := &assembly{components: []module.Component{&fakeComponent{name: "a", log: &log}, sick}}
	if err := a.start(ctx); err != nil {
		t.Fatal(err)
	}
	down := errors.New("email: the store refuses the queue scan")
	for _, tc := range []struct {
		name   string
		health error
		want   error
	}{
		{"healthy", nil, nil},
		{"failing after start", down, down},
		{"recovered", nil, nil},
	} {
		sick.health = tc.health
		if err := a.ready(); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("%s: ready() = %v, want %v", tc.name, err, tc.want)
		}
	}
}

// close undoes what was opened, newest first (wire calls it when a step fails).
func TestAssemblyCloseReverse(t *testing.T) {
	t.Parallel()
	var log []string
	a := &assembly{}
	for _, n := range []string{"plugins", "email", "records"} {
		a.closers = append(a.closers, func() error { log = append(log, n); return nil })
	}
	_ = a.close()
	if got, want := strings.Join(log, ","), "records,email,plugins"; got != want {
		t.Errorf("close order = %s, want %s", got, want)
	}
}

// TestFormsSpoolCleanedAfterListen: the forms service is a component. wire leaves the file
// parts an earlier run left in {data}/tmp/forms alone (the server may already take
// submissions, whose parts the cleanup must not touch), /readyz answers 503 until start, and
// start removes them.
func TestFormsSpoolCleanedAfterListen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	spool := filepath.Join(dir, "tmp", "forms")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(spool, "part-123")
	if err := os.WriteFile(stale, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := testDeps(t, dir, "127.0.0.1:0")
	t.Cleanup(func() { _ = d.db.Close() })
	app, err := wire(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = app.stop(ctx)
		_ = app.close()
	})
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("after wire the earlier run's part is gone (%v): the cleanup ran before the server listens", err)
	}
	if err := app.ready(); !errors.Is(err, errStarting) {
		t.Fatalf("ready() before start = %v, want errStarting", err)
	}
	if err := app.start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := app.ready(); err != nil {
		t.Errorf("ready() after start = %v", err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after start the earlier run's part is still there (%v), want removed", err)
	}
}

// TestLaunchStopsWhatStartedWhenAStartFails: when a component fails to start half-way, launch
// halts the server first (no request reaches a stopped component), then stops every component
// newest first, the ones that started and the one that failed (the later one never started,
// and its Stop tolerates that); /readyz keeps answering 503; close then releases what wire
// opened.
func TestLaunchStopsWhatStartedWhenAStartFails(t *testing.T) {
	t.Parallel()
	var log []string
	boom := errors.New("boom")
	a := &assembly{components: []module.Component{
		&fakeComponent{name: "bus", log: &log},
		&fakeComponent{name: "email", log: &log},
		&fakeComponent{name: "records", startErr: boom, log: &log},
		&fakeComponent{name: "late", log: &log},
	}}
	a.closers = append(a.closers, func() error { log = append(log, "close plugins"); return nil })
	halt := func(context.Context) error { log = append(log, "halt server"); return nil }
	if err := a.launch(context.Background(), halt, time.Second); !errors.Is(err, boom) {
		t.Fatalf("launch = %v, want the records component's start error", err)
	}
	if err := a.ready(); !errors.Is(err, errStarting) {
		t.Errorf("ready() after a failed start = %v, want errStarting", err)
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	want := "start bus,start email,start records,halt server,stop late,stop records,stop email,stop bus,close plugins"
	if got := strings.Join(log, ","); got != want {
		t.Errorf("lifecycle =\n %s\nwant\n %s", got, want)
	}

	// A signal while starting is no failure of launch: serve shuts down as after any signal.
	log = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a = &assembly{components: []module.Component{&fakeComponent{name: "bus", startErr: context.Canceled, log: &log}}}
	if err := a.launch(ctx, halt, time.Second); err != nil {
		t.Errorf("launch with a cancelled context = %v, want nil (the caller's shutdown follows)", err)
	}
	if got := strings.Join(log, ","); got != "start bus" {
		t.Errorf("lifecycle = %s, want start bus (the shutdown is the caller's)", got)
	}
}

// TestWireFailureClosesEarlierParts: a wiring step that fails half-way leaves nothing open.
// Here a step after every real one fails: the plugin host that the earlier steps opened is
// closed (it refuses work with host.ErrClosed), the records service closed its title index
// (the folder opens again; an index still open holds its lock), and wire returns the step's
// error.
func TestWireFailureClosesEarlierParts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d := testDeps(t, dir, "127.0.0.1:0")
	t.Cleanup(func() { _ = d.db.Close() })
	boom := errors.New("boom")
	var plugins *host.Host
	failing := func(_ *assembly, _ context.Context, d *deps) error {
		plugins = d.plugins
		// Open while wiring: the same call is refused for another reason than a closed host.
		if err := plugins.CheckModule(ctx, "demo", []byte("not wasm")); err == nil || errors.Is(err, host.ErrClosed) {
			t.Errorf("CheckModule on the open host = %v, want a refusal of the module", err)
		}
		return boom
	}
	app, err := build(ctx, d, append(steps(), failing)...)
	if !errors.Is(err, boom) || app != nil {
		t.Fatalf("build = %v, %v; want nil and the failing step's error", app, err)
	}
	if err := plugins.CheckModule(ctx, "demo", []byte("not wasm")); !errors.Is(err, host.ErrClosed) {
		t.Errorf("CheckModule after the failed wiring = %v, want host.ErrClosed (the host was closed)", err)
	}
	titles, err := title.Open(filepath.Join(dir, "title.bleve"))
	if err != nil {
		t.Fatalf("the title index after the failed wiring: %v (the records service did not close it)", err)
	}
	if err := titles.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStopBeforeStart: every real component's Stop tolerates a component that never started
// (launch stops them all after a failed start, serve after a signal during the start), and
// stop and close may each run twice.
func TestStopBeforeStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testDeps(t, t.TempDir(), "127.0.0.1:0")
	t.Cleanup(func() { _ = d.db.Close() })
	app, err := wire(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(app.components) < 5 {
		t.Fatalf("wire made %d components, want the workers of every product", len(app.components))
	}
	for i := range 2 {
		if err := app.stop(ctx); err != nil {
			t.Errorf("stop #%d of components that never started = %v", i+1, err)
		}
		if err := app.close(); err != nil {
			t.Errorf("close #%d = %v", i+1, err)
		}
	}
}
