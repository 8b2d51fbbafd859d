package files

import (
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/apitime"
)

// Limits of the interface.
const (
	// MaxFileSize is the largest accepted upload: 5 MB (5 MiB, 5,242,880 bytes).
	MaxFileSize = 5 << 20
	// MaxPixels caps width x height of a raster image (decompression bombs), 50 megapixels.
	MaxPixels = 50_000_000
	// URLLifetime is how long an upload URL stays valid.
	URLLifetime = 900 * time.Second
	// CompleteGrace is how long an uploaded but not completed asset is kept after its URL expired.
	CompleteGrace = time.Hour
	// IDPrefix starts every asset id.
	IDPrefix = "ast_"
)

// Asset statuses.
const (
	StatusPending   = "pending"
	StatusCompleted = "completed"
)

// accepted are the five accepted MIME types.
var accepted = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/webp": true, "image/svg+xml": true, "image/gif": true,
}

// Accepted reports whether mime is one of the accepted image types.
func Accepted(mime string) bool { return accepted[mime] }

// Asset is the stored asset record (internal fields included).
type Asset struct {
	ID         string    `json:"id"`
	Org        string    `json:"org"`
	Project    string    `json:"project,omitempty"`
	Filename   string    `json:"filename"`
	StorageKey string    `json:"storageKey"`
	MimeType   string    `json:"mimeType"`
	Size       int64     `json:"size"`
	FolderID   string    `json:"folderId,omitempty"`
	Status     string    `json:"status"`
	Public     bool      `json:"public"`
	Title      *string   `json:"title"`
	Alt        *string   `json:"alt"`
	Tags       []string  `json:"tags"`
	Width      int       `json:"width"`
	Height     int       `json:"height"`
	SHA256     string    `json:"sha256,omitempty"`
	Uploaded   bool      `json:"uploaded,omitempty"`
	Receiving  bool      `json:"receiving,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
	// Sweep is when the sweeper removes the asset if it is still pending.
	Sweep time.Time `json:"sweep"`
}

// View is the public shape of an asset (the interface's Asset resource).
type View struct {
	ID        string   `json:"id"`
	Filename  string   `json:"filename"`
	MimeType  string   `json:"mimeType"`
	Size      int64    `json:"size"`
	Status    string   `json:"status"`
	URL       string   `json:"url,omitempty"`
	Title     *string  `json:"title"`
	Alt       *string  `json:"alt"`
	Tags      []string `json:"tags"`
	Width     int      `json:"width"`
	Height    int      `json:"height"`
	CreatedAt string   `json:"createdAt"`
}

// View returns the public shape; assetBase is {asset_host} without a trailing slash.
func (a *Asset) View(assetBase string) View {
	v := View{
		ID: a.ID, Filename: a.Filename, MimeType: a.MimeType, Size: a.Size, Status: a.Status,
		Title: a.Title, Alt: a.Alt, Tags: a.Tags, Width: a.Width, Height: a.Height,
		CreatedAt: a.CreatedAt.UTC().Format(apitime.Layout),
	}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	if a.Public && a.Status == StatusCompleted {
		v.URL = assetBase + "/" + a.StorageKey
	}
	return v
}

// Slot is the answer of the presign endpoint.
type Slot struct {
	AssetID    string `json:"assetId"`
	StorageKey string `json:"storageKey"`
	UploadURL  string `json:"uploadUrl"`
	ExpiresAt  string `json:"expiresAt"`
}

// PresignRequest is a validated presign body.
type PresignRequest struct {
	Filename string
	MimeType string
	Size     int64
	FolderID string
}

// CompleteRequest is a validated complete body; zero values mean "not sent".
type CompleteRequest struct {
	AssetID  string
	FileHash string
	Width    *int
	Height   *int
}

// Scope is whose assets a caller sees: an org, and a project unless the key is org-only.
type Scope struct {
	Org     string
	Project string
}

// sees reports whether the scope may read a.
func (s Scope) sees(a *Asset) bool {
	return a.Org == s.Org && (s.Project == "" || s.Project == a.Project)
}

// SafeFilename turns a caller's filename into one path segment safe in a URL: the base name,
// ASCII letters, digits, '.', '-' and '_' only, no leading dot, at most 100 bytes (the
// extension kept), "file" when nothing is left.
func SafeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	dash := false
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
			continue
		}
		if r == '.' && b.Len() > 0 && strings.HasSuffix(b.String(), ".") {
			continue
		}
		b.WriteRune(r)
		dash = r == '-'
	}
	s := strings.TrimLeft(b.String(), ".-")
	s = strings.TrimRight(s, "-")
	if len(s) > 100 {
		ext := ""
		if i := strings.LastIndexByte(s, '.'); i > 0 && len(s)-i <= 10 {
			ext = s[i:]
		}
		s = strings.TrimRight(s[:100-len(ext)], ".-") + ext
	}
	if s == "" || s == "." {
		return "file"
	}
	return s
}
