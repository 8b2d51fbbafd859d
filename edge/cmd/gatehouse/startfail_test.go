package main

import (
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/index/title"
)

// TestServeClosesListenerWhenStartFails: serve listens before its components start; when one
// fails to start (here the records component, whose title index cannot be rebuilt from a
// record it cannot read), serve returns the error and the address answers nothing more: the
// listener is closed by serve itself (the test process lives on), and the address can be
// bound again. What serve opened is closed too: the title index (the records service's) and
// the badger store open again, which their locks forbid while a holder has them open.
func TestServeClosesListenerWhenStartFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := store.Open(store.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(context.Background(), func(txn *store.Txn) error {
		return txn.Set(store.Key("records", "r", "demo", "posts", "unreadable"), []byte{0xee, 0x01})
	})
	if cerr := db.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()

	done := make(chan error, 1)
	go func() {
		done <- serve(context.Background(), []string{"--listen", addr, "--data", dir}, io.Discard, io.Discard, []string{"GATEHOUSE_LOG_LEVEL=error"})
	}()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not return after a failed start")
	}
	if err == nil || !strings.Contains(err.Error(), "records") {
		t.Fatalf("serve = %v, want the records component's start error", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s still accepts connections after serve returned", addr)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("%s cannot be bound again: %v", addr, err)
	}
	_ = ln.Close()
	titles, err := title.Open(filepath.Join(dir, "title.bleve"))
	if err != nil {
		t.Fatalf("the title index after serve returned: %v (the records service was not closed)", err)
	}
	if err := titles.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = store.Open(store.Options{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatalf("the store after serve returned: %v (serve did not close it)", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
