package membership

// Config is the answer of GET /config: exactly the five fields of the interface. It has no
// field for the identity provider's secret key, so no code path can serve it.
type Config struct {
	IdpPublishableKey    string         `json:"idpPublishableKey"`
	IdpInstanceDomain    string         `json:"idpInstanceDomain"`
	Appearance           map[string]any `json:"appearance"` // null when the connection sets none
	SignUpEnabled        bool           `json:"signUpEnabled"`
	OrganizationsEnabled bool           `json:"organizationsEnabled"`
}

// configOf copies the public fields of a connection, field by field.
func configOf(c Connection) Config {
	var appearance map[string]any
	if len(c.Appearance) > 0 {
		appearance = c.Appearance
	}
	return Config{
		IdpPublishableKey:    c.IdpPublishableKey,
		IdpInstanceDomain:    c.IdpInstanceDomain,
		Appearance:           appearance,
		SignUpEnabled:        c.SignUpEnabled,
		OrganizationsEnabled: c.OrganizationsEnabled,
	}
}

// Answer is an encoded Config with its entity tag, ready to send.
type Answer struct {
	// Body is the JSON of the Config; callers must not modify it.
	Body []byte
	// ETag is a strong entity tag (quoted) derived from Body.
	ETag string
}
