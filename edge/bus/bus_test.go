package bus_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/auth"
	"github.com/gatehouse-dev/gatehouse/edge/bus"
	"github.com/gatehouse-dev/gatehouse/edge/edgetest/storetest"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/redistest"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var ctx = context.Background()

const doc = `
orgs:
  - slug: acme
    name: Acme
    projects:
      - id: demo
        name: Demo
        keys:
          - {name: web, value: pk_live_bus_test_web, products: [forms]}
`

const webKey = "pk_live_bus_test_web"

// awaitLimit bounds a wait for an event that must come; it is a guard against a hang, not a
// measure (the latency is logged).
const awaitLimit = 30 * time.Second

// node is one gateway node as serve wires it: tenancy, the auth key cache purged on every
// change, and the bus (Publish on OnChange, Deliver into Notify).
type node struct {
	name   string
	ten    *tenancy.Service
	keys   *auth.Authenticator
	bus    *bus.Bus
	remote chan heard // the changes other nodes made, as this node's listeners hear them
}

func newNode(t *testing.T, name string, db *store.DB, rdb *redis.Client, channel string) *node {
	t.Helper()
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{name: name, ten: ten, remote: make(chan heard, 64)}
	n.keys = auth.New(auth.Options{Lookup: n.ten, Size: 100})
	n.ten.OnChange(func(context.Context, []journal.Change) { n.keys.Purge() })
	n.ten.OnChange(func(_ context.Context, cs []journal.Change) {
		if len(cs) > 0 && cs[0].Remote {
			n.remote <- heard{time.Now(), cs}
		}
	})
	b, err := bus.New(bus.Options{DB: db, Redis: rdb, Channel: channel, Node: name, Deliver: n.ten.Notify,
		Interval: 50 * time.Millisecond, Projects: func(ctx context.Context) ([]string, error) {
			ps, err := n.ten.Projects(ctx)
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID
			}
			return ids, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	n.ten.SetJournal(b.Append)
	n.ten.OnChange(b.Publish)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(ctx); err != nil {
			t.Errorf("%s: Stop: %v", name, err)
		}
	})
	n.bus = b
	return n
}

// await returns the next changes another node made, as this node's listeners heard them, and
// logs how long after since they came (when since is set: the time the change was made).
func (n *node) await(t *testing.T, what string, since ...time.Time) []journal.Change {
	t.Helper()
	select {
	case h := <-n.remote:
		if len(since) > 0 {
			t.Logf("%s heard %s %v after it was made", n.name, what, h.at.Sub(since[0]))
		}
		return h.changes
	case <-time.After(awaitLimit):
		t.Fatalf("%s never heard %s", n.name, what)
		return nil
	}
}

type heard struct {
	at      time.Time
	changes []journal.Change
}

func (n *node) check(t *testing.T) error {
	t.Helper()
	_, err := n.keys.Check(ctx, webKey, auth.Rule{Product: "forms"})
	return err
}

func (n *node) apply(t *testing.T, raw string) {
	t.Helper()
	d, err := n.ten.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.ten.Apply(ctx, d); err != nil {
		t.Fatal(err)
	}
}

