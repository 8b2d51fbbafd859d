package email

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
)

// Tenants is what the product reads of tenancy; *tenancy.Service implements it.
type Tenants interface {
	Org(ctx context.Context, slug string) (tenancy.OrgInfo, error)
	Project(ctx context.Context, id string) (tenancy.ProjectInfo, error)
}

var _ Tenants = (*tenancy.Service)(nil)

// SendHook filters a send before it is queued: the plugin hook point "email.send". It sees
// the rendered message and, for a template send, the variables it was rendered with. It may
// change the message's content, tags and metadata, or the variables (the template is then
// rendered again with them), or refuse the send by returning an error (an *apierr.Error keeps
// its code; any other error becomes 422 SEND_REJECTED).
type SendHook interface {
	FilterSend(ctx context.Context, project string, d *Draft) error
}

// Draft is a send as a SendHook sees it.
type Draft struct {
	Message *Message
	// Variables are the template variables of a template send (nil for an inline send).
	Variables Vars
}

// IdempotencyWindow is how long an Idempotency-Key returns the first message.
const IdempotencyWindow = 24 * time.Hour

// Limits on a send request.
const (
	MaxBodyBytes  = 1 << 20 // the whole JSON request
	maxTags       = 20
	maxTagLen     = 64
	maxMetadata   = 50
	maxMetaKeyLen = 64
	maxMetaValLen = 1024
	maxSubjectLen = 998
	maxIdemKeyLen = 256
)

// Options configures NewService.
type Options struct {
	DB      *store.DB
	Tenancy Tenants
	// Log receives the service's warnings (discarded when nil).
	Log *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// DefaultFrom is the sender when neither the request nor the project names one.
	DefaultFrom Address
	// Plugins runs the email.send hook on sends before they are queued (edge/cmd/gatehouse
	// adapts the plugin host to it); nil for none.
	Plugins SendHook
	// Registerer receives the product's metrics (metrics.go); nil records none.
	Registerer prometheus.Registerer
	// Events hears every status move inside its transaction (events.go); nil for none.
	Events Events
}

// Service holds the product's rules: validating and queuing sends, reading messages and
// applying status moves.
type Service struct {
	db      *store.DB
	tenants Tenants
	log     *slog.Logger
	now     func() time.Time
	from    Address
	hook    SendHook
	metrics *Metrics
	events  Events

	wake chan struct{}
	// closeMu guards closed: senders hold it shared while they write a send.
	closeMu sync.RWMutex
	closed  bool
	// projects and templates cache tenancy reads (found or not); Changed drops stale entries.
	projects  *tenantcache.Cache[found[project]]
	templates *tenantcache.Cache[found[Template]]
}

// NewService returns the service; it starts nothing (sends are group-committed by the store).
func NewService(o Options) (*Service, error) {
	if o.DB == nil || o.Tenancy == nil {
		return nil, errors.New("email: NewService needs a DB and Tenancy")
	}
	s := &Service{db: o.DB, tenants: o.Tenancy, log: o.Log, now: o.Now, from: o.DefaultFrom, hook: o.Plugins, metrics: newMetrics(o.Registerer), events: o.Events,
		wake: make(chan struct{}, 1)}
	s.projects = tenantcache.New[found[project]](4096, "project", "sender")
	s.templates = tenantcache.New[found[Template]](4096, "template")
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.from.Email == "" {
		s.from = Address{Email: "noreply@localhost"}
	}
	return s, nil
}

// Close waits for the sends being written; later sends get ErrClosed.
func (s *Service) Close() error {
	s.closeMu.Lock()
	s.closed = true
	s.closeMu.Unlock()
	return nil
}

// Changed implements tenancy.Owner: it drops cached projects and templates that changed.
func (s *Service) Changed(ctx context.Context, changes []journal.Change) {
	s.projects.Changed(ctx, changes)
	s.templates.Changed(ctx, changes)
}

// found is a cached read: a value, or the knowledge that there is none.
type found[T any] struct {
	v  T
	ok bool
}

// project is what a send needs of its project: its org and its sender defaults.
type project struct {
	tenancy.ProjectInfo
	sender Sender
}

