package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// benchParallelism is the goroutines per core of the parallel benchmarks: products call
// Update from many request goroutines at once.
const benchParallelism = 16

// Durable Updates of distinct keys, each reading one key and writing two (a record and an
// index entry, the common shape of a product's write).
func BenchmarkUpdate(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b, Options{SyncWrites: true})
			ctx := context.Background()
			val := make([]byte, 300)
			var n atomic.Uint64
			b.SetParallelism(benchParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					err := db.Update(ctx, func(tx *Txn) error {
						if _, err := tx.Get([]byte(fmt.Sprintf("idx/%d", i))); !errors.Is(err, ErrNotFound) && err != nil {
							return err
						}
						if err := tx.Set([]byte(fmt.Sprintf("rec/%012d", i)), val); err != nil {
							return err
						}
						return tx.Set([]byte(fmt.Sprintf("idx/%d", i)), nil)
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportRetries(b, db)
		})
	}
}

// Durable increments of one counter by every goroutine: the worst case of contention.
func BenchmarkUpdateHotKey(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b, Options{SyncWrites: true})
			ctx := context.Background()
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := db.Update(ctx, func(tx *Txn) error { return bump(tx, "hot") }); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			var n uint64
			_ = db.View(ctx, func(tx *Txn) error {
				v, err := tx.Get([]byte("hot"))
				if err == nil {
					n = binary.BigEndian.Uint64(v)
				}
				return err
			})
			if n != uint64(b.N) {
				b.Errorf("counter = %d after %d increments", n, b.N)
			}
			reportRetries(b, db)
		})
	}
}

// benchKeys is how many records the read benchmarks load.
const benchKeys = 10000

func loadBench(b *testing.B, db *DB) {
	b.Helper()
	bt := db.NewBatch()
	val := make([]byte, 300)
	for i := 0; i < benchKeys; i++ {
		if err := bt.Set([]byte(fmt.Sprintf("rec/%012d", i)), val); err != nil {
			b.Fatal(err)
		}
	}
	if err := bt.Flush(); err != nil {
		b.Fatal(err)
	}
}

// Views that read one random key (a cache miss's lookup).
func BenchmarkView(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b, Options{})
			loadBench(b, db)
			ctx := context.Background()
			b.SetParallelism(benchParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := []byte(fmt.Sprintf("rec/%012d", rand.IntN(benchKeys)))
					if err := db.View(ctx, func(tx *Txn) error { _, err := tx.Get(k); return err }); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// Views that list 20 records from a random point (a page of a list).
func BenchmarkViewIterate(b *testing.B) {
	for _, be := range testBackends {
		b.Run(be.name, func(b *testing.B) {
			db := be.open(b, Options{})
			loadBench(b, db)
			ctx := context.Background()
			b.SetParallelism(benchParallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					start := []byte(fmt.Sprintf("rec/%012d", rand.IntN(benchKeys)))
					n := 0
					err := db.View(ctx, func(tx *Txn) error {
						return tx.Iterate(IterOptions{Prefix: []byte("rec/"), Start: start}, func(_, _ []byte) (bool, error) {
							n++
							return n < 20, nil
						})
					})
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// reportRetries adds the postgres backend's serialization retries per Update.
func reportRetries(b *testing.B, db *DB) {
	if e, ok := db.e.(*pgEngine); ok {
		b.ReportMetric(float64(e.retries.Load())/float64(b.N), "retries/op")
	}
}

// BenchmarkStageRecordWrite stages what one record create writes (14 entries, 3 counter
// parts read and written): the stage's share of the committer's work per write.
func BenchmarkStageRecordWrite(b *testing.B) {
	var keys [][]byte
	for i := range 14 {
		keys = append(keys, fmt.Appendf(nil, "records/i/bench/posts/field%02d/\x02value%d\x0001kbz4q9x3m7t2v8w1y5r6n0p%d", i, i, i))
	}
	parts := [][]byte{[]byte("records/s/0/n/bench/posts"), []byte("records/s/0/g/bench/posts/category/\x02c3"), []byte("records/s/0/g/bench/posts/tags/\x02t5")}
	b.ReportAllocs()
	for b.Loop() {
		st := &stage{}
		for _, k := range keys {
			st.put(k, nil, false)
		}
		for _, k := range parts {
			st.get(k)
			st.put(k, []byte{1}, false)
		}
	}
}
