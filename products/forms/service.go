package forms

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/apitime"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/journal"
	"github.com/gatehouse-dev/gatehouse/edge/ratelimit"
	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenantcache"
)

// FilterInput is a submission handed to a forms.submit filter, after the fields validated.
type FilterInput struct {
	Project   string
	Form      string
	Data      map[string]any
	IP        string
	UserAgent string
}

// Filter is the forms.submit hook (plugins implement it). It returns the data to store
// (possibly rewritten) or an error: an *apierr.Error rejects the submission with its code.
type Filter interface {
	FilterSubmission(ctx context.Context, in FilterInput) (map[string]any, error)
}

// Plugins are the project's plugins as the forms product calls them: the forms.submit hook
// and the plugin captcha verifiers (edge/cmd/gatehouse adapts the plugin host to it).
type Plugins interface {
	Filter
	PluginVerifiers
}

// Options configures NewService. DB and Blobs are required.
type Options struct {
	DB    *store.DB
	Blobs blob.Store
	// Verifiers are the built-in captcha verifiers by provider name (NewVerifiers builds them).
	Verifiers map[string]Verifier
	// Plugins runs the forms.submit hook and finds plugin captcha verifiers; nil when no
	// plugin host is wired (no filter; a plugin captcha answers 503 CAPTCHA_NOT_CONFIGURED).
	Plugins Plugins
	// Webhooks and Mailer queue what an accepted submission triggers, in its transaction
	// (notify.go): the form.submitted event, the notifications and the auto-reply; nil for none.
	Webhooks Webhooks
	Mailer   Mailer
	// Now is the clock of timestamps and of the rate limiter (time.Now when nil).
	Now func() time.Time
	// RatePerMinute is the per-key-per-form submission rate (60 when zero).
	RatePerMinute int
	// Limiter, when set, holds the per-key-per-form buckets instead of this node's memory (the
	// buckets in Redis that every node of a deployment shares); it must allow RatePerMinute.
	Limiter ratelimit.Allower
	// SpoolDir holds multipart file parts while their submission is validated and stored
	// (os.TempDir() when empty). Start removes the parts an earlier run left there.
	SpoolDir string
	// AdminBase is the admin API root ({public_url}/admin/v1) used for file links in the inbox.
	AdminBase string
	Log       *slog.Logger
	// Registerer receives the product's metrics; nil for none.
	Registerer prometheus.Registerer
}

// Service holds the Forms rules.
type Service struct {
	o     Options
	now   func() time.Time
	limit ratelimit.Allower
	cache *tenantcache.Cache[*compiled]
	log   *slog.Logger
	m     *metrics
	// spoolPart begins the names of this run's spooled file parts: spoolPrefix and a run id.
	spoolPart string
	// sweepMu guards the orphan sweep Start runs (orphans.go): stopSweep ends it, sweepDone
	// is closed when it has.
	sweepMu   sync.Mutex
	stopSweep context.CancelFunc
	sweepDone chan struct{}
}

// VerifiersOptions configures NewVerifiers: the siteverify endpoint of each provider and the
// client that calls them (the gateway's egress client).
type VerifiersOptions struct {
	TurnstileURL, HCaptchaURL, ReCaptchaURL string
	Client                                  *http.Client
}

// NewVerifiers returns the three built-in siteverify verifiers with their endpoint URLs.
func NewVerifiers(o VerifiersOptions) map[string]Verifier {
	return map[string]Verifier{
		ProviderTurnstile: &SiteVerify{Provider: ProviderTurnstile, URL: o.TurnstileURL, Client: o.Client},
		ProviderHCaptcha:  &SiteVerify{Provider: ProviderHCaptcha, URL: o.HCaptchaURL, Client: o.Client},
		ProviderReCaptcha: &SiteVerify{Provider: ProviderReCaptcha, URL: o.ReCaptchaURL, Client: o.Client},
	}
}

