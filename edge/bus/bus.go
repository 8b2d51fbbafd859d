// Package bus carries journal.Change events between the nodes of a deployment, so that every
// node's caches, key lookups and plugins follow a change made on any node within a second
// (decisions.md 8.4: a key revoked on one node is refused on every node).
//
// The store is the truth; an event only says what to forget. A change committed on node A goes
// two ways:
//
//  1. The change's own transaction appends it to a change journal in the shared store (Append):
//     a generation counter (bus/gen) and one entry per event (bus/log/<gen>, the names only),
//     the last Options.Retain entries kept.
//  2. After the commit, A's Publish (a tenancy.Service.OnChange listener) publishes
//     {node, gen, changes} on a Redis pub/sub channel (waiting at most
//     250 ms: the apply or revocation waits for it; after a failure Redis is left out of
//     publishing for 5 s and the journal alone carries the changes).
//
// Node B's loop receives the message, ignores its own, and hands the changes (marked Remote)
// to Options.Deliver — tenancy.Service.Notify, so every local listener runs: the products'
// tenantcache.Caches, the auth key cache purge, the plugin registry sync, the webhooks list. B keeps
// no tenancy data of its own in memory to reload: tenancy reads orgs, projects and keys from
// the store on each miss.
//
// Why pub/sub and not a Redis stream: the event is an invalidation, the journal in the store
// already is the durable, ordered record, and it is needed anyway (a Redis restarted without
// persistence loses a stream too). Pub/sub adds no state in Redis, no trimming and no consumer
// bookkeeping; its one weakness, a message lost while a subscription is down, is what the
// journal covers.
//
// The safety net: every Options.Interval (1 s) the loop reads bus/gen. A generation past the
// last one it delivered (a message lost: Redis restarted, the subscription dropped, a publish
// that failed) makes it read the missing entries from the journal and deliver them in order;
// a message that arrives after its entry was delivered is dropped by its generation. When the
// entries are gone (a node paused past Retain changes) or the counter went backwards (a restored
// store) it delivers a resync instead: every kind of every project changed. So a node converges
// within about a second even with Redis down, and without Redis at all (Options.Redis nil) the
// bus runs on the journal alone.
//
// The journal entry commits with the change: every writer of changes records them in its own
// transaction (tenancy.Service.Record, which calls Append through tenancy.Service.SetJournal),
// so a node that crashes after the commit, before its Redis publish, has still announced the
// change: the other nodes find it at their next journal check (TestCrashAfterCommitStillAnnounced).
// A writer that does not record its changes (none in this repository) gets them appended by
// Publish in a transaction of its own, after the commit, with the crash window that has.
package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Options configures New.
type Options struct {
	// DB is the store every node shares; it holds the change journal.
	DB *store.DB
	// Redis carries the events at once; nil runs the bus on the journal alone.
	Redis *redis.Client
	// Channel is the pub/sub channel ("gatehouse:changes" when empty); deployments sharing one
	// Redis use one each.
	Channel string
	// Node names this node in events (random when empty): a node ignores its own.
	Node string
	// Deliver hands changes made on other nodes to this node's listeners (tenancy.Service.Notify).
	Deliver func(ctx context.Context, changes []journal.Change)
	// Kinds and Projects describe "everything" for a resync: one change of each kind without a
	// project, and one "project" change per project. Kinds defaults to every kind tenancy and
	// the products' sections use.
	Kinds    []string
	Projects func(ctx context.Context) ([]string, error)
	// Interval is how often the journal's generation is checked (1 s when 0).
	Interval time.Duration
	// Retain is how many journal entries are kept (4096 when 0).
	Retain int
	Log    *slog.Logger
}

// defaultKinds are the kinds of journal.Change a resync names when Options.Kinds is empty.
func defaultKinds() []string {
	return []string{"org", "project", "key", "form", "captcha", "template", "sender", "suppression",
		"connection", "collection", "record", "plugin", "module", "webhook"}
}

// Bus is one node's end of the change feed.
type Bus struct {
	o       Options
	mu      sync.Mutex
	seen    uint64 // the last generation delivered (or published) here
	primed  bool
	stop    chan struct{}
	done    chan struct{}
	started bool

	redisDown atomic.Int64 // unix nanoseconds until which Publish leaves Redis out

	delivered atomic.Uint64 // remote events handed to Deliver
	resyncs   atomic.Uint64
	logMu     sync.Mutex
	logged    time.Time
}

