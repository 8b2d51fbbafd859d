package secrets_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/secrets"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// A secret is created once, of the asked length, and read back unchanged after a reopen of the
// store (signatures survive restarts); another name gets another secret; the key is where
// earlier releases kept it.
func TestSecretSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := storetest.Open(t, store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	first, err := secrets.Get(ctx, db, "cursor-key", 32)
	if err != nil || len(first) != 32 {
		t.Fatalf("Get(cursor-key, 32) = %d bytes, %v; want 32", len(first), err)
	}
	other, err := secrets.Get(ctx, db, "upload-url-key", 32)
	if err != nil || bytes.Equal(first, other) {
		t.Fatalf("Get(upload-url-key) = %x, %v; want another secret", other, err)
	}
	if err := db.View(ctx, func(txn *store.Txn) error {
		v, err := txn.Get(store.Key("tenancy", "meta", "cursor-key"))
		if err == nil && !bytes.Equal(v, first) {
			t.Errorf("stored cursor-key = %x, want %x", v, first)
		}
		return err
	}); err != nil {
		t.Fatalf("the secret is not at its old key: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = storetest.Open(t, store.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	again, err := secrets.Get(ctx, db, "cursor-key", 32)
	if err != nil || !bytes.Equal(again, first) {
		t.Errorf("Get after a reopen = %x, %v; want %x", again, err, first)
	}
}
