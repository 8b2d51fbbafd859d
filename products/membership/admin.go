package membership

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// ConnectionView is a connection as the admin API shows it: everything but the identity
// provider's secret key, of which only its presence is told.
type ConnectionView struct {
	Name                 string         `json:"name"`
	Active               bool           `json:"active"`
	IdpPublishableKey    string         `json:"idpPublishableKey"`
	IdpInstanceDomain    string         `json:"idpInstanceDomain"`
	HasIdpSecretKey      bool           `json:"hasIdpSecretKey"`
	SignUpEnabled        bool           `json:"signUpEnabled"`
	OrganizationsEnabled bool           `json:"organizationsEnabled"`
	Appearance           map[string]any `json:"appearance,omitempty"`
}

// errNoDB says the service was built over a Source without the store the admin list reads.
var errNoDB = errors.New("membership: the admin list needs Options.DB")

// viewOf is the admin view of a stored connection.
func viewOf(c Connection) ConnectionView {
	return ConnectionView{Name: c.Name, Active: c.Active, IdpPublishableKey: c.IdpPublishableKey,
		IdpInstanceDomain: c.IdpInstanceDomain, HasIdpSecretKey: c.IdpSecretKey != "", SignUpEnabled: c.SignUpEnabled,
		OrganizationsEnabled: c.OrganizationsEnabled, Appearance: c.Appearance}
}

// Connections lists a project's connections in name order, secrets withheld.
func (s *Service) Connections(ctx context.Context, project string) ([]ConnectionView, error) {
	if s.db == nil {
		return nil, errNoDB
	}
	out := []ConnectionView{}
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: connPrefix(project)}, func(_, v []byte) (bool, error) {
			var c Connection
			if err := json.Unmarshal(v, &c); err != nil {
				return false, err
			}
			out = append(out, viewOf(c))
			return true, nil
		})
	})
	return out, err
}

// Notifier tells every listener of tenancy (this service's cache, the other nodes) about a
// change made outside an apply: Record journals it in the transaction that commits it (for
// the other nodes), Notify announces it after the commit; *tenancy.Service implements it.
type Notifier interface {
	Record(txn *store.Txn, changes []journal.Change) error
	Notify(ctx context.Context, changes []journal.Change)
}

var _ Notifier = (*tenancy.Service)(nil)

// SetActive is the dashboard's active switch: active true makes the named connection the
// project's one active connection (the others are made inactive in the same transaction, the
// document's rule of at most one); false leaves the project with none (GET /config answers
// 404 NO_ACTIVE_CONNECTION). The document owns the flag: the next apply that states the
// project's connections writes its own active: back. It answers ErrConnectionNotFound for an
// unknown name and the project's connections after the switch.
func (s *Service) SetActive(ctx context.Context, project, name string, active bool) ([]ConnectionView, error) {
	if s.db == nil {
		return nil, errNoDB
	}
	var changes []journal.Change
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		changes = nil
		found := false
		var conns []Connection
		var olds [][]byte
		err := txn.Iterate(store.IterOptions{Prefix: connPrefix(project)}, func(_, v []byte) (bool, error) {
			var c Connection
			if err := json.Unmarshal(v, &c); err != nil {
				return false, err
			}
			found = found || c.Name == name
			conns = append(conns, c)
			olds = append(olds, append([]byte(nil), v...))
			return true, nil
		})
		if err != nil {
			return err
		}
		if !found {
			return ErrConnectionNotFound
		}
		for i, c := range conns {
			want := c.Name == name && active
			if c.Active == want {
				continue
			}
			c.Active = want
			nv, err := json.Marshal(c)
			if err != nil {
				return err
			}
			if err := txn.Set(connKey(project, c.Name), nv); err != nil {
				return err
			}
			changes = append(changes, journal.Change{Op: "updated", Kind: "connection", Project: project, Name: c.Name, Old: olds[i], New: nv})
		}
		if s.notify != nil {
			return s.notify.Record(txn, changes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(changes) > 0 {
		if s.notify != nil {
			s.notify.Notify(ctx, changes)
		} else {
			s.Changed(ctx, changes)
		}
	}
	return s.Connections(ctx, project)
}