// New returns the bus. It starts nothing: wire Publish with tenancy.Service.OnChange, then Start.
func New(o Options) (*Bus, error) {
	if o.DB == nil || o.Deliver == nil {
		return nil, errors.New("bus: DB and Deliver are required")
	}
	if o.Channel == "" {
		o.Channel = "gatehouse:changes"
	}
	if o.Node == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.Node = hex.EncodeToString(b[:])
	}
	if len(o.Kinds) == 0 {
		o.Kinds = defaultKinds()
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Retain <= 0 {
		o.Retain = 4096
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Bus{o: o}, nil
}

// change is a journal.Change on the wire: names only.
type change struct {
	Op      string `json:"op"`
	Kind    string `json:"kind"`
	Org     string `json:"org,omitempty"`
	Project string `json:"project,omitempty"`
	Name    string `json:"name,omitempty"`
}

// event is a journal entry, and with Gen a pub/sub message.
type event struct {
	Node    string   `json:"node"`
	Gen     uint64   `json:"gen,omitempty"`
	Changes []change `json:"changes"`
}

func toWire(cs []journal.Change) []change {
	out := make([]change, 0, len(cs))
	for _, c := range cs {
		if !c.Remote {
			out = append(out, change{Op: c.Op, Kind: c.Kind, Org: c.Org, Project: c.Project, Name: c.Name})
		}
	}
	return out
}

func fromWire(cs []change) []journal.Change {
	out := make([]journal.Change, len(cs))
	for i, c := range cs {
		out[i] = journal.Change{Op: c.Op, Kind: c.Kind, Org: c.Org, Project: c.Project, Name: c.Name, Remote: true}
	}
	return out
}

// Journal keys (the bus owns the "bus" prefix of the store).
var genKey = store.Key("bus", "gen")

func logKey(gen uint64) []byte { return store.Key("bus", "log", fmt.Sprintf("%020d", gen)) }

func parseGen(raw []byte) (uint64, error) { return strconv.ParseUint(string(raw), 10, 64) }

// Append writes changes made on this node into the change journal, in txn: the transaction
// that commits them. Its signature fits journal.Func (wiring passes it to
// tenancy.Service.SetJournal), so a change and its journal entry commit together: a node that
// crashes after the commit has announced the change all the same (the other nodes find it at
// their next journal check). It returns the entry's generation, 0 when there is nothing to
// announce (changes that came from another node).
func (b *Bus) Append(txn *store.Txn, changes []journal.Change) (uint64, error) {
	wire := toWire(changes)
	if len(wire) == 0 {
		return 0, nil
	}
	entry, err := json.Marshal(event{Node: b.o.Node, Changes: wire})
	if err != nil {
		return 0, fmt.Errorf("bus: encoding a change event: %w", err)
	}
	var gen uint64
	raw, err := txn.Get(genKey)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	if err == nil {
		if gen, err = parseGen(raw); err != nil {
			return 0, err
		}
	}
	gen++
	if err := txn.Set(logKey(gen), entry); err != nil {
		return 0, err
	}
	if gen > uint64(b.o.Retain) {
		if err := txn.Delete(logKey(gen - uint64(b.o.Retain))); err != nil {
			return 0, err
		}
	}
	return gen, txn.Set(genKey, []byte(strconv.FormatUint(gen, 10)))
}

// Publish announces changes committed on this node; its signature fits tenancy.Service.OnChange.
// Changes that came from another node (Remote) are not announced again. Changes their
// transaction journaled (Append, through tenancy.Service.Record: Change.Gen is set) are only
// published on Redis; others are appended to the journal first, in a transaction of their own
// (a node that crashes before it leaves them unannounced, and a failure is only logged: the
// change is committed).
func (b *Bus) Publish(ctx context.Context, changes []journal.Change) {
	wire := toWire(changes)
	if len(wire) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx) // the change is committed: announce it even if the caller left
	var gen uint64
	for _, c := range changes {
		if !c.Remote && c.Gen > 0 {
			gen = c.Gen
			break
		}
	}
	if gen == 0 {
		err := b.o.DB.Update(ctx, func(txn *store.Txn) error {
			var err error
			gen, err = b.Append(txn, changes)
			return err
		})
		if err != nil {
			b.warn("appending to the change journal", err)
			return
		}
	}
	b.mu.Lock()
	if b.seen == gen-1 {
		b.seen = gen // nothing to deliver between: our own entry needs no catching up
	}
	b.mu.Unlock()
	if b.o.Redis == nil || time.Now().UnixNano() < b.redisDown.Load() {
		return
	}
	msg, _ := json.Marshal(event{Node: b.o.Node, Gen: gen, Changes: wire})
	pctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	if err := b.o.Redis.Publish(pctx, b.o.Channel, msg).Err(); err != nil {
		// The caller (an apply, a revocation) waits for this: while Redis is away, leave it out
		// and let the journal carry the changes.
		b.redisDown.Store(time.Now().Add(redisPause).UnixNano())
		b.warn("publishing a change on Redis (the other nodes find it in the journal)", err)
	}
}

