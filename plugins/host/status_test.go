package host

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCheckRegistersNothing(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	good := Registration{Project: "demo", Name: "noop", Module: mods["noop"], Hooks: []string{HookFormsSubmit}}
	if err := h.Check(ctx, good); err != nil {
		t.Errorf("Check(noop) = %v, want nil", err)
	}
	cases := []struct {
		name string
		r    Registration
		want error
	}{
		{"no memory", Registration{Project: "demo", Name: "x", Module: []byte("\x00asm\x01\x00\x00\x00"), Hooks: []string{HookFormsSubmit}}, ErrInvalidModule},
		{"fetch without allowHosts", Registration{Project: "demo", Name: "x", Module: mods["fetcher"], Hooks: []string{HookFormsSubmit}}, ErrInvalidModule},
		{"bad allowHosts", Registration{Project: "demo", Name: "x", Module: mods["noop"], Hooks: []string{HookFormsSubmit}, AllowHosts: []string{"*.com"}}, ErrInvalidRegistration},
		{"memory over ceiling", Registration{Project: "demo", Name: "x", Module: mods["noop"], Hooks: []string{HookFormsSubmit}, Limits: Limits{MemoryMB: 256}}, ErrInvalidRegistration},
	}
	for _, tc := range cases {
		if err := h.Check(ctx, tc.r); !errors.Is(err, tc.want) {
			t.Errorf("Check(%s) = %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := h.CheckModule(ctx, "demo", mods["fetcher"]); err != nil {
		t.Errorf("CheckModule(fetcher) = %v, want nil (allowHosts is the registration's)", err)
	}
	if err := h.CheckModule(ctx, "demo", []byte("\x00asm\x01\x00\x00\x00")); !errors.Is(err, ErrInvalidModule) {
		t.Errorf("CheckModule(no memory) = %v, want ErrInvalidModule", err)
	}
	if names := h.Plugins("demo"); len(names) != 0 {
		t.Errorf("after checks the project has plugins %v, want none", names)
	}
}

func TestRefusedPluginFollowsItsPolicy(t *testing.T) {
	h := newHost(t, nil)
	ctx := context.Background()
	mustRegister(t, h, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}})
	reason := errors.New("module has not been uploaded")
	if err := h.Refuse(ctx, Registration{Project: "demo", Name: "noop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed}, reason); err != nil {
		t.Fatal(err)
	}
	_, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi"))
	if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrPluginFailed) {
		t.Errorf("FormsSubmit with a refused fail-closed plugin = %v, want ErrRefused", err)
	}
	st := h.Status("demo")
	if len(st) != 1 || st[0].Status != StatusRefused || !strings.Contains(st[0].LastError, "not been uploaded") ||
		st[0].Calls != 1 || st[0].Errors[KindRefused] != 1 {
		t.Errorf("Status = %+v, want noop refused with one refused call", st)
	}
	lines, ok := h.LogLines("demo", "noop", 10)
	if !ok || len(lines) == 0 || !strings.Contains(lines[len(lines)-1].Text, "plugin refused: module has not been uploaded") {
		t.Errorf("LogLines = %+v, %v; want the refusal first", lines, ok)
	}

	// Fail-open: the refused plugin is skipped. A captcha verifier defaults to closed.
	if err := h.Refuse(ctx, Registration{Project: "demo", Name: "noop", Hooks: []string{HookFormsSubmit, "bogus"}}, reason); err != nil {
		t.Fatal(err)
	}
	if v, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi")); err != nil || v.Action != Allow {
		t.Errorf("FormsSubmit with a refused fail-open plugin = %+v, %v; want allow", v, err)
	}
	if err := h.Refuse(ctx, Registration{Project: "demo", Name: "cap", Hooks: []string{HookCaptchaVerify}}, reason); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.CaptchaVerify(ctx, "demo", "cap", "tok", "203.0.113.9"); ok || !errors.Is(err, ErrRefused) {
		t.Errorf("CaptchaVerify of a refused verifier = %v, %v; want false, ErrRefused", ok, err)
	}
	// Registering again brings it back.
	mustRegister(t, h, Registration{Name: "noop", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed})
	if v, err := h.FormsSubmit(ctx, "demo", "contact", msg("hi")); err != nil || v.Action != Allow {
		t.Errorf("FormsSubmit after registering again = %+v, %v; want allow", v, err)
	}
	if st := h.Status("demo"); st[0].Status != StatusRunning || st[0].Calls != 1 {
		t.Errorf("Status after registering again = %+v, want running with its own count", st[0])
	}
}

func TestStatusCountsErrorsByKind(t *testing.T) {
	h := newHost(t, func(o *Options) { o.BreakerThreshold = 2 })
	mustRegister(t, h, Registration{Name: "trap", Hooks: []string{HookFormsSubmit}, OnError: OnErrorClosed})
	ctx := context.Background()
	for range 3 {
		_, _ = h.FormsSubmit(ctx, "demo", "contact", msg("trap"))
	}
	st := h.Status("demo")
	if len(st) != 1 || st[0].Calls != 3 || st[0].Errors[KindTrap] != 2 || st[0].Errors[KindCircuitOpen] != 1 ||
		st[0].Status != StatusDisabled || !strings.Contains(st[0].LastError, "circuit") {
		t.Errorf("Status after 2 traps and an open circuit = %+v", st)
	}
	if _, ok := h.LogLines("demo", "nope", 10); ok {
		t.Errorf("LogLines of an unknown plugin: ok, want not found")
	}
	if st := h.Status("nope"); st == nil || len(st) != 0 {
		t.Errorf("Status of an unknown project = %#v, want empty", st)
	}
}