// readProject reads a project and its sender defaults through the cache.
func (s *Service) readProject(ctx context.Context, id string) (found[project], error) {
	return s.projects.Get(ctx, id, "", func(ctx context.Context) (found[project], error) {
		p, err := s.tenants.Project(ctx, id)
		if errors.Is(err, tenancy.ErrNotFound) {
			return found[project]{}, nil
		}
		if err != nil {
			return found[project]{}, err
		}
		out := project{ProjectInfo: p}
		if err := s.getJSON(ctx, senderKey(id), &out.sender); err != nil && !errors.Is(err, errNoValue) {
			return found[project]{}, err
		}
		return found[project]{out, true}, nil
	})
}

// Wake is signalled after each commit that queued messages (the worker listens to it).
func (s *Service) Wake() <-chan struct{} { return s.wake }

func (s *Service) stamp() string { return s.now().UTC().Format(apitime.Layout) }

// Send validates and renders a send for caller and queues it durably; it returns only after
// the commit. idem is the Idempotency-Key header ("" for none).
func (s *Service) Send(ctx context.Context, caller Caller, idem string, req SendRequest) (Receipt, error) {
	if len(idem) > maxIdemKeyLen {
		return Receipt{}, invalid("Idempotency-Key", fmt.Sprintf("must be at most %d characters", maxIdemKeyLen))
	}
	proj, err := s.project(ctx, caller, req.ProjectID)
	if err != nil {
		return Receipt{}, err
	}
	m, vars, err := s.build(ctx, proj, req)
	if err != nil {
		return Receipt{}, err
	}
	if err := s.filter(ctx, proj.ID, m, vars); err != nil {
		return Receipt{}, err
	}
	m.IdempotencyKey = idem
	return s.enqueue(ctx, m, fingerprint(req))
}

// filter runs the SendHook (the project's email.send plugins) on a built message, before it
// is queued: it may refuse it (an *apierr.Error keeps its code, any other error is
// ErrRejected), change it in place, or change the template variables, which renders the
// template again.
func (s *Service) filter(ctx context.Context, project string, m *Message, vars Vars) error {
	if s.hook == nil {
		return nil
	}
	d := &Draft{Message: m}
	if m.TemplateID != "" {
		d.Variables = maps.Clone(vars)
	}
	if err := s.hook.FilterSend(ctx, project, d); err != nil {
		var apiErr *apierr.Error
		if errors.As(err, &apiErr) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrRejected, err)
	}
	if m.TemplateID != "" && !maps.Equal(vars, d.Variables) {
		return s.renderTemplate(ctx, m, project, m.TemplateID, d.Variables)
	}
	return nil
}

// project resolves the project a send belongs to: the key's own, or for an org-only key the
// body's projectId, which must be a project of the key's org.
func (s *Service) project(ctx context.Context, caller Caller, id string) (project, error) {
	if caller.Project != "" {
		if id != "" && id != caller.Project {
			return project{}, ErrForbiddenProject
		}
		id = caller.Project
	} else if id == "" {
		return project{}, invalid("projectId", "required with a key that has no project scope")
	}
	p, err := s.readProject(ctx, id)
	if err != nil {
		return project{}, err
	}
	if !p.ok || p.v.Org != caller.Org {
		if caller.Project != "" {
			return project{}, ErrForbiddenProject
		}
		return project{}, ErrProjectNotFound
	}
	return p.v, nil
}

