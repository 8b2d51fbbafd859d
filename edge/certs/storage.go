package certs

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"

	"github.com/gatehouse-dev/gatehouse/edge/lease"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Key layout of what certmagic stores (certificates, their keys and metadata, the ACME account,
// challenge tokens shared between nodes) and of its locks:
//
//	tls/kv/<certmagic key>  = 8 bytes of modification time (unix nanoseconds, big endian) + value
//	tls/lock/<lock name>    = a lease (edge/lease): the claim that holds it, until when
var (
	kvPrefix   = []byte("tls/kv/")
	lockPrefix = []byte("tls/lock/")
)

// Lock timing: a lock is a lease of lockTTL, renewed every lockTTL/3 while held, so a node that
// dies holding one frees it within lockTTL; a waiter looks again every lockPoll.
const (
	lockTTL  = time.Minute
	lockPoll = time.Second
)

// Storage is certmagic's Storage over the gateway's store: on badger one node keeps its
// certificates in its own database; on the shared postgres backend every node reads the same
// ones, and the locks (leases in the store, decided by its transactions) make one node obtain
// or renew each certificate while the others wait and then load it.
type Storage struct {
	db   *store.DB
	node *lease.Node
	now  func() time.Time

	mu   sync.Mutex
	held map[string]*heldLock // by lock name: the claims this process holds
}

var (
	_ certmagic.Storage   = (*Storage)(nil)
	_ certmagic.TryLocker = (*Storage)(nil)
)

// heldLock is a lock this process holds, kept alive until Unlock.
type heldLock struct {
	claim string
	stop  chan struct{}
	done  chan struct{}
}

// NewStorage returns the storage over db; node names this process among those sharing db
// (lock holders are claims of it).
func NewStorage(db *store.DB, node *lease.Node) *Storage {
	return &Storage{db: db, node: node, now: time.Now, held: map[string]*heldLock{}}
}

func kvKey(key string) []byte { return append(bytes.Clone(kvPrefix), key...) }

// Store writes value at key.
func (s *Storage) Store(ctx context.Context, key string, value []byte) error {
	v := make([]byte, 8, 8+len(value))
	binary.BigEndian.PutUint64(v, uint64(s.now().UnixNano()))
	v = append(v, value...)
	return s.db.Update(ctx, func(tx *store.Txn) error { return tx.Set(kvKey(key), v) })
}

// Load returns the value at key, or fs.ErrNotExist.
func (s *Storage) Load(ctx context.Context, key string) ([]byte, error) {
	var out []byte
	err := s.db.View(ctx, func(tx *store.Txn) error {
		v, err := tx.Get(kvKey(key))
		if err != nil {
			return err
		}
		if len(v) < 8 {
			return fmt.Errorf("certs: stored value of %q is damaged", key)
		}
		out = bytes.Clone(v[8:])
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, fs.ErrNotExist
	}
	return out, err
}

// Delete removes key and everything below it (a "directory"); a missing key is fs.ErrNotExist.
func (s *Storage) Delete(ctx context.Context, key string) error {
	found := false
	err := s.db.Update(ctx, func(tx *store.Txn) error {
		found = false
		k := kvKey(key)
		if ok, err := tx.Has(k); err != nil {
			return err
		} else if ok {
			found = true
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		var below [][]byte
		err := tx.Iterate(store.IterOptions{Prefix: append(k, '/'), KeysOnly: true}, func(k, _ []byte) (bool, error) {
			below = append(below, bytes.Clone(k))
			return true, nil
		})
		if err != nil {
			return err
		}
		for _, b := range below {
			found = true
			if err := tx.Delete(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && !found {
		return fs.ErrNotExist
	}
	return err
}

// Exists reports whether key holds a value.
func (s *Storage) Exists(ctx context.Context, key string) bool {
	ok := false
	_ = s.db.View(ctx, func(tx *store.Txn) error {
		var err error
		ok, err = tx.Has(kvKey(key))
		return err
	})
	return ok
}

// List returns the keys below path: all of them (recursive) or the names one level down, as
// certmagic's file storage lists a directory ("path/name").
func (s *Storage) List(ctx context.Context, path string, recursive bool) ([]string, error) {
	prefix := kvKey(strings.TrimSuffix(path, "/") + "/")
	if path == "" {
		prefix = bytes.Clone(kvPrefix)
	}
	var out []string
	seen := map[string]bool{}
	err := s.db.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(store.IterOptions{Prefix: prefix, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			rest := string(k[len(prefix):])
			if !recursive {
				rest, _, _ = strings.Cut(rest, "/")
			}
			name := string(prefix[len(kvPrefix):]) + rest
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
			return true, nil
		})
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fs.ErrNotExist
	}
	return out, nil
}

// Stat describes key: a value (terminal) or a prefix of others.
func (s *Storage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	var info certmagic.KeyInfo
	err := s.db.View(ctx, func(tx *store.Txn) error {
		v, err := tx.Get(kvKey(key))
		if err == nil {
			if len(v) < 8 {
				return fmt.Errorf("certs: stored value of %q is damaged", key)
			}
			info = certmagic.KeyInfo{Key: key, Modified: time.Unix(0, int64(binary.BigEndian.Uint64(v))), Size: int64(len(v) - 8), IsTerminal: true}
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		below := false
		err = tx.Iterate(store.IterOptions{Prefix: kvKey(key + "/"), KeysOnly: true}, func(_, _ []byte) (bool, error) {
			below = true
			return false, nil
		})
		if err != nil {
			return err
		}
		if !below {
			return fs.ErrNotExist
		}
		info = certmagic.KeyInfo{Key: key}
		return nil
	})
	return info, err
}

// Lock takes the lock name, waiting while another claim (of this node or another) holds it,
// until ctx ends. A held lock is renewed in the background until Unlock.
func (s *Storage) Lock(ctx context.Context, name string) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		ok, err := s.TryLock(ctx, name)
		if err != nil || ok {
			return err
		}
		t.Reset(lockPoll)
	}
}

// TryLock takes the lock name when nobody holds it (or its lease ran out) and reports whether
// it did.
func (s *Storage) TryLock(ctx context.Context, name string) (bool, error) {
	claim := s.node.Claim()
	key := append(bytes.Clone(lockPrefix), name...)
	taken := false
	err := s.db.Update(ctx, func(tx *store.Txn) error {
		taken = false
		now := s.now()
		l, ok, err := lease.Read(tx, key)
		if err != nil {
			return err
		}
		if ok && !l.Expired(now.UnixNano()) {
			return nil
		}
		taken = true
		return lease.Write(tx, key, lease.Lease{Holder: claim, Until: now.Add(lockTTL).UnixNano()})
	})
	if err != nil || !taken {
		return false, err
	}
	h := &heldLock{claim: claim, stop: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	prev := s.held[name]
	s.held[name] = h
	s.mu.Unlock()
	if prev != nil { // its lease ran out while this process still thought it held it
		close(prev.stop)
		<-prev.done
	}
	go s.keep(key, h)
	return true, nil
}

// keep renews the lease of a held lock until Unlock stops it.
func (s *Storage) keep(key []byte, h *heldLock) {
	defer close(h.done)
	t := time.NewTicker(lockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), lockTTL/3)
		_ = s.db.Update(ctx, func(tx *store.Txn) error {
			l, ok, err := lease.Read(tx, key)
			if err != nil || !ok || l.Holder != h.claim {
				return err // lost (ran out and taken over): nothing to renew
			}
			return lease.Write(tx, key, lease.Lease{Holder: h.claim, Until: s.now().Add(lockTTL).UnixNano()})
		})
		cancel()
	}
}

// Unlock gives the lock name up (when this process still holds it).
func (s *Storage) Unlock(ctx context.Context, name string) error {
	s.mu.Lock()
	h := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if h == nil {
		return fmt.Errorf("certs: unlock of %q, which this node does not hold", name)
	}
	close(h.stop)
	<-h.done
	key := append(bytes.Clone(lockPrefix), name...)
	return s.db.Update(ctx, func(tx *store.Txn) error {
		l, ok, err := lease.Read(tx, key)
		if err != nil || !ok || l.Holder != h.claim {
			return err
		}
		return tx.Delete(key)
	})
}

// Close stops renewing the locks still held (their leases run out; another node takes over).
func (s *Storage) Close() {
	s.mu.Lock()
	held := s.held
	s.held = map[string]*heldLock{}
	s.mu.Unlock()
	for _, h := range held {
		close(h.stop)
		<-h.done
	}
}
