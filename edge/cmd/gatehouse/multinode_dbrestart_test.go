package main

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The failure row "the database down or restarted" of docs/scale-out.md: PostgreSQL is
// SIGKILLed while writers spread over the nodes put records, and started again on its folder.
// A write the outage cuts off answers 500 INTERNAL (nothing else fails), the nodes answer again
// without a restart of their own, and every write any node acknowledged, before the crash or
// after, is read on every node. The subtests after this one (email, webhooks) show the queues
// resumed.
func (c *cluster) databaseRestartUnderLoad(t *testing.T) {
	c.t = t
	const writers, before, after = 12, 150, 150
	var (
		mu     sync.Mutex
		acked  []string
		failed int
		bad    []string
		n      atomic.Int64
		wg     sync.WaitGroup
	)
	more, done := make(chan struct{}, 1), make(chan struct{})
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(func() { close(done); wg.Wait() }) }
	defer stop() // on every way out: writers left running would fail the later subtests
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				op := int(n.Add(1))
				node := op % len(c.nodes)
				id := fmt.Sprintf("dbr-%d", op)
				code, raw, err := c.call(node, "PUT", "/admin/v1/projects/site/collections/notes/records/"+id, "admin", "application/json", []byte(`{"data":{"title":"`+id+`"}}`))
				mu.Lock()
				switch {
				case code == 201:
					acked = append(acked, id)
				case err == nil && code == 500 && bytes.Contains(raw, []byte(`"INTERNAL"`)):
					failed++
				default:
					bad = append(bad, fmt.Sprintf("node %d %s: %d %s (%v)", node, id, code, raw, err))
				}
				mu.Unlock()
				if code != 201 {
					time.Sleep(5 * time.Millisecond) // a client retrying later
				}
				select {
				case more <- struct{}{}:
				default:
				}
			}
		}()
	}
	acks := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	awaitAcks := func(want int) {
		deadline := time.After(awaitDeadline)
		for acks() < want {
			select {
			case <-more:
			case <-deadline:
				t.Fatalf("%d writes acknowledged, want %d (the nodes did not recover?)", acks(), want)
			}
		}
	}
	awaitAcks(before)
	c.pg.crashAndRestart(t)
	atRestart := acks()
	awaitAcks(atRestart + after)
	stop()
	if len(bad) > 0 {
		t.Errorf("%d writes answered neither 201 nor 500 INTERNAL, first: %v", len(bad), bad[:min(5, len(bad))])
	}
	for r := range c.nodes {
		for _, id := range acked {
			var rec map[string]any
			c.must(r, "GET", "/records/projects/site/collections/notes/records/"+id, "pk_live_multi_web", "", 200, &rec)
			if rec["title"] != id {
				t.Errorf("acknowledged record %s read on node %d: %v", id, r, rec)
			}
		}
	}
	t.Logf("PostgreSQL SIGKILLed and restarted under %d writers: %d writes acknowledged (%d before the crash), every one read on the %d nodes; %d answered 500 INTERNAL during the outage", writers, len(acked), atRestart, len(c.nodes), failed)
}
