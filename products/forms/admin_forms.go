package forms

import (
	"context"
	"encoding/json"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Forms returns a project's form definitions as the tenants document gives them (published or
// not, every field, notifications), in slug order. The project's captcha keys are not part of
// a definition, so no secret is returned.
func (s *Service) Forms(ctx context.Context, project string) ([]Form, error) {
	out := []Form{}
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(prefixSub, "def", project)}, func(_, v []byte) (bool, error) {
			var f Form
			if err := json.Unmarshal(v, &f); err != nil {
				return false, err
			}
			out = append(out, f)
			return true, nil
		})
	})
	return out, err
}
