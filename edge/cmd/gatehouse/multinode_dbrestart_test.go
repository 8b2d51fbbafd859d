package main

import "testing"

// The failure row "the database down or restarted" of docs/scale-out.md: PostgreSQL is
// SIGKILLed while writers spread over the nodes put records, and started again on its folder.
// A write the outage cuts off answers 500 INTERNAL (nothing else fails), the nodes answer again
// without a restart of their own, and every write any node acknowledged, before the crash or
// after, is read on every node. The subtests after this one (email, webhooks) show the queues
// resumed.
func (c *cluster) databaseRestartUnderLoad(t *testing.T) {
	c.t = t
	const writers, before, after = 12, 150, 150
	load := startOutageLoad(t, writers, "dbr", func(op int, id string) (int, []byte, error) {
		return c.call(op%len(c.nodes), "PUT", "/admin/v1/projects/site/collections/notes/records/"+id, "admin", "application/json", []byte(`{"data":{"title":"`+id+`"}}`))
	})
	defer load.stop()
	load.awaitAcks(before)
	c.pg.crashAndRestart(t)
	atRestart := load.acks()
	load.awaitAcks(atRestart + after)
	load.stop()
	for r := range c.nodes {
		for _, id := range load.acked {
			var rec map[string]any
			c.must(r, "GET", "/records/projects/site/collections/notes/records/"+id, "pk_live_multi_web", "", 200, &rec)
			if rec["title"] != id {
				t.Errorf("acknowledged record %s read on node %d: %v", id, r, rec)
			}
		}
	}
	t.Logf("PostgreSQL SIGKILLed and restarted under %d writers: %d writes acknowledged (%d before the crash), every one read on the %d nodes; %d answered 500 INTERNAL during the outage", writers, len(load.acked), atRestart, len(c.nodes), load.failed)
}
