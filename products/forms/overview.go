package forms

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Overview is the forms part of a project's overview (the dashboard's first page): how many
// submissions its inbox holds, and how many arrived on each day from a given one.
type Overview struct {
	Submissions int            `json:"submissions"`
	ByDay       map[string]int `json:"submissionsByDay"`
}

// Overview counts a project's stored submissions, those created on or after since (a day,
// YYYY-MM-DD, UTC) by day. It reads every submission of the project: a dashboard read, not a
// hot path.
func (s *Service) Overview(ctx context.Context, project, since string) (Overview, error) {
	out := Overview{ByDay: map[string]int{}}
	err := s.o.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(prefixSub, "sub", project)}, func(k, v []byte) (bool, error) {
			var sub struct {
				CreatedAt string `json:"createdAt"`
			}
			if err := json.Unmarshal(v, &sub); err != nil {
				return false, fmt.Errorf("forms: decode submission %s: %w", k, err)
			}
			out.Submissions++
			if day := dayOf(sub.CreatedAt); day >= since {
				out.ByDay[day]++
			}
			return true, nil
		})
	})
	return out, err
}

// dayOf is the day (YYYY-MM-DD) of an RFC 3339 UTC timestamp ("" when too short).
func dayOf(ts string) string {
	if len(ts) < 10 {
		return ""
	}
	return ts[:10]
}
