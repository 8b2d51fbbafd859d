package store

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gatehouse-dev/gatehouse/edge/store/pgtest"
)

// Nodes sharing one database (each its own DB, as gateway processes are) conflict with each
// other; their committers run the groups again, and no increment is lost.
func TestPostgresNodesShareOneDatabase(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	var nodes []*DB
	for i := 0; i < 3; i++ {
		db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u, SyncWrites: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		nodes = append(nodes, db)
	}
	const perNode, writers = 60, 6
	var wg sync.WaitGroup
	for i, db := range nodes {
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < perNode/writers; j++ {
					err := db.Update(ctx, func(tx *Txn) error {
						if err := bump(tx, "shared"); err != nil {
							return err
						}
						return tx.Set([]byte(fmt.Sprintf("log/%d/%d/%d", i, w, j)), nil)
					})
					if err != nil {
						t.Errorf("node %d Update: %v", i, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if n := counter(t, nodes[2], "shared"); n != 3*perNode {
		t.Errorf("counter = %d after %d increments on three nodes", n, 3*perNode)
	}
	var retries uint64
	for _, db := range nodes {
		retries += db.e.(*pgEngine).retries.Load()
	}
	t.Logf("%d group retries after serialization failures", retries)
}

// The schema is created once and found again; a database of a newer schema is refused.
func TestPostgresSchemaVersion(t *testing.T) {
	t.Parallel()
	u := pgtest.URL(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ { // the second Open finds the tables
		db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u})
		if err != nil {
			t.Fatalf("Open #%d: %v", i+1, err)
		}
		db.Close()
	}
	db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.e.(*pgEngine).pool.Exec(ctx, `UPDATE gatehouse_meta SET value = '99' WHERE name = 'schema_version'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(Options{Backend: BackendPostgres, PostgresURL: u}); err == nil {
		db.Close()
		t.Errorf("Open of a database of schema version 99 = nil error, want a refusal")
	}
}
