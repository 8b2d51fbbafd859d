package bus

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// journalNodes returns two buses on one store without Redis and without their loops, so the
// test drives received and check itself; B's deliveries are recorded.
func journalNodes(t *testing.T, retain int) (a, b *Bus, got *[][]journal.Change) {
	t.Helper()
	db, err := store.Open(store.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	got = &[][]journal.Change{}
	a, _ = New(Options{DB: db, Node: "A", Retain: retain, Deliver: func(context.Context, []journal.Change) { t.Fatal("A delivered") }})
	b, _ = New(Options{DB: db, Node: "B", Retain: retain, Kinds: []string{"key", "form"},
		Projects: func(context.Context) ([]string, error) { return []string{"demo"}, nil },
		Deliver:  func(_ context.Context, cs []journal.Change) { *got = append(*got, cs) }})
	return a, b, got
}

func keyChange(name string) []journal.Change {
	return []journal.Change{{Op: "updated", Kind: "key", Org: "acme", Project: "demo", Name: name, Old: []byte(`{}`)}}
}

// A message that arrives after the journal delivered its entry is dropped; one that skips
// generations makes the node read the journal, in order.
func TestMessagesAndJournalDeliverOnce(t *testing.T) {
	ctx := context.Background()
	a, b, got := journalNodes(t, 100)
	a.Publish(ctx, keyChange("k1"))
	b.check(ctx)
	msg, _ := json.Marshal(event{Node: "A", Gen: 1, Changes: toWire(keyChange("k1"))})
	b.received(ctx, string(msg)) // late: generation 1 was delivered by check
	if len(*got) != 1 || (*got)[0][0].Name != "k1" || !(*got)[0][0].Remote || (*got)[0][0].Old != nil {
		t.Fatalf("B delivered %+v, want k1 once, remote, without values", *got)
	}
	a.Publish(ctx, keyChange("k2"))
	a.Publish(ctx, keyChange("k3"))
	msg, _ = json.Marshal(event{Node: "A", Gen: 3, Changes: toWire(keyChange("k3"))})
	b.received(ctx, string(msg)) // generation 2's message was lost
	if len(*got) != 3 || (*got)[1][0].Name != "k2" || (*got)[2][0].Name != "k3" || b.Seen() != 3 {
		t.Fatalf("B delivered %+v (seen %d), want k1 k2 k3", *got, b.Seen())
	}
	// Changes B heard from elsewhere are not announced again.
	b.Publish(ctx, (*got)[2])
	if gen, _ := b.generation(ctx); gen != 3 {
		t.Fatalf("a remote change was journaled again: generation %d", gen)
	}
	// Its own events are skipped on the way through the journal.
	b.Publish(ctx, keyChange("mine"))
	a.Publish(ctx, keyChange("k5"))
	b.check(ctx)
	if len(*got) != 4 || (*got)[3][0].Name != "k5" || b.Seen() != 5 {
		t.Fatalf("B delivered %+v (seen %d), want k5 after its own", *got, b.Seen())
	}
	if d, r := b.Stats(); d != 4 || r != 0 {
		t.Fatalf("Stats() = %d delivered, %d resyncs; want 4, 0", d, r)
	}
}

// A node whose missing entries were trimmed (or whose store went back) drops everything: one
// change of each kind without a project, and a project change per project.
func TestTrimmedJournalResyncs(t *testing.T) {
	ctx := context.Background()
	a, b, got := journalNodes(t, 2)
	for _, n := range []string{"k1", "k2", "k3", "k4", "k5"} {
		a.Publish(ctx, keyChange(n))
	}
	b.check(ctx) // B saw nothing: entries 1-3 are gone
	want := []journal.Change{
		{Op: "updated", Kind: "key", Remote: true}, {Op: "updated", Kind: "form", Remote: true},
		{Op: "updated", Kind: "project", Project: "demo", Remote: true},
	}
	if len(*got) != 1 || !equal((*got)[0], want) || b.Seen() != 5 {
		t.Fatalf("B delivered %+v (seen %d), want one resync %+v", *got, b.Seen(), want)
	}
	// A store that went back (restored from a backup) resyncs too.
	b.advance(9)
	b.check(ctx)
	if len(*got) != 2 || !equal((*got)[1], want) || b.Seen() != 5 {
		t.Fatalf("after the store went back B delivered %+v (seen %d)", *got, b.Seen())
	}
	if _, r := b.Stats(); r != 2 {
		t.Fatalf("resyncs = %d, want 2", r)
	}
}

func equal(a, b []journal.Change) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Op != y.Op || x.Kind != y.Kind || x.Org != y.Org || x.Project != y.Project || x.Name != y.Name || x.Remote != y.Remote {
			return false
		}
	}
	return true
}

// A change made after wiring primed the bus and before it started (the server already answers,
// caches fill) is caught up from the journal.
func TestChangeBetweenPrimeAndStartIsCaughtUp(t *testing.T) {
	ctx := context.Background()
	a, b, got := journalNodes(t, 100)
	a.Publish(ctx, keyChange("before"))
	if err := b.Prime(ctx); err != nil {
		t.Fatal(err)
	}
	a.Publish(ctx, keyChange("between"))
	b.check(ctx)
	if len(*got) != 1 || (*got)[0][0].Name != "between" || b.Seen() != 2 {
		t.Fatalf("B delivered %+v (seen %d), want only the change made after Prime", *got, b.Seen())
	}
}

// FuzzReceived feeds arbitrary pub/sub payloads to a node: none may panic, deliver another
// node's change twice, or leave the node behind the journal after its next check.
func FuzzReceived(f *testing.F) {
	for _, s := range []string{
		`{"node":"A","gen":1,"changes":[{"op":"updated","kind":"key","org":"acme","project":"demo","name":"web"}]}`,
		`{"node":"A","gen":2,"changes":[]}`, `{"node":"B","gen":1,"changes":null}`,
		`{"node":"A","gen":18446744073709551615,"changes":[{"op":"deleted","kind":"form"}]}`,
		`{"gen":0}`, `[]`, `null`, ``, `{"node":"A","gen":"1"}`, "{\"node\":\"\xff\",\"gen\":3}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, payload string) {
		ctx := context.Background()
		a, b, got := journalNodes(t, 100)
		a.Publish(ctx, keyChange("k1"))
		b.received(ctx, payload)
		b.check(ctx)
		if b.Seen() != 1 {
			t.Fatalf("after %q and a check B saw generation %d, want the journal's 1", payload, b.Seen())
		}
		names := 0
		for _, cs := range *got {
			for _, c := range cs {
				if c.Name == "k1" {
					names++
				}
			}
		}
		if names > 1 {
			t.Fatalf("after %q B delivered k1 %d times", payload, names)
		}
	})
}
