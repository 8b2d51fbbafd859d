package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
)

// Source reads a project's active connection; Store implements it over the store. It answers
// tenancy.ErrNotFound when the project has no active connection.
type Source interface {
	ActiveConnection(ctx context.Context, project string) (Connection, error)
}

// DefaultCacheSize is the number of projects whose answer the service keeps.
const DefaultCacheSize = 4096

// entry is one cached answer: an Answer, or the knowledge that there is no active connection.
type entry struct {
	answer *Answer
	none   bool
}

// Options configures NewService.
type Options struct {
	// DB is the store the membership section writes its connections to.
	DB *store.DB
	// Source reads connections (Store{DB} when nil; tests give a fake).
	Source Source
	// CacheSize is the number of projects whose answer is kept (DefaultCacheSize when <= 0).
	CacheSize int
	// Notify announces the admin API's active switch to every tenancy listener (the caches of
	// this node and, through tenancy, the other nodes); nil drops this service's cache only.
	Notify Notifier
}

// Service answers the boot configuration of a project, through the tenancy cache (per project,
// generation-guarded, dropped by connection and project changes).
type Service struct {
	src    Source
	db     *store.DB // the admin list's store; nil when only a Source was given
	notify Notifier
	cache  *tenantcache.Cache[entry]
}

// NewService returns a Service; it starts nothing. Join it to tenancy with Service.Add.
func NewService(o Options) (*Service, error) {
	if o.Source == nil {
		if o.DB == nil {
			return nil, errors.New("membership: DB or Source is required")
		}
		o.Source = Store{DB: o.DB}
	}
	if o.CacheSize <= 0 {
		o.CacheSize = DefaultCacheSize
	}
	return &Service{src: o.Source, db: o.DB, notify: o.Notify, cache: tenantcache.New[entry](o.CacheSize, "connection", "project")}, nil
}

// Sections implements tenancy.Owner: the membership key of every project.
func (s *Service) Sections() []tenancy.Section { return []tenancy.Section{Section{}} }

var _ tenancy.Owner = (*Service)(nil)

// Config returns the encoded boot configuration of project's active connection, or
// ErrNoActiveConnection.
func (s *Service) Config(ctx context.Context, project string) (*Answer, error) {
	e, err := s.cache.Get(ctx, project, "", func(ctx context.Context) (entry, error) {
		var e entry
		conn, err := s.src.ActiveConnection(ctx, project)
		switch {
		case errors.Is(err, tenancy.ErrNotFound):
			e.none = true
		case err != nil:
			return e, fmt.Errorf("membership: reading the active connection of %q: %w", project, err)
		default:
			body, err := json.Marshal(configOf(conn))
			if err != nil {
				return e, fmt.Errorf("membership: encoding the config of %q: %w", project, err)
			}
			e.answer = &Answer{Body: body, ETag: etagOf(body)}
		}
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	if e.none {
		return nil, ErrNoActiveConnection
	}
	return e.answer, nil
}

// Changed drops the cached answers an apply may have changed: the projects whose connections
// changed, and deleted or updated projects. Its signature fits tenancy's OnChange.
func (s *Service) Changed(ctx context.Context, changes []journal.Change) {
	s.cache.Changed(ctx, changes)
}

// Purge forgets every cached answer.
func (s *Service) Purge() { s.cache.Purge() }
