package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	a := &assembly{components: []component{&fakeComponent{name: "a", log: &log}, &fakeComponent{name: "b", log: &log}}}
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
	failing := &assembly{components: []component{&fakeComponent{name: "a", log: &log}, &fakeComponent{name: "b", startErr: boom, log: &log}}}
	if err := failing.start(ctx); !errors.Is(err, boom) {
		t.Fatalf("start = %v, want boom", err)
	}
	if err := failing.ready(); !errors.Is(err, errStarting) {
		t.Errorf("ready() after a failed start = %v, want errStarting", err)
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
