package main

import (
	"context"
	"errors"
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
		a.closers = append(a.closers, func(context.Context) error { log = append(log, n); return nil })
	}
	a.close(context.Background())
	if got, want := strings.Join(log, ","), "records,email,plugins"; got != want {
		t.Errorf("close order = %s, want %s", got, want)
	}
}
