package membership

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Source reads a project's active connection; *tenancy.Service implements it. It answers
// tenancy.ErrNotFound when the project has no active connection.
type Source interface {
	ActiveConnection(ctx context.Context, project string) (tenancy.Connection, error)
}

var _ Source = (*tenancy.Service)(nil)

// DefaultCacheSize is the number of projects whose answer the service keeps.
const DefaultCacheSize = 4096

// entry is one cached answer: an Answer, or the knowledge that there is no active connection.
type entry struct {
	answer *Answer
	none   bool
}

// Service answers the boot configuration of a project, through a per-project LRU cache.
type Service struct {
	src   Source
	cache *lru.Cache[string, entry]
	// mu and gen keep a read that raced an invalidation from caching what it read before it:
	// a fill is stored only if no invalidation happened since the read began.
	mu  sync.Mutex
	gen uint64
}

// NewService returns a Service reading from src and caching up to size projects
// (DefaultCacheSize when size <= 0). Register Changed with tenancy's OnChange.
func NewService(src Source, size int) *Service {
	if size <= 0 {
		size = DefaultCacheSize
	}
	c, _ := lru.New[string, entry](size)
	return &Service{src: src, cache: c}
}

// Config returns the encoded boot configuration of project's active connection, or
// ErrNoActiveConnection.
func (s *Service) Config(ctx context.Context, project string) (*Answer, error) {
	if e, ok := s.cache.Get(project); ok {
		if e.none {
			return nil, ErrNoActiveConnection
		}
		return e.answer, nil
	}
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()

	var e entry
	conn, err := s.src.ActiveConnection(ctx, project)
	switch {
	case errors.Is(err, tenancy.ErrNotFound):
		e.none = true
	case err != nil:
		return nil, fmt.Errorf("membership: reading the active connection of %q: %w", project, err)
	default:
		body, err := json.Marshal(configOf(conn))
		if err != nil {
			return nil, fmt.Errorf("membership: encoding the config of %q: %w", project, err)
		}
		e.answer = &Answer{Body: body, ETag: etagOf(body)}
	}

	s.mu.Lock()
	if s.gen == gen {
		s.cache.Add(project, e)
	}
	s.mu.Unlock()
	if e.none {
		return nil, ErrNoActiveConnection
	}
	return e.answer, nil
}

// Changed invalidates the cached answers an apply may have changed: the projects whose
// connections changed, and deleted or updated projects. Its signature fits tenancy's OnChange.
func (s *Service) Changed(_ context.Context, changes []tenancy.Change) {
	var projects []string
	for _, c := range changes {
		switch c.Kind {
		case "connection":
			p, _, _ := strings.Cut(c.Path, "/")
			projects = append(projects, p)
		case "project":
			projects = append(projects, c.Path)
		}
	}
	if len(projects) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	for _, p := range projects {
		s.cache.Remove(p)
	}
}

// Purge forgets every cached answer.
func (s *Service) Purge() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	s.cache.Purge()
}
