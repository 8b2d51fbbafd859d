package membership

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
)

// Connection is one identity-provider connection of a project, as the tenants document declares
// it under membership.connections. IdpSecretKey is stored, never returned.
type Connection struct {
	Name                 string         `json:"name"`
	Active               bool           `json:"active"`
	IdpPublishableKey    string         `json:"idpPublishableKey"`
	IdpInstanceDomain    string         `json:"idpInstanceDomain"`
	IdpSecretKey         string         `json:"idpSecretKey,omitempty"`
	SignUpEnabled        bool           `json:"signUpEnabled"`
	OrganizationsEnabled bool           `json:"organizationsEnabled"`
	Appearance           map[string]any `json:"appearance,omitempty"`
}

// settings is the project's membership key of the document.
type settings struct {
	Connections []Connection `json:"connections,omitempty"`
}

// Key layout: membership/conn/<project>/<name> -> Connection.
func connKey(project, name string) []byte { return store.Key("membership", "conn", project, name) }
func connPrefix(project string) []byte    { return store.Prefix("membership", "conn", project) }

// connRoot is the prefix of every project's connections.
var connRoot = store.Prefix("membership", "conn")

// Section is the membership key of a project in the tenants document: the sign-in connections,
// at most one active, each publishable key checked against its instance domain.
type Section struct{}

var _ tenancy.Section = Section{}

// Name implements tenancy.Section.
func (Section) Name() string { return "membership" }

// Level implements tenancy.Section.
func (Section) Level() tenancy.Level { return tenancy.ProjectLevel }

// Check implements tenancy.Section.
func (Section) Check(c *tenancy.Check, raw json.RawMessage) {
	var m settings
	if !c.Decode(raw, &m) {
		return
	}
	conns, active := map[string]string{}, ""
	for i, cn := range m.Connections {
		sub := fmt.Sprintf(".connections[%d]", i)
		if !tenancy.IsName(cn.Name) {
			c.Add(sub+".name", "must be 1-63 letters, digits, - or _")
		} else {
			c.Unique(conns, cn.Name, sub, "connection")
		}
		if cn.Active {
			if active != "" {
				c.Add(sub+".active", "only one connection may be active; %s is active too", active)
			}
			active = c.Path + sub
		}
		if err := CheckIdpKey(cn.IdpPublishableKey, cn.IdpInstanceDomain); err != nil {
			c.Add(sub+".idpPublishableKey", "%v", err)
		}
	}
}

// Apply implements tenancy.Section: connections are upserted by name.
func (Section) Apply(w *tenancy.Writer, raw json.RawMessage) error {
	var m settings
	if err := tenancy.Decode(raw, &m); err != nil {
		return err
	}
	for _, c := range m.Connections {
		if err := w.Put(connKey(w.Project, c.Name), "connection", c.Name, c); err != nil {
			return err
		}
	}
	return nil
}

// Prune implements tenancy.Section.
func (Section) Prune(w *tenancy.Writer) error {
	return w.Prune(connRoot, "connection", tenancy.ProjectLevel, nil, nil)
}

// Store reads the connections the section stored; it is the Source of the service.
type Store struct{ DB *store.DB }

var _ Source = Store{}

// ActiveConnection returns the project's active connection, or tenancy.ErrNotFound.
func (s Store) ActiveConnection(ctx context.Context, project string) (Connection, error) {
	var out *Connection
	err := s.DB.View(ctx, func(txn *store.Txn) error {
		return txn.Iterate(store.IterOptions{Prefix: connPrefix(project)}, func(_, v []byte) (bool, error) {
			var c Connection
			if err := json.Unmarshal(v, &c); err != nil {
				return false, err
			}
			if c.Active {
				out = &c
				return false, nil
			}
			return true, nil
		})
	})
	if err != nil {
		return Connection{}, err
	}
	if out == nil {
		return Connection{}, tenancy.ErrNotFound
	}
	return *out, nil
}

// domainRe is a host name of at least two labels.
var domainRe = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// CheckIdpKey checks an identity provider publishable key as the provider's own SDK does:
// pk_test_ or pk_live_ then base64 (padded or not) of "<frontend host>$", where the host must be
// the instance domain (or end with it).
func CheckIdpKey(key, domain string) error {
	var rest string
	switch {
	case strings.HasPrefix(key, "pk_test_"):
		rest = key[len("pk_test_"):]
	case strings.HasPrefix(key, "pk_live_"):
		rest = key[len("pk_live_"):]
	default:
		return errors.New("must start with pk_test_ or pk_live_")
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil {
		raw, err = base64.StdEncoding.DecodeString(rest)
	}
	if err != nil {
		return errors.New("is not base64 after its prefix")
	}
	host, ok := strings.CutSuffix(string(raw), "$")
	host = strings.ToLower(host)
	if !ok || !domainRe.MatchString(host) {
		return errors.New("does not decode to \"<frontend host>$\"")
	}
	domain = strings.ToLower(domain)
	if domain == "" {
		return errors.New("needs idpInstanceDomain beside it")
	}
	if !domainRe.MatchString(domain) {
		return fmt.Errorf("decodes to host %q, which does not match idpInstanceDomain %q (it must be a host name such as clerk.example.com)", host, domain)
	}
	if host != domain && !strings.HasSuffix(host, "."+domain) {
		return fmt.Errorf("decodes to host %q, which does not match idpInstanceDomain %q", host, domain)
	}
	return nil
}
