package forms

// Definition is the public answer of GET /forms/{slug}: fields and settings, and the captcha
// provider and site key (never the secret) when the form has captcha on.
type Definition struct {
	Slug     string         `json:"slug"`
	Title    string         `json:"title"`
	Fields   []FieldView    `json:"fields"`
	Settings map[string]any `json:"settings"`
	Captcha  *CaptchaView   `json:"captcha,omitempty"`
}

// FieldView is one field of a Definition; required and label are always present. It has the
// fields of FormField in the same order (compile converts one to the other).
type FieldView struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Label       string   `json:"label"`
	Required    bool     `json:"required"`
	Placeholder string   `json:"placeholder,omitempty"`
	HelpText    string   `json:"helpText,omitempty"`
	MinLength   int      `json:"minLength,omitempty"`
	MaxLength   int      `json:"maxLength,omitempty"`
	Min         *float64 `json:"min,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
	Options     []string `json:"options,omitempty"`
	Accept      []string `json:"accept,omitempty"`
	Multiple    bool     `json:"multiple,omitempty"`
	MaxSizeMB   float64  `json:"maxSizeMB,omitempty"`
}

// CaptchaView tells a client which widget to show: provider turnstile, hcaptcha, recaptcha or
// plugin, and the public site key.
type CaptchaView struct {
	Provider string `json:"provider"`
	SiteKey  string `json:"siteKey,omitempty"`
}

// Submission is one stored submission, as the inbox returns it.
type Submission struct {
	ID        string         `json:"id"`
	Form      string         `json:"form"`
	CreatedAt string         `json:"createdAt"`
	IP        string         `json:"ip"`
	UserAgent string         `json:"userAgent"`
	Data      map[string]any `json:"data"`
	Files     []FileRef      `json:"files"`
}

// FileRef is one uploaded file of a submission. Key is the blob key; URL (inbox answers only)
// is the admin download link.
type FileRef struct {
	Field       string `json:"field"`
	Name        string `json:"name"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	Key         string `json:"key"`
	URL         string `json:"url,omitempty"`
}

// Receipt is the 201 answer of a submission.
type Receipt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// FilePart is an uploaded file handed to Submit. Open is called once, after validation.
type FilePart struct {
	Filename    string
	ContentType string // declared by the client
	Size        int64
	// Head is up to the first 512 bytes, for content sniffing.
	Head []byte
	Open func() (ReadCloser, error)
}

// ReadCloser is the reader Open returns (an io.ReadCloser).
type ReadCloser interface {
	Read(p []byte) (int, error)
	Close() error
}

// Input is one submission as the API decoded it.
type Input struct {
	// Project and Slug address the form; Project comes from the key.
	Project string
	Slug    string
	// Limiter key part: the API key's hash (the rate limit is per key and per form).
	KeyHash string
	// Values are field values: JSON values (json.Number for numbers), or strings / string
	// slices when FromForm.
	Values map[string]any
	// FromForm marks values that came as text (multipart or urlencoded) and need coercion.
	FromForm bool
	// Files are the file parts by field name (multipart only).
	Files map[string][]FilePart
	// IP and UserAgent are stored with the submission.
	IP        string
	UserAgent string
}

// compiled is a form with what Submit needs beside it, cached per project and slug.
type compiled struct {
	form    Form
	project string
	captcha *CaptchaKeys
	fields  map[string]*fieldRule
	order   []string
	def     Definition
}
