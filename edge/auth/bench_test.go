package auth

import (
	"context"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/apikey"
)

type oneKey struct{ k apikey.Key }

func (o oneKey) KeyByHash(_ context.Context, hash string) (apikey.Key, error) {
	if hash == o.k.Hash {
		return o.k, nil
	}
	return apikey.Key{}, apikey.ErrUnknownKey
}

// BenchmarkCheckCached measures the per-request cost of a cached key check.
func BenchmarkCheckCached(b *testing.B) {
	const value = "pk_live_demo_web"
	a := New(Options{Lookup: oneKey{apikey.Key{Hash: apikey.Hash(value), Org: "acme", Project: "demo", Kind: apikey.Publishable, Products: []string{"forms"}}}, Size: 100})
	ctx := context.Background()
	rule := Rule{Product: "forms", NeedProject: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Check(ctx, value, rule); err != nil {
			b.Fatal(err)
		}
	}
}

func TestCheckUsesCacheUntilPurge(t *testing.T) {
	t.Parallel()
	const value = "sk_live_server"
	lk := &countingLookup{k: apikey.Key{Hash: apikey.Hash(value), Org: "acme", Kind: apikey.Secret, Products: []string{"email"}}}
	a := New(Options{Lookup: lk, Size: 10})
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := a.Check(ctx, value, Rule{Product: "email", SecretOnly: true}); err != nil {
			t.Fatal(err)
		}
	}
	if lk.n != 1 {
		t.Errorf("lookups = %d, want 1 (cached)", lk.n)
	}
	a.Purge()
	_, _ = a.Check(ctx, value, Rule{Product: "email"})
	if lk.n != 2 {
		t.Errorf("lookups after Purge = %d, want 2", lk.n)
	}
}

type countingLookup struct {
	k apikey.Key
	n int
}

func (c *countingLookup) KeyByHash(_ context.Context, hash string) (apikey.Key, error) {
	c.n++
	if hash == c.k.Hash {
		return c.k, nil
	}
	return apikey.Key{}, apikey.ErrUnknownKey
}