// sharedStores returns two handles on one store for two in-process nodes: the same badger
// *store.DB (badger allows one opener), or two connections pools on one PostgreSQL database,
// as two machines would have.
func sharedStores(t *testing.T, backend string) (a, b *store.DB) {
	t.Helper()
	open := func(o store.Options) *store.DB {
		db, err := store.Open(o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	if backend == store.BackendPostgres {
		o := store.Options{Backend: store.BackendPostgres, PostgresURL: pgtest.URL(t)}
		return open(o), open(o)
	}
	db := open(store.Options{Dir: t.TempDir()})
	return db, db
}

// A key revoked through node A is refused by node B's key lookup, which had it cached: the
// event reaches B over Redis and B's listeners purge the cache. A hears nothing of its own.
func TestKeyRevokedOnOneNodeIsRefusedOnTheOther(t *testing.T) {
	srv := redistest.Start(t)
	for _, backend := range storetest.Backends() {
		t.Run(backend, func(t *testing.T) {
			dbA, dbB := sharedStores(t, backend)
			channel := redistest.Name("changes")
			a := newNode(t, "A", dbA, srv.Client(), channel)
			b := newNode(t, "B", dbB, srv.Client(), channel)

			a.apply(t, doc)
			created := b.await(t, "the apply")
			if !hasKind(created, "key") {
				t.Fatalf("B heard %v, want the key's creation among them", created)
			}
			if err := b.check(t); err != nil {
				t.Fatalf("B: Check(web key) = %v before the revocation", err)
			}
			if err := b.check(t); err != nil { // now from B's cache
				t.Fatalf("B: cached Check(web key) = %v", err)
			}
			made := time.Now()
			if err := a.ten.RevokeKey(ctx, "acme", "demo", "web"); err != nil {
				t.Fatal(err)
			}
			revoked := b.await(t, "the revocation", made)
			if len(revoked) != 1 || revoked[0].Kind != "key" || revoked[0].Project != "demo" || revoked[0].Name != "web" ||
				!revoked[0].Remote || revoked[0].Old != nil {
				t.Fatalf("B heard %+v, want one remote key change demo/web without values", revoked)
			}
			if err := b.check(t); !errors.Is(err, apierr.ErrUnauthorized) {
				t.Fatalf("B: Check(revoked key) = %v, want ErrUnauthorized", err)
			}
			if err := a.check(t); !errors.Is(err, apierr.ErrUnauthorized) {
				t.Fatalf("A: Check(revoked key) = %v, want ErrUnauthorized", err)
			}
			// A's own events came back to it over Redis and were ignored.
			if got, _ := a.bus.Stats(); got != 0 || len(a.remote) != 0 {
				t.Fatalf("A delivered %d events of its own", got)
			}
			if _, resyncs := b.bus.Stats(); resyncs != 0 {
				t.Fatalf("B resynced %d times with Redis up", resyncs)
			}
		})
	}
}

// Messages lost while Redis is down (a node's subscription dropped, a publish that failed) reach
// the other node through the journal in the store, checked every Interval; after Redis restarts
// empty, changes keep arriving.
func TestMissedMessagesArriveThroughTheJournal(t *testing.T) {
	srv := redistest.Private(t)
	dbA, dbB := sharedStores(t, store.BackendBadger)
	a := newNode(t, "A", dbA, srv.Client(), "changes")
	b := newNode(t, "B", dbB, srv.Client(), "changes")
	a.apply(t, doc)
	b.await(t, "the apply")
	if err := b.check(t); err != nil {
		t.Fatalf("B: Check = %v", err)
	}

	srv.Stop()
	made := time.Now()
	if err := a.ten.RevokeKey(ctx, "acme", "demo", "web"); err != nil {
		t.Fatal(err)
	}
	if cs := b.await(t, "the revocation with Redis down", made); !hasKind(cs, "key") {
		t.Fatalf("B heard %v", cs)
	}
	if err := b.check(t); !errors.Is(err, apierr.ErrUnauthorized) {
		t.Fatalf("B: Check(revoked key) with Redis down = %v, want ErrUnauthorized", err)
	}

	srv.Restart()
	if _, err := a.ten.CreateKey(ctx, tenancy.KeyRequest{Org: "acme", Project: "demo", Name: "late", Kind: "secret", Products: []string{"email"}}); err != nil {
		t.Fatal(err)
	}
	if cs := b.await(t, "a key created after Redis came back"); !hasKind(cs, "key") || cs[0].Name != "late" {
		t.Fatalf("B heard %v, want the key late", cs)
	}
	if _, resyncs := b.bus.Stats(); resyncs != 0 {
		t.Fatalf("B resynced %d times: the journal held every entry", resyncs)
	}
	if a.bus.Seen() != b.bus.Seen() {
		t.Fatalf("A saw generation %d, B %d", a.bus.Seen(), b.bus.Seen())
	}
}

// Without Redis at all the bus runs on the journal alone (a deployment on PostgreSQL without
// redis.url): the change still reaches the other node.
func TestJournalAloneWithoutRedis(t *testing.T) {
	for _, backend := range storetest.Backends() {
		t.Run(backend, func(t *testing.T) {
			dbA, dbB := sharedStores(t, backend)
			a := newNode(t, "A", dbA, nil, "")
			b := newNode(t, "B", dbB, nil, "")
			a.apply(t, doc)
			b.await(t, "the apply")
			if err := b.check(t); err != nil {
				t.Fatal(err)
			}
			made := time.Now()
			if err := a.ten.RevokeKey(ctx, "acme", "demo", "web"); err != nil {
				t.Fatal(err)
			}
			b.await(t, "the revocation", made)
			if err := b.check(t); !errors.Is(err, apierr.ErrUnauthorized) {
				t.Fatalf("B: Check(revoked key) = %v, want ErrUnauthorized", err)
			}
			if _, resyncs := b.bus.Stats(); resyncs != 0 {
				t.Fatalf("B resynced %d times: the journal held every entry", resyncs)
			}
		})
	}
}

// A node that crashes after a change committed, before it published it (its OnChange listeners
// never ran), has announced it all the same: the change's transaction wrote the journal entry,
// and the other node finds it at its next journal check, Redis up or not.
func TestCrashAfterCommitStillAnnounced(t *testing.T) {
	srv := redistest.Start(t)
	for _, backend := range storetest.Backends() {
		t.Run(backend, func(t *testing.T) {
			dbA, dbB := sharedStores(t, backend)
			channel := redistest.Name("changes")
			// A as serve wires it, but it dies between each commit and its publish: its bus's
			// Publish never runs (nor any listener), and its loop never started.
			tenA, err := tenancy.NewService(tenancy.Options{DB: dbA})
			if err != nil {
				t.Fatal(err)
			}
			busA, err := bus.New(bus.Options{DB: dbA, Redis: srv.Client(), Channel: channel, Node: "A",
				Deliver: func(context.Context, []journal.Change) { t.Error("A delivered") }})
			if err != nil {
				t.Fatal(err)
			}
			tenA.SetJournal(busA.Append)
			a := &node{name: "A", ten: tenA, bus: busA}
			b := newNode(t, "B", dbB, srv.Client(), channel)

			a.apply(t, doc)
			if cs := b.await(t, "the apply of a node that crashed before publishing"); !hasKind(cs, "key") {
				t.Fatalf("B heard %v, want the key's creation among them", cs)
			}
			if err := b.check(t); err != nil {
				t.Fatalf("B: Check(web key) = %v", err)
			}
			made := time.Now()
			if err := a.ten.RevokeKey(ctx, "acme", "demo", "web"); err != nil {
				t.Fatal(err)
			}
			b.await(t, "the revocation of a node that crashed before publishing", made)
			if err := b.check(t); !errors.Is(err, apierr.ErrUnauthorized) {
				t.Fatalf("B: Check(revoked key) = %v, want ErrUnauthorized", err)
			}
			if _, resyncs := b.bus.Stats(); resyncs != 0 {
				t.Fatalf("B resynced %d times: the journal held every entry", resyncs)
			}
		})
	}
}

// Changes made on both nodes at once reach the other node each exactly once, in journal order.
func TestConcurrentChangesOnBothNodes(t *testing.T) {
	srv := redistest.Start(t)
	for _, backend := range storetest.Backends() {
		t.Run(backend, func(t *testing.T) { concurrentChanges(t, srv, backend) })
	}
}

func concurrentChanges(t *testing.T, srv *redistest.Server, backend string) {
	dbA, dbB := sharedStores(t, backend)
	channel := redistest.Name("changes")
	a := newNode(t, "A", dbA, srv.Client(), channel)
	b := newNode(t, "B", dbB, srv.Client(), channel)
	a.apply(t, doc)
	b.await(t, "the apply")
	const each = 20
	var wg sync.WaitGroup
	for _, n := range []*node{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := n.ten.CreateKey(ctx, tenancy.KeyRequest{Org: "acme", Project: "demo", Kind: "secret", Products: []string{"email"},
					Name: n.name + "-" + string(rune('a'+i))}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, n := range []*node{a, b} {
		heard := map[string]int{}
		for len(heard) < each {
			for _, c := range n.await(t, "a key of the other node") {
				heard[c.Name]++
			}
		}
		for name, k := range heard {
			if k != 1 || name[0] == n.name[0] {
				t.Fatalf("%s heard %q %d times", n.name, name, k)
			}
		}
		if _, resyncs := n.bus.Stats(); resyncs != 0 {
			t.Fatalf("%s resynced %d times: nothing was missed", n.name, resyncs)
		}
	}
}

func hasKind(cs []journal.Change, kind string) bool {
	for _, c := range cs {
		if c.Kind == kind {
			return true
		}
	}
	return false
}
