package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dgraph-io/badger/v4/pb"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
)

// The backup stream is badger's (DB.Backup): a sequence of protobuf KVLists, each preceded
// by its size as a little-endian uint64. A key's entries in a list are newest first; an entry
// whose meta has bitDelete is a deletion. The postgres backend writes each key once, at
// version 1, so badger's Load takes the stream as it takes its own.
const (
	backupBitDelete = 1 << 0 // badger's bitDelete
	backupListKeys  = 1000   // entries per KVList the postgres backend writes
	backupListBytes = 4 << 20
	backupMaxList   = 1 << 30 // a size above this is a damaged stream, not a list
)

// backup streams the table in key order from one REPEATABLE READ snapshot.
func (e *pgEngine) backup(w io.Writer) error {
	if !e.enter() {
		return ErrClosed
	}
	defer e.leave()
	ctx := context.Background()
	t, err := e.txn(ctx, pgBeginView)
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	defer t.release()
	t.timeout = 0 // one statement streams the whole table: it takes what it takes
	bw := bufio.NewWriterSize(w, 1<<20)
	list := &pb.KVList{}
	size := 0
	send := func() error {
		if len(list.Kv) == 0 {
			return nil
		}
		err := writeKVList(bw, list)
		list.Kv, size = list.Kv[:0], 0
		return err
	}
	// One statement streams every row (pgx reads them off the socket as they come).
	err = t.query(func(r pgx.Rows) error {
		var k, v []byte
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		list.Kv = append(list.Kv, &pb.KV{Key: k, Value: v, Version: 1, UserMeta: []byte{0}, Meta: []byte{0}})
		size += len(k) + len(v)
		if len(list.Kv) >= backupListKeys || size >= backupListBytes {
			return send()
		}
		return nil
	}, `SELECT k, v FROM gatehouse_kv ORDER BY k`)
	if err == nil {
		err = send()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}

func writeKVList(w io.Writer, list *pb.KVList) error {
	buf, err := proto.Marshal(list)
	if err != nil {
		return err
	}
	if err := binary.Write(w, binary.LittleEndian, uint64(len(buf))); err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// load reads a backup stream (either backend's) into the table through a Batch.
func (e *pgEngine) load(r io.Reader) error {
	b := e.newBatch()
	defer b.cancel()
	err := scanBackup(r, func(key, val []byte, del bool) error {
		if del {
			return b.delete(key)
		}
		if err := checkKey(key); err != nil {
			return err // a badger stream may hold keys written before MaxKeyLen was enforced
		}
		return b.set(key, val)
	})
	if err == nil {
		err = b.flush()
	}
	if err == nil {
		err = e.sync()
	}
	if err != nil {
		return fmt.Errorf("store: load a backup: %w", err)
	}
	return nil
}

// scanBackup reads a backup stream and calls fn with the newest entry of each key: its value,
// or del for a deletion or an expired entry.
func scanBackup(r io.Reader, fn func(key, val []byte, del bool) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	now := uint64(time.Now().Unix())
	var last []byte
	for {
		var sz uint64
		if err := binary.Read(br, binary.LittleEndian, &sz); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if sz > backupMaxList {
			return fmt.Errorf("a list of %d bytes: not a backup stream", sz)
		}
		// Read, not allocate, the announced size: a damaged length costs what the stream holds.
		buf, err := io.ReadAll(io.LimitReader(br, int64(sz)))
		if err != nil {
			return err
		}
		if uint64(len(buf)) != sz {
			return io.ErrUnexpectedEOF
		}
		list := &pb.KVList{}
		if err := proto.Unmarshal(buf, list); err != nil {
			return err
		}
		for _, kv := range list.Kv {
			if kv.StreamDone || bytes.Equal(kv.Key, last) {
				continue // an older version of the key just seen
			}
			last = kv.Key
			del := (len(kv.Meta) > 0 && kv.Meta[0]&backupBitDelete != 0) || (kv.ExpiresAt != 0 && kv.ExpiresAt <= now)
			if err := fn(kv.Key, kv.Value, del); err != nil {
				return err
			}
		}
	}
}
