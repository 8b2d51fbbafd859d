package membership

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse-dev/gatehouse/edge/store"
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
			out = append(out, ConnectionView{Name: c.Name, Active: c.Active, IdpPublishableKey: c.IdpPublishableKey,
				IdpInstanceDomain: c.IdpInstanceDomain, HasIdpSecretKey: c.IdpSecretKey != "", SignUpEnabled: c.SignUpEnabled,
				OrganizationsEnabled: c.OrganizationsEnabled, Appearance: c.Appearance})
			return true, nil
		})
	})
	return out, err
}