// A publish waits at most publishTimeout for Redis; after a failure Redis is left out of
// publishing for redisPause.
const (
	publishTimeout = 250 * time.Millisecond
	redisPause     = 5 * time.Second
)

// Prime takes the journal's generation as seen: this node's caches hold nothing older. Call
// it before anything fills a cache (wiring does, before the server listens); the changes made
// after it are caught up from the journal once the bus starts. Start primes a bus not primed.
func (b *Bus) Prime(ctx context.Context) error {
	gen, err := b.generation(ctx)
	if err != nil {
		return fmt.Errorf("bus: reading the change journal: %w", err)
	}
	b.mu.Lock()
	b.seen, b.primed = gen, true
	b.mu.Unlock()
	return nil
}

// Start starts the loop: the Redis subscription and the journal check.
func (b *Bus) Start(ctx context.Context) error {
	b.mu.Lock()
	primed := b.primed
	b.mu.Unlock()
	if !primed {
		if err := b.Prime(ctx); err != nil {
			return err
		}
	}
	var msgs <-chan *redis.Message
	var sub *redis.PubSub
	if b.o.Redis != nil {
		// A change made before the subscription is found in the journal at the first check.
		sub = b.o.Redis.Subscribe(context.WithoutCancel(ctx), b.o.Channel)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if _, err := sub.Receive(sctx); err != nil {
			// go-redis keeps trying in the background; the journal covers the meantime.
			b.warn("subscribing to the change channel (the journal is checked meanwhile)", err)
		}
		cancel()
		msgs = sub.Channel(redis.WithChannelSize(1024))
	}
	b.mu.Lock()
	b.stop, b.done = make(chan struct{}), make(chan struct{})
	b.started = true
	b.mu.Unlock()
	go b.loop(sub, msgs)
	return nil
}

// Stop ends the loop and the subscription. It tolerates a bus that did not start.
func (b *Bus) Stop(ctx context.Context) error {
	b.mu.Lock()
	started := b.started
	b.started = false
	b.mu.Unlock()
	if !started {
		return nil
	}
	close(b.stop)
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Bus) loop(sub *redis.PubSub, msgs <-chan *redis.Message) {
	defer close(b.done)
	if sub != nil {
		defer sub.Close()
	}
	tick := time.NewTicker(b.o.Interval)
	defer tick.Stop()
	ctx := context.Background()
	for {
		select {
		case <-b.stop:
			return
		case m := <-msgs:
			if m != nil {
				b.received(ctx, m.Payload)
			}
		case <-tick.C:
			b.check(ctx)
		}
	}
}

// received handles one pub/sub message.
func (b *Bus) received(ctx context.Context, payload string) {
	var ev event
	if err := json.Unmarshal([]byte(payload), &ev); err != nil || ev.Gen == 0 {
		b.warn("a change message that does not decode", fmt.Errorf("%.200q: %v", payload, err))
		return
	}
	if ev.Node == b.o.Node {
		return
	}
	b.mu.Lock()
	seen := b.seen
	b.mu.Unlock()
	switch {
	case ev.Gen <= seen: // delivered already, from the journal
	case ev.Gen == seen+1:
		b.deliver(ctx, ev.Gen, fromWire(ev.Changes))
	default: // messages were lost before this one
		b.catchUp(ctx, ev.Gen)
	}
}

