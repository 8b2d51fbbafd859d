package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
)

// hotStep is one step of a hot-key scenario: a group of Updates the badger committer runs as
// one group (one transaction while they fit), or something done outside the committer.
type hotStep struct {
	group   []hotOp
	outside func(t *testing.T, db *DB, model map[string]int64)
}

// hotOp is one Update of a group.
type hotOp struct {
	kind string // bump (GetHot and write), set or del (plain writes), fail, panic, big, refused
	key  string
	n    int64
}

// hotBump adds d to the counter at k read with GetHot, deleting it at zero (as records'
// counter parts are kept).
func hotBump(tx *Txn, k string, d int64) error {
	v, err := tx.GetHot([]byte(k))
	var n int64
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	default:
		n = int64(binary.BigEndian.Uint64(v))
	}
	if n+d == 0 {
		return tx.Delete([]byte(k))
	}
	return tx.Set([]byte(k), binary.BigEndian.AppendUint64(nil, uint64(n+d)))
}

// fn returns the Update of o; it applies o to model as a serial run of the group would.
func (o hotOp) fn(model map[string]int64, big []byte) func(*Txn) error {
	k := []byte(o.key)
	switch o.kind {
	case "bump":
		model[o.key] += o.n
		return func(tx *Txn) error { return hotBump(tx, o.key, o.n) }
	case "set":
		model[o.key] = o.n
		return func(tx *Txn) error { return tx.Set(k, binary.BigEndian.AppendUint64(nil, uint64(o.n))) }
	case "del":
		model[o.key] = 0
		return func(tx *Txn) error { return tx.Delete(k) }
	case "fail": // bumps, then fails: nothing of it is written
		return func(tx *Txn) error {
			return errors.Join(hotBump(tx, o.key, o.n), errors.New("refused"))
		}
	case "panic":
		return func(tx *Txn) error {
			_ = hotBump(tx, o.key, o.n)
			panic("on purpose")
		}
	case "big": // bumps and writes a value big enough that two such Updates need two commits
		model[o.key] += o.n
		return func(tx *Txn) error {
			return errors.Join(hotBump(tx, o.key, o.n), tx.Set([]byte("big/"+o.key+fmt.Sprint(o.n)), big))
		}
	case "refused": // bumps, then writes a key badger refuses when the committer applies it
		return func(tx *Txn) error { return errors.Join(hotBump(tx, o.key, o.n), tx.Set(nil, []byte("v"))) }
	}
	panic("unknown op " + o.kind)
}

// runGroup hands ops to the committer as one group and waits for every verdict.
func runGroup(db *DB, fns []func(*Txn) error) {
	c := db.e.(*badgerEngine).c
	ops := make([]*op, len(fns))
	for i, fn := range fns {
		ops[i] = &op{fn: fn, done: make(chan struct{})}
	}
	c.run(ops)
	for _, o := range ops {
		<-o.done
	}
}