// build validates the request and renders the message it asks for; it also returns the
// template variables.
func (s *Service) build(ctx context.Context, proj project, req SendRequest) (*Message, Vars, error) {
	var problems []apierr.FieldProblem
	bad := func(field, problem string) {
		problems = append(problems, apierr.FieldProblem{Field: field, Problem: problem})
	}
	if req.To == nil {
		bad("to", "required")
	} else {
		checkAddress("to", *req.To, bad)
	}
	if req.From != nil {
		checkAddress("from", *req.From, bad)
	}
	if req.ReplyTo != nil {
		checkAddress("replyTo", *req.ReplyTo, bad)
	}
	inline := req.Subject != nil || req.BodyHTML != nil || req.BodyText != nil
	switch {
	case req.TemplateID != "" && inline:
		bad("templateId", "send either templateId or an inline subject with bodyHtml and/or bodyText, not both")
	case req.TemplateID == "" && !inline:
		bad("templateId", "required unless an inline subject with bodyHtml and/or bodyText is given")
	case inline && (req.Subject == nil || strings.TrimSpace(*req.Subject) == ""):
		bad("subject", "required with an inline body")
	case inline && req.BodyHTML == nil && req.BodyText == nil:
		bad("bodyHtml", "an inline send needs bodyHtml and/or bodyText")
	case inline && len(*req.Subject) > maxSubjectLen:
		bad("subject", fmt.Sprintf("must be at most %d bytes", maxSubjectLen))
	case inline && strings.ContainsAny(*req.Subject, "\r\n"):
		bad("subject", "must be one line")
	}
	vars, badVar, err := ParseVars(req.Variables)
	if err != nil {
		bad("variables."+badVar, "must be a string, number or boolean")
	}
	if len(req.Tags) > maxTags {
		bad("tags", fmt.Sprintf("at most %d tags", maxTags))
	}
	for i, t := range req.Tags {
		if t == "" || len(t) > maxTagLen || strings.ContainsAny(t, "/\r\n\t") {
			bad(fmt.Sprintf("tags[%d]", i), fmt.Sprintf("must be 1 to %d characters without '/' or line breaks", maxTagLen))
		}
	}
	if len(req.Metadata) > maxMetadata {
		bad("metadata", fmt.Sprintf("at most %d keys", maxMetadata))
	}
	for k, v := range req.Metadata {
		if !headerToken(k) || len(k) > maxMetaKeyLen {
			bad("metadata."+k, "keys are 1 to 64 letters, digits, '-' or '_'")
		} else if len(v) > maxMetaValLen || strings.ContainsAny(v, "\r\n") {
			bad("metadata."+k, "values are one line of at most 1024 bytes")
		}
	}
	if len(problems) > 0 {
		return nil, nil, apierr.Validation(problems...)
	}

	now := s.now()
	m := &Message{
		ID: idPrefix + store.NewID(), Org: proj.Org, Project: proj.ID, Status: StatusQueued,
		To: *req.To, From: s.from, Tags: dedupeTags(req.Tags), Metadata: req.Metadata,
		CreatedAt: now.UTC().Format(apitime.Layout), Due: now.UnixNano(),
	}
	m.UpdatedAt = m.CreatedAt
	if m.Tags == nil {
		m.Tags = []string{}
	}
	if m.Metadata == nil {
		m.Metadata = map[string]string{}
	}
	if proj.sender.From != nil && proj.sender.From.Email != "" {
		m.From = *proj.sender.From
	}
	if req.From != nil {
		m.From = *req.From
	}
	if proj.sender.ReplyTo != nil && proj.sender.ReplyTo.Email != "" {
		rt := *proj.sender.ReplyTo
		m.ReplyTo = &rt
	}
	if req.ReplyTo != nil {
		m.ReplyTo = req.ReplyTo
	}
	// Defaults from the project or the server are checked like the caller's addresses, so a
	// default that cannot be encoded is refused here rather than failing at delivery.
	if req.From == nil {
		if _, p := encodeAddress(m.From); p != nil {
			return nil, nil, invalid("from."+p.Part, "the default sender (project email.from) cannot be sent: "+p.Problem)
		}
	}
	if req.ReplyTo == nil && m.ReplyTo != nil {
		if _, p := encodeAddress(*m.ReplyTo); p != nil {
			return nil, nil, invalid("replyTo."+p.Part, "the default reply-to (project email.replyTo) cannot be sent: "+p.Problem)
		}
	}
	if inline {
		m.Subject = *req.Subject
		if req.BodyHTML != nil {
			m.HTML = *req.BodyHTML
		}
		if req.BodyText != nil {
			m.Text = *req.BodyText
		} else {
			m.Text = HTMLToText(m.HTML)
		}
	} else if err := s.renderTemplate(ctx, m, proj.ID, req.TemplateID, vars); err != nil {
		return nil, nil, err
	}
	m.Log = []LogEntry{{At: m.CreatedAt, Event: string(StatusQueued), Status: StatusQueued, Detail: "accepted"}}
	return m, vars, nil
}

// renderTemplate fills m's subject and bodies from the project's template.
func (s *Service) renderTemplate(ctx context.Context, m *Message, project, slug string, vars Vars) error {
	ft, err := s.templates.Get(ctx, project, slug, func(ctx context.Context) (found[Template], error) {
		var t Template
		err := s.getJSON(ctx, templateKey(project, slug), &t)
		if errors.Is(err, errNoValue) {
			return found[Template]{}, nil
		}
		return found[Template]{t, err == nil}, err
	})
	if err != nil {
		return err
	}
	if !ft.ok {
		return fmt.Errorf("%w: %q", ErrTemplateNotFound, slug)
	}
	m.TemplateID = slug
	var missing []string
	m.Subject, m.HTML, m.Text, missing = ft.v.render(vars)
	return missingVariables(missing)
}

