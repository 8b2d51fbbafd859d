package email

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Key layout. Everything the product stores lives below "email/"; <ulid> is the message id
// without its "msg_" prefix, so keys sort by creation time.
//
//	email/msg/<ulid>                    -> Message (JSON)
//	email/q/<due, 20 digits>/<ulid>     -> "" (the queue: due time, then id)
//	email/st/<status>/<ulid>            -> "" (list filter by status)
//	email/tag/<tag>/<ulid>              -> "" (list filter by tag)
//	email/idem/<project>/<sha256(key)>  -> idemEntry (Idempotency-Key, 24 h)
const (
	root   = "email"
	kMsg   = "msg"
	kQueue = "q"
	kState = "st"
	kTag   = "tag"
	kIdem  = "idem"
)

// idPrefix starts every public message id.
const idPrefix = "msg_"

func msgKey(ulid string) []byte { return store.Key(root, kMsg, ulid) }

func queueKey(due int64, ulid string) []byte {
	return store.Key(root, kQueue, fmt.Sprintf("%020d", due), ulid)
}

func stateKey(s Status, ulid string) []byte { return store.Key(root, kState, string(s), ulid) }

func tagKey(tag, ulid string) []byte { return store.Key(root, kTag, tag, ulid) }

func idemKey(project, key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return store.Key(root, kIdem, project, hex.EncodeToString(sum[:]))
}

// idemEntry remembers the first message sent with an Idempotency-Key.
type idemEntry struct {
	ID string `json:"id"`
	At int64  `json:"at"` // unix nanoseconds
	// Req is the SHA-256 of the request the key first came with (hex; empty in older entries).
	Req string `json:"req,omitempty"`
}

// splitQueueKey returns the due time and ulid of a queue key.
func splitQueueKey(k []byte) (int64, string, bool) {
	rest := strings.TrimPrefix(string(k), root+"/"+kQueue+"/")
	due, ulid, ok := strings.Cut(rest, "/")
	if !ok || len(due) != 20 {
		return 0, "", false
	}
	var n int64
	for _, c := range due {
		if c < '0' || c > '9' {
			return 0, "", false
		}
		n = n*10 + int64(c-'0')
	}
	return n, ulid, true
}

// ulidOf returns the store id of a public message id, or "" when it is not one.
func ulidOf(id string) string {
	u, ok := strings.CutPrefix(id, idPrefix)
	if !ok || len(u) != 26 {
		return ""
	}
	for _, c := range u {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return ""
		}
	}
	return u
}

// insert writes a new message with its queue entry and index entries.
func insert(txn *store.Txn, m *Message, raw []byte) error {
	u := strings.TrimPrefix(m.ID, idPrefix)
	if err := txn.Set(msgKey(u), raw); err != nil {
		return err
	}
	if m.Due != 0 {
		if err := txn.Set(queueKey(m.Due, u), nil); err != nil {
			return err
		}
	}
	if err := txn.Set(stateKey(m.Status, u), nil); err != nil {
		return err
	}
	for _, t := range m.Tags {
		if err := txn.Set(tagKey(t, u), nil); err != nil {
			return err
		}
	}
	return nil
}

// load reads a message by store id; a missing one is ErrMessageNotFound.
func load(txn *store.Txn, ulid string) (*Message, error) {
	raw, err := txn.Get(msgKey(ulid))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrMessageNotFound
	}
	if err != nil {
		return nil, err
	}
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: decode message %s: %v", errInternal, ulid, err)
	}
	return &m, nil
}

// save writes m back after a change from status prev and queue due time prevDue, keeping
// the status index and queue entry in step.
func save(txn *store.Txn, m *Message, prev Status, prevDue int64) error {
	u := strings.TrimPrefix(m.ID, idPrefix)
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := txn.Set(msgKey(u), raw); err != nil {
		return err
	}
	if prev != m.Status {
		if err := txn.Delete(stateKey(prev, u)); err != nil {
			return err
		}
		if err := txn.Set(stateKey(m.Status, u), nil); err != nil {
			return err
		}
	}
	if prevDue != m.Due {
		if prevDue != 0 {
			if err := txn.Delete(queueKey(prevDue, u)); err != nil {
				return err
			}
		}
		if m.Due != 0 {
			if err := txn.Set(queueKey(m.Due, u), nil); err != nil {
				return err
			}
		}
	}
	return nil
}
