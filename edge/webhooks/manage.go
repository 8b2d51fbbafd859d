package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// errNoTenancy reports an admin write on a service built without Options.Tenancy.
var errNoTenancy = errors.New("webhooks: admin writes need Options.Tenancy")

// PutHook creates or replaces a project's webhook as the tenants document would (the same
// checks; a missing secret keeps the stored one or is generated, a new one starts a rotation).
// It answers whether the webhook is new and the generated secret ("" when none was generated:
// it is shown once). An invalid webhook is a *tenancy.InvalidError with paths relative to it
// ("url", "events[0]"); an unknown project tenancy.ErrNotFound. Like any entry written outside
// the document, a later apply of a document naming the webhook replaces it.
func (s *Service) PutHook(ctx context.Context, project string, h Webhook) (created bool, secret string, err error) {
	if s.ten == nil {
		return false, "", errNoTenancy
	}
	var problems []tenancy.Problem
	if !tenancy.IsName(h.Name) {
		problems = append(problems, tenancy.Problem{Path: "name", Message: "must be 1-63 letters, digits, - or _"})
	}
	problems = append(problems, checkHook(ctx, s.egress, h)...)
	if len(problems) > 0 {
		return false, "", &tenancy.InvalidError{Problems: problems}
	}
	if _, err := s.ten.Project(ctx, project); err != nil {
		return false, "", err
	}
	var changes []journal.Change
	err = s.db.Update(ctx, func(txn *store.Txn) error {
		k := hookKey(project, h.Name)
		var prev StoredWebhook
		old, err := txn.Get(k)
		switch {
		case errors.Is(err, store.ErrNotFound):
			old = nil
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(old, &prev); err != nil {
				return fmt.Errorf("webhooks: stored webhook %s/%s: %w", project, h.Name, err)
			}
		}
		sw, generated, err := nextStored(prev, h, s.now())
		if err != nil {
			return err
		}
		secret = ""
		if generated {
			secret = sw.Secret
		}
		raw, err := json.Marshal(sw)
		if err != nil {
			return err
		}
		if err := txn.Set(k, raw); err != nil {
			return err
		}
		op := "updated"
		if old == nil {
			op = "created"
		}
		created = old == nil
		changes = []journal.Change{{Op: op, Kind: "webhook", Project: project, Name: h.Name, Old: old, New: raw}}
		return s.ten.Record(txn, changes)
	})
	if err != nil {
		return false, "", err
	}
	s.ten.Notify(ctx, changes)
	return created, secret, nil
}

// DeleteHook removes a project's webhook (ErrNotFound when there is none), as a pruning apply
// would; deliveries already queued are left as that apply leaves them.
func (s *Service) DeleteHook(ctx context.Context, project, name string) error {
	if s.ten == nil {
		return errNoTenancy
	}
	var changes []journal.Change
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		k := hookKey(project, name)
		old, err := txn.Get(k)
		if errors.Is(err, store.ErrNotFound) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if err := txn.Delete(k); err != nil {
			return err
		}
		changes = []journal.Change{{Op: "deleted", Kind: "webhook", Project: project, Name: name, Old: old}}
		return s.ten.Record(txn, changes)
	})
	if err != nil {
		return err
	}
	s.ten.Notify(ctx, changes)
	return nil
}
