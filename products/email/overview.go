package email

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Overview is the email part of a project's overview (the dashboard's first page): its messages
// by status, and how many were accepted on each day from a given one.
type Overview struct {
	Messages int            `json:"messages"`
	ByStatus map[string]int `json:"byStatus"`
	ByDay    map[string]int `json:"messagesByDay"`
}

// Overview counts a project's stored messages by status, those created on or after since (a
// day, YYYY-MM-DD, UTC) by day. Messages are not indexed by project, so it reads every
// message: a dashboard read, not a hot path.
func (s *Service) Overview(ctx context.Context, project, since string) (Overview, error) {
	out := Overview{ByStatus: map[string]int{}, ByDay: map[string]int{}}
	err := s.db.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: store.Prefix(root, kMsg)}, func(k, v []byte) (bool, error) {
			var m struct {
				Project   string `json:"project"`
				Status    string `json:"status"`
				CreatedAt string `json:"createdAt"`
			}
			if err := json.Unmarshal(v, &m); err != nil {
				return false, fmt.Errorf("email: decode message %s: %w", k, err)
			}
			if m.Project != project {
				return true, nil
			}
			out.Messages++
			out.ByStatus[m.Status]++
			if len(m.CreatedAt) >= 10 && m.CreatedAt[:10] >= since {
				out.ByDay[m.CreatedAt[:10]]++
			}
			return true, nil
		})
	})
	return out, err
}