// check is the safety net: the journal's generation against the last one delivered.
func (b *Bus) check(ctx context.Context) {
	// seen first: this node's own Publish may advance it at any time, and a generation read
	// before it could look like a store that went back.
	b.mu.Lock()
	seen := b.seen
	b.mu.Unlock()
	gen, err := b.generation(ctx)
	if err != nil {
		b.warn("reading the change journal", err)
		return
	}
	switch {
	case gen > seen:
		b.catchUp(ctx, gen)
	case gen < seen: // the store went back (restored): what is cached may be anything
		b.resync(ctx, gen)
	}
}

// catchUp delivers the journal's entries after the last seen one, up to gen at least.
func (b *Bus) catchUp(ctx context.Context, gen uint64) {
	b.mu.Lock()
	seen := b.seen
	b.mu.Unlock()
	if seen >= gen { // this node's own Publish got there meanwhile
		return
	}
	type entry struct {
		gen uint64
		ev  event
	}
	var entries []entry
	err := b.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix("bus", "log"), Start: logKey(seen + 1)}, func(k, v []byte) (bool, error) {
			g, err := strconv.ParseUint(store.LastPart(k), 10, 64)
			if err != nil {
				return false, err
			}
			var ev event
			if err := json.Unmarshal(v, &ev); err != nil {
				return false, err
			}
			entries = append(entries, entry{g, ev})
			return true, nil
		})
	})
	if err != nil {
		b.warn("reading the change journal", err)
		return
	}
	if len(entries) == 0 || entries[0].gen != seen+1 {
		// The entries after seen were trimmed (or never readable): start over.
		last := gen
		if n := len(entries); n > 0 && entries[n-1].gen > last {
			last = entries[n-1].gen
		}
		b.resync(ctx, last)
		return
	}
	for _, e := range entries {
		if e.ev.Node == b.o.Node {
			b.advance(e.gen)
			continue
		}
		b.deliver(ctx, e.gen, fromWire(e.ev.Changes))
	}
}

// deliver hands a remote event to the local listeners and records its generation.
func (b *Bus) deliver(ctx context.Context, gen uint64, changes []journal.Change) {
	b.o.Deliver(ctx, changes)
	b.delivered.Add(1)
	b.advance(gen)
}

func (b *Bus) advance(gen uint64) {
	b.mu.Lock()
	if gen > b.seen {
		b.seen = gen
	}
	b.mu.Unlock()
}

// resync tells the local listeners that anything may have changed, and takes gen as seen.
func (b *Bus) resync(ctx context.Context, gen uint64) {
	changes := make([]journal.Change, 0, len(b.o.Kinds))
	for _, k := range b.o.Kinds {
		changes = append(changes, journal.Change{Op: "updated", Kind: k, Remote: true})
	}
	if b.o.Projects != nil {
		projects, err := b.o.Projects(ctx)
		if err != nil {
			b.warn("listing projects for a resync", err)
		}
		for _, p := range projects {
			changes = append(changes, journal.Change{Op: "updated", Kind: "project", Project: p, Remote: true})
		}
	}
	b.o.Deliver(ctx, changes)
	b.resyncs.Add(1)
	b.mu.Lock()
	b.seen = gen
	b.mu.Unlock()
	b.o.Log.Info("bus: resynced: every cache of tenancy data was dropped", "generation", gen)
}

// generation reads the journal's counter (0 before the first change).
func (b *Bus) generation(ctx context.Context) (uint64, error) {
	var gen uint64
	err := b.o.DB.View(ctx, func(txn *store.Txn) error {
		raw, err := txn.Get(genKey)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		gen, err = parseGen(raw)
		return err
	})
	return gen, err
}

// Stats reports the remote events delivered and the resyncs run (tests and metrics).
func (b *Bus) Stats() (delivered, resyncs uint64) { return b.delivered.Load(), b.resyncs.Load() }

// Seen reports the last journal generation this node delivered or published.
func (b *Bus) Seen() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.seen
}

// warn logs a problem at most once every 10 s (Redis down makes every publish fail alike).
// Errors of go-redis name the address, never the URL's password.
func (b *Bus) warn(what string, err error) {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	if time.Since(b.logged) < 10*time.Second {
		return
	}
	b.logged = time.Now()
	b.o.Log.Warn("bus: "+what, "err", err)
}