// checkAddress reports an address object the transports could not encode (encodeAddress).
func checkAddress(field string, a Address, bad func(string, string)) {
	if _, p := encodeAddress(a); p != nil {
		bad(field+"."+p.Part, p.Problem)
	}
}

func headerToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func dedupeTags(tags []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// Get returns a message by its public id.
func (s *Service) Get(ctx context.Context, id string) (*Message, error) {
	u := ulidOf(id)
	if u == "" {
		return nil, ErrMessageNotFound
	}
	var m *Message
	err := s.db.View(ctx, func(txn *store.Txn) error {
		var err error
		m, err = load(txn, u)
		return err
	})
	return m, err
}

// ListQuery filters the message list (newest first).
type ListQuery struct {
	Status Status
	Tag    string
	// Org limits the list to one org's messages when not empty.
	Org   string
	Limit int
	// After is the store id of the last message of the previous page.
	After string
}

// List returns a page of messages and the store id to continue after ("" on the last page).
func (s *Service) List(ctx context.Context, q ListQuery) ([]*Message, string, error) {
	if q.Limit <= 0 {
		q.Limit = 25
	}
	var p []byte
	switch {
	case q.Tag != "":
		p = store.Prefix(root, kTag, q.Tag)
	case q.Status != "":
		p = store.Prefix(root, kState, string(q.Status))
	default:
		p = store.Prefix(root, kMsg)
	}
	var out []*Message
	next := ""
	err := s.db.View(ctx, func(txn *store.Txn) error {
		o := store.IterOptions{Prefix: p, Reverse: true, KeysOnly: true}
		if q.After != "" {
			o.Start = append(append([]byte{}, p...), q.After...)
		}
		return txn.Iterate(o, func(k, _ []byte) (bool, error) {
			u := store.LastPart(k)
			if u == q.After {
				return true, nil
			}
			if len(out) == q.Limit {
				next = out[len(out)-1].ID[len(idPrefix):]
				return false, nil
			}
			m, err := load(txn, u)
			if err != nil {
				return false, err
			}
			if (q.Status != "" && m.Status != q.Status) || (q.Org != "" && m.Org != q.Org) {
				return true, nil
			}
			out = append(out, m)
			return true, nil
		})
	})
	return out, next, err
}

// ApplyEvent applies provider feedback: delivered, bounce (→ bounced, address suppressed) or
// complaint (→ spam, address suppressed). The same event twice changes nothing the second time.
func (s *Service) ApplyEvent(ctx context.Context, ev Event) (*Message, error) {
	var to Status
	switch ev.Type {
	case "delivered":
		to = StatusDelivered
	case "bounce":
		to = StatusBounced
	case "complaint":
		to = StatusSpam
	default:
		return nil, invalid("type", "must be delivered, bounce or complaint")
	}
	u := ulidOf(ev.MessageID)
	if u == "" {
		if ev.MessageID == "" {
			return nil, invalid("messageId", "required")
		}
		return nil, ErrMessageNotFound
	}
	if len(ev.Detail) > 2048 {
		return nil, invalid("detail", "must be at most 2048 bytes")
	}
	var m *Message
	err := s.db.Update(ctx, func(txn *store.Txn) error {
		var err error
		m, err = load(txn, u)
		if err != nil {
			return err
		}
		if m.Status == to {
			return nil
		}
		prev, prevDue := m.Status, m.Due
		if err := advance(m, to, LogEntry{Event: ev.Type, Detail: detailOr(ev.Detail, "provider event")}, s.stamp()); err != nil {
			return err
		}
		m.Due = 0
		return s.persist(ctx, txn, m, prev, prevDue)
	})
	if err != nil {
		return nil, err
	}
	if to == StatusBounced || to == StatusSpam {
		if err := s.Suppress(ctx, m.Org, m.To.Email, ev.Type, detailOr(ev.Detail, m.ID)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func detailOr(d, def string) string {
	if d == "" {
		return def
	}
	return d
}

// marshal encodes a message for storage.
func marshal(m *Message) ([]byte, error) { return json.Marshal(m) }

// fingerprint is the SHA-256 of a send request's canonical JSON (map keys sorted), so a repeated
// Idempotency-Key can tell the same request from a different one.
func fingerprint(req SendRequest) string {
	raw, _ := json.Marshal(req)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
