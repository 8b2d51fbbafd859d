package tenancy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Until products owned their sections of the tenants document (release bdd018d and before),
// tenancy kept every section below its own keys:
//
//	tenancy/suppress/<org>/<address>          -> suppression
//	tenancy/form/<project>/<slug>             -> form
//	tenancy/template/<project>/<slug>         -> email template
//	tenancy/connection/<project>/<name>       -> membership connection
//	tenancy/collection/<project>/<name>       -> collection (no records)
//	tenancy/record/<project>/<collection>/<id> -> document record with createdAt/updatedAt
//	tenancy/plugin/<project>/<name>           -> plugin registration
//	tenancy/module/<project>/<name>           -> uploaded Wasm module bytes
//
// and the project value tenancy/project/<id> held "captcha" (the project's captcha keys) and
// "email" (sender defaults). MigrateLegacy moves all of it to the products' own keys.

// LegacyFunc writes one entry of the old layout as its new owner stores it, in txn. parts are
// the key's parts after "tenancy/<kind>/" (["<org>", "<address>"], ["<project>", "<slug>"],
// ["<project>", "<collection>", "<id>"]); for the "captcha" and "sender" kinds parts is
// ["<project>"] and v the old project value's "captcha" or "email" member. v is a copy.
type LegacyFunc func(txn *store.Txn, parts []string, v []byte) error

// LegacyKinds are the kinds of the old layout, in the order MigrateLegacy moves them
// (collections before their records), each with the number of parts of its keys.
var LegacyKinds = []struct {
	Kind  string
	Parts int
}{
	{"suppress", 2}, {"form", 2}, {"template", 2}, {"connection", 2}, {"collection", 2},
	{"record", 3}, {"plugin", 2}, {"module", 2}, {"captcha", 1}, {"sender", 1},
}

// legacyDoneKey marks a store whose old layout was moved (or that never had one).
var legacyDoneKey = key(kMeta, "legacy-sections-moved")

// legacyChunk bounds the old entries moved per transaction (a record writes its indexes too).
const legacyChunk = 256

// MigrateLegacy moves the entries of the old layout to their owners through conv (a LegacyFunc
// per kind of LegacyKinds) and deletes them, legacyChunk entries per transaction: each entry is
// written anew and deleted in the same transaction, so a crash half-way leaves every entry either
// old or moved, and the next start moves the rest. A marker key makes later starts skip the
// scan. It reports how many entries moved; an old entry whose kind has no converter is an error
// (nothing would read it any more). Run it before anything reads the sections.
func MigrateLegacy(ctx context.Context, db *store.DB, conv map[string]LegacyFunc) (int, error) {
	done := false
	if err := db.View(ctx, func(txn *store.Txn) error {
		var err error
		done, err = txn.Has(legacyDoneKey)
		return err
	}); err != nil || done {
		return 0, err
	}
	moved := 0
	for _, k := range LegacyKinds {
		kind := k.Kind
		p := prefix(kind)
		if kind == "captcha" || kind == "sender" {
			p = prefix(kProject)
		}
		for {
			n, more, err := migrateChunk(ctx, db, kind, k.Parts, p, conv[kind])
			moved += n
			if err != nil {
				return moved, fmt.Errorf("tenancy: moving the old %s entries: %w", kind, err)
			}
			if !more {
				break
			}
		}
	}
	err := db.Update(ctx, func(txn *store.Txn) error { return txn.Set(legacyDoneKey, []byte("1")) })
	return moved, err
}

// legacyProject is the old project value: ProjectInfo with the sections it used to hold.
type legacyProject struct {
	ProjectInfo
	Captcha json.RawMessage `json:"captcha,omitempty"`
	Email   json.RawMessage `json:"email,omitempty"`
}

// member returns the project value's member of the "captcha" or "sender" kind.
func (p *legacyProject) member(kind string) *json.RawMessage {
	if kind == "captcha" {
		return &p.Captcha
	}
	return &p.Email
}

// migrateChunk moves up to legacyChunk entries of kind below p in one transaction and reports
// how many moved and whether more may remain.
func migrateChunk(ctx context.Context, db *store.DB, kind string, nparts int, p []byte, fn LegacyFunc) (n int, more bool, err error) {
	err = db.Update(ctx, func(txn *store.Txn) error {
		n, more = 0, false
		var keys, vals [][]byte
		err := txn.Iterate(store.IterOptions{Prefix: p}, func(k, v []byte) (bool, error) {
			if kind == "captcha" || kind == "sender" {
				var lp legacyProject
				if json.Unmarshal(v, &lp) != nil || len(*lp.member(kind)) == 0 {
					return true, nil
				}
			}
			if len(keys) == legacyChunk {
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
		if fn == nil {
			return fmt.Errorf("%d entries (first %s) and no owner to move them to", len(keys), keys[0])
		}
		for i, k := range keys {
			parts := strings.SplitN(string(k[len(p):]), string(store.Sep), nparts)
			if len(parts) != nparts {
				return fmt.Errorf("malformed key %s", k)
			}
			if kind != "captcha" && kind != "sender" {
				if err := fn(txn, parts, vals[i]); err != nil {
					return fmt.Errorf("%s: %w", k, err)
				}
				if err := txn.Delete(k); err != nil {
					return err
				}
				n++
				continue
			}
			// The project stays; only its old member moves out of it.
			var lp legacyProject
			if err := json.Unmarshal(vals[i], &lp); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if err := fn(txn, parts, *lp.member(kind)); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			*lp.member(kind) = nil
			nv, err := json.Marshal(lp)
			if err != nil {
				return err
			}
			if err := txn.Set(k, nv); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, more, err
}

// MoveLegacy is the usual body of a LegacyFunc: it decodes the old value raw into v (a pointer to
// the owner's type) and stores v as JSON at the owner's key k, unless k holds a value already
// (written by this release, so newer than the old entry).
func MoveLegacy(txn *store.Txn, k, raw []byte, v any) error {
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
