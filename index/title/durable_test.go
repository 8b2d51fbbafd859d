package title

import (
	"context"
	"os/exec"
	"reflect"
	"strconv"
	"testing"
)

// A batch's OnDurable callback runs once the index on disk holds the batch: a copy of the
// folder taken inside the callback (the persister, which writes the index's root, waits for
// it) opens with the batch and every batch before it (and perhaps later ones that made the
// same snapshot). Callbacks run in commit order, Sync
// waits for everything committed before it, and Close makes the last batches durable.
func TestDurableBatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	x, err := Open(dir + "/t.bleve")
	if err != nil {
		t.Fatal(err)
	}
	if err := x.MarkComplete(); err != nil { // else Open discards the copies as unfinished
		t.Fatal(err)
	}
	type copied struct {
		n   int
		dir string
		err error
	}
	got := make(chan copied, 3)
	b := x.NewBatch()
	for n := 1; n <= 3; n++ {
		for i := range 50 {
			id := strconv.Itoa(n*100 + i)
			if err := b.Put("p", "c", id, "batch"+strconv.Itoa(n)+" doc", float64(n*100+i)); err != nil {
				t.Fatal(err)
			}
		}
		to := dir + "/copy" + strconv.Itoa(n)
		b.OnDurable(func() {
			out, err := exec.Command("cp", "-a", dir+"/t.bleve", to).CombinedOutput()
			if err != nil {
				err = &exec.ExitError{Stderr: out}
			}
			got <- copied{n, to, err}
		})
		if err := b.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for want := 1; want <= 3; want++ {
		c := <-got
		if c.n != want || c.err != nil {
			t.Fatalf("durable callback %d (copy: %v), want %d: callbacks must run in commit order", c.n, c.err, want)
		}
		y, err := Open(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= c.n; n++ { // (later batches may be in the same snapshot)
			ids, err := y.Search("p", "c", []string{"batch" + strconv.Itoa(n)}, 1000)
			if err != nil || len(ids) != 50 {
				t.Errorf("copy taken when batch %d was durable: batch %d has %d documents (%v), want 50", c.n, n, len(ids), err)
			}
		}
		_ = y.Close()
	}

	// Sync, then Close: what was committed is on disk when the index opens again.
	b = x.NewBatch()
	_ = b.Put("p", "c", "late", "synced", 1)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := x.Sync(context.Background()); err != nil {
		t.Fatalf("Sync = %v", err)
	}
	b = x.NewBatch()
	_ = b.Put("p", "c", "last", "closing", 2)
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	y, err := Open(dir + "/t.bleve")
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	for q, want := range map[string][]string{"synced": {"late"}, "closing": {"last"}} {
		if ids, err := y.Search("p", "c", []string{q}, 10); err != nil || !reflect.DeepEqual(ids, want) {
			t.Errorf("after reopening, Search(%s) = %v, %v; want %v", q, ids, err, want)
		}
	}
}

// An empty batch's callback still waits for the batches before it; an in-memory index calls
// it at once.
func TestDurableEmptyBatchAndMemory(t *testing.T) {
	t.Parallel()
	x, err := Open(t.TempDir() + "/t.bleve")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	order := make(chan int, 2)
	b := x.NewBatch()
	_ = b.Put("p", "c", "1", "one", 1)
	b.OnDurable(func() { order <- 1 })
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.OnDurable(func() { order <- 2 })
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	if a, c := <-order, <-order; a != 1 || c != 2 {
		t.Errorf("callbacks ran as %d, %d; want 1, 2", a, c)
	}
	m, err := OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	called := false
	mb := m.NewBatch()
	_ = mb.Put("p", "c", "1", "one", 1)
	mb.OnDurable(func() { called = true })
	if err := mb.Commit(); err != nil || !called {
		t.Errorf("in-memory Commit = %v, callback called %v; want nil, true", err, called)
	}
	if err := m.Sync(context.Background()); err != nil {
		t.Errorf("in-memory Sync = %v", err)
	}
}
