package main

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// outageLoad puts records from several goroutines through an outage of the database (a
// restart, a failover): each answer is an acknowledgement (201), the outage's 500 INTERNAL, or
// wrong (anything else). TestDatabaseFailover and TestMultiNode/DatabaseRestartUnderLoad
// drive it.
type outageLoad struct {
	t        *testing.T
	mu       sync.Mutex
	acked    []string
	failed   int
	bad      []string
	more     chan struct{}
	done     chan struct{}
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// startOutageLoad starts writers goroutines that put record prefix-N (N counting up over all
// of them) with put until stop; a client answered anything but 201 retries after 5 ms.
func startOutageLoad(t *testing.T, writers int, prefix string, put func(op int, id string) (int, []byte, error)) *outageLoad {
	l := &outageLoad{t: t, more: make(chan struct{}, 1), done: make(chan struct{})}
	var n atomic.Int64
	for g := 0; g < writers; g++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				default:
				}
				op := int(n.Add(1))
				id := fmt.Sprintf("%s-%d", prefix, op)
				code, raw, err := put(op, id)
				l.mu.Lock()
				switch {
				case code == 201:
					l.acked = append(l.acked, id)
				case err == nil && code == 500 && bytes.Contains(raw, []byte(`"INTERNAL"`)):
					l.failed++
				default:
					l.bad = append(l.bad, fmt.Sprintf("%s: %d %s (%v)", id, code, raw, err))
				}
				l.mu.Unlock()
				if code != 201 {
					time.Sleep(5 * time.Millisecond) // a client retrying later
				}
				select {
				case l.more <- struct{}{}:
				default:
				}
			}
		}()
	}
	return l
}

// acks is how many writes were acknowledged so far.
func (l *outageLoad) acks() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// awaitAcks waits until want writes were acknowledged, failing the test after awaitDeadline.
func (l *outageLoad) awaitAcks(want int) {
	l.t.Helper()
	deadline := time.After(awaitDeadline)
	for l.acks() < want {
		select {
		case <-l.more:
		case <-deadline:
			l.t.Fatalf("%d writes acknowledged, want %d (the database or the gateway did not recover?)", l.acks(), want)
		}
	}
}

// stop ends the writers and waits for them (on every way out of a test: writers left running
// would fail what follows), then reports the answers that were neither 201 nor 500 INTERNAL.
func (l *outageLoad) stop() {
	l.stopOnce.Do(func() {
		close(l.done)
		l.wg.Wait()
		if len(l.bad) > 0 {
			l.t.Errorf("%d writes answered neither 201 nor 500 INTERNAL, first: %v", len(l.bad), l.bad[:min(5, len(l.bad))])
		}
	})
}