// TestGetHotStaysExact: counters read with GetHot stay what a serial run of every write
// makes them, whatever else writes them: plain writes and failing Updates in the same group
// commit, a group split over two commits, a transaction dropped for a refused write, Batches
// (between commits and open across them), a Load, and more keys than the cache holds.
func TestGetHotStaysExact(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("x"), 500<<10)
	g := func(ops ...hotOp) hotStep { return hotStep{group: ops} }
	bump := func(k string, d int64) hotOp { return hotOp{"bump", k, d} }
	batch := func(fn func(b *Batch, model map[string]int64)) hotStep {
		return hotStep{outside: func(t *testing.T, db *DB, model map[string]int64) {
			b := db.NewBatch()
			fn(b, model)
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}}
	}
	cases := []struct {
		name  string
		steps []hotStep
	}{
		{"plain writes between bumps of one commit", []hotStep{
			g(bump("a", 1), bump("a", 2), hotOp{"set", "a", 100}, bump("a", 1), hotOp{"del", "a", 0}, bump("a", 5), bump("b", 1)),
			g(bump("a", 1), hotOp{"set", "b", 7}),
			g(bump("b", 1), bump("a", -6), bump("a", 2)),
		}},
		{"failed and panicking updates leave no trace", []hotStep{
			g(bump("a", 1)),
			g(bump("a", 1), hotOp{"fail", "a", 10}, hotOp{"panic", "a", 100}, bump("a", 1)),
			g(hotOp{"fail", "a", 1000}),
			g(bump("a", 1)),
		}},
		{"a group split over two commits", []hotStep{
			g(bump("a", 1), hotOp{"big", "a", 1}, hotOp{"big", "a", 2}, hotOp{"big", "a", 3}, bump("a", 1)),
			g(bump("a", 1)),
		}},
		{"a transaction dropped for a refused write", []hotStep{
			g(bump("a", 1)),
			g(bump("a", 1), hotOp{"refused", "a", 10}, bump("a", 1)),
			g(bump("a", 1)),
		}},
		{"batches between commits", []hotStep{
			g(bump("a", 3), bump("b", 3)),
			batch(func(b *Batch, model map[string]int64) {
				_ = b.Delete([]byte("a"))
				_ = b.Set([]byte("b"), binary.BigEndian.AppendUint64(nil, 50))
				model["a"], model["b"] = 0, 50
			}),
			g(bump("a", 1), bump("b", 1)),
		}},
		{"a batch open across commits", []hotStep{
			g(bump("a", 3)),
			{outside: func(t *testing.T, db *DB, model map[string]int64) {
				b := db.NewBatch()
				_ = b.Set([]byte("a"), binary.BigEndian.AppendUint64(nil, 40))
				m := map[string]int64{}
				runGroup(db, []func(*Txn) error{bump("a", 1).fn(m, nil), bump("c", 1).fn(m, nil)})
				if err := b.Flush(); err != nil {
					t.Fatal(err)
				}
				model["a"], model["c"] = 40, model["c"]+1 // the batch's write lands after the bump
			}},
			g(bump("a", 1), bump("c", 1)),
		}},
		{"a load", []hotStep{
			g(bump("a", 2)),
			{outside: func(t *testing.T, db *DB, model map[string]int64) {
				// The backup of another store, with more commits (so newer versions).
				other, err := Open(Options{InMemory: true})
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
				for range 50 {
					runGroup(other, []func(*Txn) error{hotOp{"set", "a", 77}.fn(map[string]int64{}, nil)})
				}
				var buf bytes.Buffer
				if err := other.Backup(&buf); err != nil {
					t.Fatal(err)
				}
				if err := db.Load(&buf); err != nil {
					t.Fatal(err)
				}
				model["a"] = 77
			}},
			g(bump("a", 1)),
		}},
		{"more keys than the cache holds", func() []hotStep {
			var steps []hotStep
			var ops []hotOp
			for i := range maxHot + 100 {
				ops = append(ops, bump(fmt.Sprintf("k%05d", i), 1))
				if len(ops) == 200 {
					steps, ops = append(steps, g(ops...)), nil
				}
			}
			steps = append(steps, g(ops...))
			return append(steps, g(bump("k00000", 1), bump(fmt.Sprintf("k%05d", maxHot+99), 1)))
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db, err := Open(Options{InMemory: true, MemTableMB: 8})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			model := map[string]int64{}
			for i, s := range c.steps {
				if s.outside != nil {
					s.outside(t, db, model)
				} else {
					fns := make([]func(*Txn) error, len(s.group))
					for j, o := range s.group {
						fns[j] = o.fn(model, big)
					}
					runGroup(db, fns)
				}
				checkHot(t, db, model, fmt.Sprintf("after step %d", i))
			}
		})
	}
}

// checkHot checks the stored counters against model, read with Get in a View and with GetHot
// in an Update.
func checkHot(t *testing.T, db *DB, model map[string]int64, when string) {
	t.Helper()
	read := func(get func([]byte) ([]byte, error)) map[string]int64 {
		got := map[string]int64{}
		for k := range model {
			v, err := get([]byte(k))
			switch {
			case errors.Is(err, ErrNotFound):
			case err != nil:
				t.Fatal(err)
			default:
				got[k] = int64(binary.BigEndian.Uint64(v))
			}
		}
		return got
	}
	var stored, hot map[string]int64
	_ = db.View(context.Background(), func(tx *Txn) error { stored = read(tx.Get); return nil })
	_ = db.Update(context.Background(), func(tx *Txn) error { hot = read(tx.GetHot); return nil })
	for k, want := range model {
		if stored[k] != want || hot[k] != want {
			t.Fatalf("%s: %s is %d stored, %d by GetHot; want %d", when, k, stored[k], hot[k], want)
		}
	}
}

// GetHot answers as Get on every backend, inside and outside Updates, and sees the Update's
// own writes.
func TestGetHotIsGet(t *testing.T) {
	eachBackend(t, func(t *testing.T, b testBackend) {
		ctx := context.Background()
		db := b.open(t, Options{})
		for i := range 20 {
			if err := db.Update(ctx, func(tx *Txn) error {
				return errors.Join(hotBump(tx, "n", 1), hotBump(tx, "n", 1), hotBump(tx, "m", int64(i%2*2-1)))
			}); err != nil {
				t.Fatal(err)
			}
		}
		checkHot(t, db, map[string]int64{"n": 40, "m": 0}, "after 20 updates")
		_ = db.View(ctx, func(tx *Txn) error {
			if _, err := tx.GetHot([]byte("m")); !errors.Is(err, ErrNotFound) {
				t.Errorf("GetHot of a deleted key in a View = %v, want ErrNotFound", err)
			}
			return nil
		})
	})
}
