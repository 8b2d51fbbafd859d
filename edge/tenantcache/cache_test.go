package tenantcache_test

import (
	"context"
	"testing"
	"unsafe"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
)

// A value read before an invalidation is handed to its reader but never cached after it.
func TestCacheFillRacingChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := tenantcache.New[string](0, "form")
	v, err := c.Get(ctx, "p", "f", func(context.Context) (string, error) {
		// The apply commits and its change arrives while this read is under way.
		c.Changed(ctx, []journal.Change{{Op: "updated", Kind: "form", Project: "p", Name: "f"}})
		return "old", nil
	})
	if err != nil || v != "old" {
		t.Fatalf("Get = %q, %v", v, err)
	}
	v, _ = c.Get(ctx, "p", "f", func(context.Context) (string, error) { return "new", nil })
	if v != "new" {
		t.Errorf("Get after a racing change = %q, want the fresh read (the old one was cached)", v)
	}
}

func TestCacheChangeScopes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := tenantcache.New[int](0, "form", "captcha")
	reads := 0
	load := func(context.Context) (int, error) { reads++; return reads, nil }
	for _, k := range [][2]string{{"p", "a"}, {"p", "b"}, {"q", "a"}} {
		_, _ = c.Get(ctx, k[0], k[1], load)
	}
	for _, tc := range []struct {
		name   string
		change journal.Change
		gone   [][2]string
	}{
		{"other kind", journal.Change{Kind: "template", Project: "p", Name: "a"}, nil},
		{"one entry", journal.Change{Kind: "form", Project: "p", Name: "a"}, [][2]string{{"p", "a"}}},
		{"whole project", journal.Change{Kind: "captcha", Project: "p"}, [][2]string{{"p", "a"}, {"p", "b"}}},
	} {
		before := c.Len()
		c.Changed(ctx, []journal.Change{tc.change})
		for _, k := range tc.gone {
			n := reads
			_, _ = c.Get(ctx, k[0], k[1], load)
			if reads == n {
				t.Errorf("%s: entry %v still cached", tc.name, k)
			}
		}
		if tc.gone == nil && c.Len() != before {
			t.Errorf("%s: dropped entries (%d -> %d)", tc.name, before, c.Len())
		}
	}
}

// Keys are copied: a caller's string that views reused memory (a route parameter) may change
// after the call without moving the entry.
func TestCacheCopiesKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := tenantcache.New[string](0, "form")
	buf := []byte("slug1")
	name := unsafe.String(&buf[0], len(buf))
	_, _ = c.Get(ctx, "p", name, func(context.Context) (string, error) { return "v1", nil })
	copy(buf, "slug2") // the server reuses the memory for the next request
	c.Changed(ctx, []journal.Change{{Kind: "form", Project: "p", Name: "slug1"}})
	v, _ := c.Get(ctx, "p", "slug1", func(context.Context) (string, error) { return "v2", nil })
	if v != "v2" {
		t.Errorf("Get(slug1) after its change = %q, want v2", v)
	}
}