// NewService returns the service; it starts nothing (submissions are group-committed by the store).
func NewService(o Options) (*Service, error) {
	if o.DB == nil || o.Blobs == nil {
		return nil, errors.New("forms: DB and Blobs are required")
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	rate := o.RatePerMinute
	if rate <= 0 {
		rate = 60
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.SpoolDir == "" {
		o.SpoolDir = os.TempDir()
	}
	cache := tenantcache.New[*compiled](4096, "form", "captcha", "project")
	limit := o.Limiter
	if limit == nil {
		limit = ratelimit.New(ratelimit.Options{Rate: rate, Per: time.Minute, Now: now})
	}
	return &Service{
		o:     o,
		now:   now,
		limit: limit,
		cache: cache,
		log:   log,
		m:     newMetrics(o.Registerer),
		// The run id keeps this run's parts apart from an earlier run's (Start).
		spoolPart: spoolPrefix + uuid.NewString()[:8] + "-",
	}, nil
}

// Changed implements tenancy.Owner: it drops the cached forms that changes made stale.
func (s *Service) Changed(ctx context.Context, changes []journal.Change) {
	s.cache.Changed(ctx, changes)
}

// CommitStats reports how many durable commits the store's group committer ran and how many
// writes they held (every product's, not only submissions).
func (s *Service) CommitStats() (commits, writes uint64) { return s.o.DB.CommitStats() }

// Start removes the multipart file parts an earlier run (a crash) left in Options.SpoolDir (not
// in the shared os.TempDir()), and starts the hourly sweep of orphaned files (orphans.go). It
// may run while submissions arrive, after the server listens: their parts carry this run's id
// and stay.
func (s *Service) Start(context.Context) error {
	if s.o.SpoolDir != os.TempDir() {
		cleanSpool(s.o.SpoolDir, s.spoolPart, s.log)
	}
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	if s.stopSweep == nil {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopSweep, s.sweepDone = cancel, make(chan struct{})
		go func() {
			defer close(s.sweepDone)
			s.sweepLoop(ctx)
		}()
	}
	return nil
}

// Stop ends the orphan sweep, waiting for a sweep under way to stop.
func (s *Service) Stop(context.Context) error {
	s.sweepMu.Lock()
	defer s.sweepMu.Unlock()
	if s.stopSweep != nil {
		s.stopSweep()
		<-s.sweepDone
		s.stopSweep = nil
	}
	return nil
}

// Close ends the orphan sweep as Stop does; the store's committer drains on the store's Close.
func (s *Service) Close() error { return s.Stop(context.Background()) }

// form loads (through the cache) a published, public form of project.
func (s *Service) form(ctx context.Context, project, slug string) (*compiled, error) {
	c, err := s.cache.Get(ctx, project, slug, func(ctx context.Context) (*compiled, error) {
		f, keys, err := s.load(ctx, project, slug)
		if err != nil {
			return nil, err
		}
		return compile(project, f, keys), nil
	})
	if errors.Is(err, errNoValue) {
		return nil, ErrFormNotFound
	}
	if err != nil {
		return nil, err
	}
	if !c.form.Published {
		return nil, ErrFormNotFound
	}
	if c.form.Visibility == "private" {
		return nil, ErrFormPrivate
	}
	return c, nil
}

func compile(project string, f Form, keys *CaptchaKeys) *compiled {
	fields, order := compileFields(f.Fields)
	c := &compiled{form: f, project: project, captcha: keys, fields: fields, order: order}
	d := Definition{Slug: f.Slug, Title: f.Title, Settings: f.Settings, Fields: make([]FieldView, 0, len(f.Fields))}
	if d.Settings == nil {
		d.Settings = map[string]any{}
	}
	for _, fd := range f.Fields {
		// A conversion, not a copy field by field: the two types differ only in their JSON tags,
		// and the compiler refuses the conversion the day a field is added to one of them only.
		d.Fields = append(d.Fields, FieldView(fd))
	}
	if f.Captcha.Enabled {
		switch {
		case f.Captcha.Plugin != "":
			d.Captcha = &CaptchaView{Provider: "plugin"}
		case keys != nil && keys.Plugin != "":
			d.Captcha = &CaptchaView{Provider: "plugin", SiteKey: keys.SiteKey}
		case keys != nil:
			d.Captcha = &CaptchaView{Provider: keys.Provider, SiteKey: keys.SiteKey}
		default:
			d.Captcha = &CaptchaView{Provider: ""}
		}
	}
	c.def = d
	return c
}

// Definition returns the public definition of a published, public form.
func (s *Service) Definition(ctx context.Context, project, slug string) (Definition, error) {
	c, err := s.form(ctx, project, slug)
	if err != nil {
		return Definition{}, err
	}
	return c.def, nil
}

// verifier picks the captcha verifier of a form, or ErrCaptchaNotConfigured.
func (s *Service) verifier(ctx context.Context, c *compiled) (Verifier, Challenge, error) {
	ch := Challenge{Project: c.project, Form: c.form.Slug}
	plugin := c.form.Captcha.Plugin
	keys := c.captcha
	if plugin == "" && keys != nil {
		plugin = keys.Plugin
	}
	if keys != nil {
		ch.SiteKey, ch.Secret = keys.SiteKey, keys.Secret
	}
	if plugin != "" {
		if s.o.Plugins == nil {
			return nil, ch, ErrCaptchaNotConfigured
		}
		v, err := s.o.Plugins.CaptchaVerifier(ctx, c.project, plugin)
		if err != nil || v == nil {
			return nil, ch, apierr.New(503, CodeCaptchaNotConfigured, ErrCaptchaNotConfigured.Message, err)
		}
		return v, ch, nil
	}
	if keys == nil || keys.Secret == "" || keys.Provider == "" {
		return nil, ch, ErrCaptchaNotConfigured
	}
	v, ok := s.o.Verifiers[keys.Provider]
	if !ok || v == nil {
		return nil, ch, ErrCaptchaNotConfigured
	}
	return v, ch, nil
}

// Submit validates, filters, verifies the captcha (last, so a single-use token is not burned
// by a submission that fails validation), stores the files and then the submission in a
// durable grouped commit, and returns the receipt.
func (s *Service) Submit(ctx context.Context, in Input) (Receipt, error) {
	a, err := s.Admit(ctx, in.Project, in.Slug, in.KeyHash)
	if err != nil {
		return Receipt{}, err
	}
	return s.SubmitAdmitted(ctx, a, in)
}

// Admission is a submission attempt that passed the form and rate-limit checks.
type Admission struct{ c *compiled }

// FieldKind reports whether the admitted form has a field name and whether it takes files.
func (a Admission) FieldKind(name string) (known, file bool) {
	f, ok := a.c.fields[name]
	return ok, ok && f.Type == "file"
}

// decodeMultipart streams a multipart body of an admitted submission into a Spool.
func (s *Service) decodeMultipart(body io.Reader, boundary string, a Admission) (*Spool, error) {
	return decodeMultipart(body, boundary, s.o.SpoolDir, s.spoolPart, a.FieldKind, s.log)
}

// Admit finds the form (404 FORM_NOT_FOUND, 403 FORM_PRIVATE) and takes one request from the
// key's bucket for it (429 RATE_LIMITED). The API calls it before reading the body, so an
// unknown form or a flood is refused before any parsing.
func (s *Service) Admit(ctx context.Context, project, slug, keyHash string) (Admission, error) {
	c, err := s.form(ctx, project, slug)
	if err != nil {
		s.m.observe(err)
		return Admission{}, err
	}
	if ok, retry := s.limit.Allow(ctx, keyHash+"/"+project+"/"+slug); !ok {
		err := rateLimited(retry)
		s.m.observe(err)
		return Admission{}, err
	}
	return Admission{c: c}, nil
}

// Refuse counts an admitted attempt the API refused before SubmitAdmitted (size, bad body).
func (s *Service) Refuse(err error) { s.m.observe(err) }

// SubmitAdmitted is Submit after Admit: in.Project and in.Slug must be the admitted form's.
func (s *Service) SubmitAdmitted(ctx context.Context, a Admission, in Input) (Receipt, error) {
	r, err := s.submit(ctx, a, in)
	s.m.observe(err)
	return r, err
}

func (s *Service) submit(ctx context.Context, a Admission, in Input) (Receipt, error) {
	c := a.c
	if c == nil || c.project != in.Project || c.form.Slug != in.Slug {
		return Receipt{}, errors.New("forms: submission does not match its admission")
	}
	var err error
	if in.Values == nil {
		in.Values = map[string]any{}
	}
	token := takeCaptcha(in.Values)
	var ver Verifier
	var ch Challenge
	if c.form.Captcha.Enabled {
		if ver, ch, err = s.verifier(ctx, c); err != nil {
			return Receipt{}, err
		}
		if token == "" {
			return Receipt{}, ErrCaptchaRequired
		}
	}
	data, err := validate(c, in.Values, in.FromForm, in.Files)
	if err != nil {
		return Receipt{}, err
	}
	if s.o.Plugins != nil {
		out, err := s.o.Plugins.FilterSubmission(ctx, FilterInput{Project: in.Project, Form: in.Slug, Data: data, IP: in.IP, UserAgent: in.UserAgent})
		if err != nil {
			return Receipt{}, err
		}
		if out != nil {
			data = out
		}
	}
	if ver != nil {
		ch.Token, ch.RemoteIP = token, in.IP
		v, err := ver.Verify(ctx, ch)
		if err != nil {
			s.log.Warn("captcha verification failed", "project", in.Project, "form", in.Slug, "err", err)
			return Receipt{}, apierr.New(ErrCaptchaUnavailable.Status, ErrCaptchaUnavailable.Code, ErrCaptchaUnavailable.Message, err)
		}
		if !v.Success {
			return Receipt{}, apierr.New(ErrCaptchaFailed.Status, ErrCaptchaFailed.Code, ErrCaptchaFailed.Message, fmt.Errorf("provider codes %v", v.Codes))
		}
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Receipt{}, fmt.Errorf("forms: new id: %w", err)
	}
	sub := Submission{
		ID: id.String(), Form: in.Slug, CreatedAt: s.now().UTC().Format(apitime.Layout),
		IP: in.IP, UserAgent: in.UserAgent, Data: data, Files: []FileRef{},
	}
	if err := s.storeFiles(ctx, c, in, &sub); err != nil {
		s.dropFiles(sub.Files)
		return Receipt{}, err
	}
	raw, err := json.Marshal(sub)
	if err != nil {
		s.dropFiles(sub.Files)
		return Receipt{}, fmt.Errorf("forms: encode submission: %w", err)
	}
	key := subKey(in.Project, in.Slug, sub.ID)
	events, err := s.submissionEvents(ctx, s.accepted(c, sub))
	if err != nil {
		s.dropFiles(sub.Files)
		return Receipt{}, fmt.Errorf("forms: prepare the submission's events: %w", err)
	}
	if err := s.o.DB.Update(ctx, func(txn *store.Txn) error {
		if err := txn.Set(key, raw); err != nil || events == nil {
			return err
		}
		return events(txn)
	}); err != nil {
		s.dropFiles(sub.Files)
		return Receipt{}, fmt.Errorf("forms: store submission: %w", err)
	}
	return Receipt{ID: sub.ID, Status: "received"}, nil
}

// storeFiles streams every file part into blob storage, in field order.
func (s *Service) storeFiles(ctx context.Context, c *compiled, in Input, sub *Submission) error {
	n := 0
	for _, name := range c.order {
		for _, p := range in.Files[name] {
			key := blobKey(in.Project, in.Slug, sub.ID, n, p.Filename)
			n++
			r, err := p.Open()
			if err != nil {
				return fmt.Errorf("forms: open file part: %w", err)
			}
			// One PUT of the known length: S3 stores it whole or not at all (an upload of
			// unknown length would go in parts, which an outage can leave behind).
			size, err := s.o.Blobs.Put(ctx, key, blob.SizedReader(r, p.Size), p.ContentType)
			r.Close()
			if err != nil {
				return apierr.New(ErrStorageUnavailable.Status, ErrStorageUnavailable.Code, ErrStorageUnavailable.Message, fmt.Errorf("forms: store file: %w", err))
			}
			sub.Files = append(sub.Files, FileRef{Field: name, Name: p.Filename, ContentType: p.ContentType, Size: size, Key: key})
		}
	}
	return nil
}

func (s *Service) dropFiles(fs []FileRef) {
	for _, f := range fs {
		if err := s.o.Blobs.Delete(context.Background(), f.Key); err != nil {
			s.log.Warn("removing the file of a failed submission", "key", f.Key, "err", err)
		}
	}
}
