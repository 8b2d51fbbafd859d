// Package legacy moves the data of tenancy's old layout to the packages that own it now. Until
// products owned their sections of the tenants document (release bdd018d and before), tenancy
// kept every section below its own keys:
//
//	tenancy/<kind>/<part>/.../<part>  -> one entry of a section (a form, a suppression, a record)
//
// and the project value tenancy/project/<id> held some sections as members of its own. The
// package knows that shape and no product: each owner hands Migrate a Converter per old kind it
// took over, and Migrate moves the entries, in chunks that survive a crash, once per data folder.
package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Func writes one entry of the old layout as its new owner stores it, in txn. parts are the
// key's parts after "tenancy/<kind>/" (["<org>", "<address>"], ["<project>", "<slug>"],
// ["<project>", "<collection>", "<id>"]); for a Converter with a Member, parts is ["<project>"]
// and v the old project value's member. v is a copy.
type Func func(txn *store.Txn, parts []string, v []byte) error

// Converter moves the entries of one kind of the old layout to their owner.
type Converter struct {
	// Kind names the old entries: their keys are tenancy/<Kind>/<part>/... Beside a Member it
	// only names the kind in errors.
	Kind string
	// Parts is the number of parts of the keys after tenancy/<Kind>/; the last part may hold the
	// key separator (an email address).
	Parts int
	// Member, when set, says the kind was a member of the old project value
	// tenancy/project/<id> ("captcha"): Move gets the member, and the project keeps the rest.
	Member string
	// Move writes one entry as its owner stores it now.
	Move Func
}

// doneKey marks a store whose old layout was moved (or that never had one). It sits where
// tenancy kept its server-wide values.
var doneKey = store.Key("tenancy", "meta", "legacy-sections-moved")

// chunk bounds the old entries moved per transaction (a record writes its indexes too).
const chunk = 256

// Migrate moves the entries of the old layout through convs, in their order (a kind that needs
// another moved first, records after their collections, comes after it), and deletes them,
// chunk entries per transaction: each entry is written anew and deleted in the same
// transaction, so a crash half-way leaves every entry either old or moved, and the next start
// moves the rest. A marker key makes later starts skip the scan. It reports how many entries
// moved. Run it before anything reads the sections, with the converters of every owner: an old
// entry that no converter moves stops it before anything moved (nothing would read the entry
// any more).
func Migrate(ctx context.Context, db *store.DB, convs []Converter) (int, error) {
	done := false
	if err := db.View(ctx, func(txn *store.Txn) error {
		var err error
		done, err = txn.Has(doneKey)
		return err
	}); err != nil || done {
		return 0, err
	}
	if err := unowned(ctx, db, convs); err != nil {
		return 0, err
	}
	moved := 0
	for _, c := range convs {
		for {
			n, more, err := migrateChunk(ctx, db, c)
			moved += n
			if err != nil {
				return moved, fmt.Errorf("legacy: moving the old %s entries: %w", c.Kind, err)
			}
			if !more {
				break
			}
		}
	}
	err := db.Update(ctx, func(txn *store.Txn) error { return txn.Set(doneKey, []byte("1")) })
	return moved, err
}

// tenancyOwn reports a kind of entries tenancy kept for itself in the old layout, and keeps.
func tenancyOwn(kind string) bool {
	switch kind {
	case "org", "project", "key", "keyname", "meta":
		return true
	}
	return false
}

// projectOwn reports a member of the old project value that is the project's own.
func projectOwn(member string) bool { return member == "id" || member == "org" || member == "name" }

// unowned reports the first old entry, or member of a project value, that no converter moves.
func unowned(ctx context.Context, db *store.DB, convs []Converter) error {
	kinds, members := map[string]bool{}, map[string]bool{}
	for _, c := range convs {
		if c.Member != "" {
			members[c.Member] = true
		} else {
			kinds[c.Kind] = true
		}
	}
	root := store.Prefix("tenancy")
	return db.View(ctx, func(txn *store.Txn) error {
		err := txn.Iterate(store.IterOptions{Prefix: root, KeysOnly: true}, func(k, _ []byte) (bool, error) {
			kind := k[len(root):]
			if i := bytes.IndexByte(kind, store.Sep); i >= 0 {
				kind = kind[:i]
			}
			if kinds[string(kind)] || tenancyOwn(string(kind)) {
				return true, nil
			}
			return false, fmt.Errorf("legacy: the old entry %s has no owner to move it to", k)
		})
		if err != nil {
			return err
		}
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix("tenancy", "project")}, func(k, v []byte) (bool, error) {
			var p map[string]json.RawMessage
			if json.Unmarshal(v, &p) != nil {
				return true, nil // not a project value of the old layout: nothing moves out of it
			}
			for m := range p {
				if !members[m] && !projectOwn(m) {
					return false, fmt.Errorf("legacy: the member %q of the old project value %s has no owner to move it to", m, k)
				}
			}
			return true, nil
		})
	})
}

// migrateChunk moves up to chunk entries of c's kind in one transaction and reports how many
// moved and whether more may remain.
func migrateChunk(ctx context.Context, db *store.DB, c Converter) (n int, more bool, err error) {
	p, nparts := store.Prefix("tenancy", c.Kind), c.Parts
	if c.Member != "" {
		p, nparts = store.Prefix("tenancy", "project"), 1
	}
	err = db.Update(ctx, func(txn *store.Txn) error {
		n, more = 0, false
		var keys, vals [][]byte
		err := txn.Iterate(store.IterOptions{Prefix: p}, func(k, v []byte) (bool, error) {
			if c.Member != "" {
				if m, _, err := member(v, c.Member); err != nil || len(m) == 0 {
					return true, nil
				}
			}
			if len(keys) == chunk {
				more = true
				return false, nil
			}
			keys = append(keys, bytes.Clone(k))
			vals = append(vals, bytes.Clone(v))
			return true, nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
		for i, k := range keys {
			parts := strings.SplitN(string(k[len(p):]), string(store.Sep), nparts)
			if len(parts) != nparts {
				return fmt.Errorf("malformed key %s", k)
			}
			if c.Member == "" {
				if err := c.Move(txn, parts, vals[i]); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				if err := txn.Delete(k); err != nil {
					return err
				}
				n++
				continue
			}
			// The project stays; only its old member moves out of it.
			m, rest, err := member(vals[i], c.Member)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if err := c.Move(txn, parts, m); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if err := txn.Set(k, rest); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, more, err
}

// member splits the JSON object obj into the value of its member name (nil when absent) and
// the object without it, its other members as they were, in their order.
func member(obj []byte, name string) (m, rest []byte, err error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object: %s", obj)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if t == name {
			m = bytes.Clone(v)
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(t)
		out.Write(k)
		out.WriteByte(':')
		out.Write(v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	out.WriteByte('}')
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		return nil, nil, err
	}
	return m, compact.Bytes(), nil
}

// Move is the usual body of a Func: it decodes the old value raw into v (a pointer to the
// owner's type) and stores v as JSON at the owner's key k, unless k holds a value already
// (written by this release, so newer than the old entry).
func Move(txn *store.Txn, k, raw []byte, v any) error {
	if ok, err := txn.Has(k); err != nil || ok {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return err
	}
	nv, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.Set(k, nv)
}
