package files

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// Bounds and defaults of a variant's options (docs/files.md, "Image variants").
const (
	// MaxVariantSide is the largest width or height a variant may ask for.
	MaxVariantSide = 4096
	// DefaultQuality is a variant's quality when it names none.
	DefaultQuality = 80
	// MaxVariants is how many named variants one project may define.
	MaxVariants = 32
)

// Fits and formats of a variant.
var (
	fits    = []string{"cover", "contain", "inside"}
	formats = []string{"auto", "webp", "avif", "jpeg", "png"}
)

// variantNameRe is a variant's name: it becomes a path segment in place of "originals".
var variantNameRe = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)

// Spec is what a variant is made of: a box (Width or Height may be 0: that side follows the
// aspect ratio), how the image fits in it, the output format and its quality.
type Spec struct {
	Width   int    `json:"width,omitempty"`
	Height  int    `json:"height,omitempty"`
	Fit     string `json:"fit"`
	Format  string `json:"format"`
	Quality int    `json:"quality"`
}

// VariantOptions are the options of a variant as a caller writes them (the tenants document's
// entries and the body of POST /assets/{id}/variant-url): nil is "not given".
type VariantOptions struct {
	Width   *int   `json:"width"`
	Height  *int   `json:"height"`
	Fit     string `json:"fit"`
	Format  string `json:"format"`
	Quality *int   `json:"quality"`
}

// Spec checks the options and returns the spec they give, defaults filled in (fit inside,
// format auto, quality 80). Each problem is passed to add with its field name.
func (o VariantOptions) Spec(add func(field, problem string)) (Spec, bool) {
	ok := true
	bad := func(field, problem string) { ok = false; add(field, problem) }
	s := Spec{Fit: o.Fit, Format: o.Format, Quality: DefaultQuality}
	side := func(field string, v *int) int {
		if v == nil {
			return 0
		}
		if *v < 1 || *v > MaxVariantSide {
			bad(field, fmt.Sprintf("must be 1-%d pixels", MaxVariantSide))
			return 0
		}
		return *v
	}
	s.Width, s.Height = side("width", o.Width), side("height", o.Height)
	if o.Width == nil && o.Height == nil {
		bad("width", "width or height is required")
	}
	if s.Fit == "" {
		s.Fit = "inside"
	} else if !oneOf(s.Fit, fits) {
		bad("fit", "must be cover, contain or inside")
	}
	if s.Format == "" {
		s.Format = "auto"
	} else if !oneOf(s.Format, formats) {
		bad("format", "must be auto, webp, avif, jpeg or png")
	}
	if o.Quality != nil {
		if *o.Quality < 1 || *o.Quality > 100 {
			bad("quality", "must be 1-100")
		}
		s.Quality = *o.Quality
	}
	return s, ok
}

// CheckSpec validates options as an API body does: VALIDATION_FAILED naming each bad field.
func CheckSpec(o VariantOptions) (Spec, error) {
	var probs []apierr.FieldProblem
	s, ok := o.Spec(func(field, problem string) {
		probs = append(probs, apierr.FieldProblem{Field: field, Problem: problem})
	})
	if !ok {
		return Spec{}, apierr.Validation(probs...)
	}
	return s, nil
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// IsVariantName reports a name a project may give a variant: 1-32 of a-z, 0-9 and '-', and not
// "originals".
func IsVariantName(name string) bool { return variantNameRe.MatchString(name) && name != "originals" }

// Canonical is the spec's one spelling: "w320_h200_cover_webp_q75" (a side that follows the
// aspect ratio is left out). It names an ad-hoc variant in its URL and, with the format
// replaced by the one made, a built variant in the blob store.
func (s Spec) Canonical() string { return s.key(s.Format) }

func (s Spec) key(format string) string {
	var b strings.Builder
	if s.Width > 0 {
		b.WriteString("w" + strconv.Itoa(s.Width) + "_")
	}
	if s.Height > 0 {
		b.WriteString("h" + strconv.Itoa(s.Height) + "_")
	}
	b.WriteString(s.Fit + "_" + format + "_q" + strconv.Itoa(s.Quality))
	return b.String()
}

// parseCanonical reads a spec written by Canonical; ok only for that exact spelling.
func parseCanonical(seg string) (Spec, bool) {
	parts := strings.Split(seg, "_")
	var s Spec
	num := func(p, prefix string, lo, hi int) (int, bool) {
		v, ok := strings.CutPrefix(p, prefix)
		n, err := strconv.Atoi(v)
		return n, ok && err == nil && n >= lo && n <= hi
	}
	i := 0
	if i < len(parts) && strings.HasPrefix(parts[i], "w") {
		n, ok := num(parts[i], "w", 1, MaxVariantSide)
		if !ok {
			return Spec{}, false
		}
		s.Width, i = n, i+1
	}
	if i < len(parts) && strings.HasPrefix(parts[i], "h") {
		n, ok := num(parts[i], "h", 1, MaxVariantSide)
		if !ok {
			return Spec{}, false
		}
		s.Height, i = n, i+1
	}
	if len(parts)-i != 3 || s.Width == 0 && s.Height == 0 {
		return Spec{}, false
	}
	s.Fit, s.Format = parts[i], parts[i+1]
	q, ok := num(parts[i+2], "q", 1, 100)
	s.Quality = q
	if !ok || !oneOf(s.Fit, fits) || !oneOf(s.Format, formats) || s.Canonical() != seg {
		return Spec{}, false
	}
	return s, true
}

// VariantSigner signs ad-hoc variant URLs: HMAC-SHA256 with a key per project, derived from
// the server's variant key and the project id, over the asset id and the canonical spec. The
// signature is its first 16 bytes in hex, the last part of the URL's variant segment:
// "w320_h200_cover_webp_q75_s<32 hex digits>".
type VariantSigner struct{ key []byte }

// NewVariantSigner returns a signer over the server secret key (at least 16 bytes).
func NewVariantSigner(key []byte) (*VariantSigner, error) {
	if len(key) < 16 {
		return nil, fmt.Errorf("files: variant URL key must have at least 16 bytes")
	}
	return &VariantSigner{key: append([]byte(nil), key...)}, nil
}

// projectKey is the project's own signing key.
func (v *VariantSigner) projectKey(project string) []byte {
	m := hmac.New(sha256.New, v.key)
	m.Write([]byte("gatehouse-variant-key-v1\x00" + project))
	return m.Sum(nil)
}

func (v *VariantSigner) sig(project, assetID, canonical string) string {
	m := hmac.New(sha256.New, v.projectKey(project))
	m.Write([]byte("gatehouse-variant-v1\x00" + assetID + "\x00" + canonical))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Segment returns the signed variant segment of spec s for the asset of project.
func (v *VariantSigner) Segment(project, assetID string, s Spec) string {
	c := s.Canonical()
	return c + "_s" + v.sig(project, assetID, c)
}

// Verify reads a signed variant segment for the asset of project; ok only when it is the one
// spelling Segment writes.
func (v *VariantSigner) Verify(project, assetID, seg string) (Spec, bool) {
	i := strings.LastIndex(seg, "_s")
	if i < 0 {
		return Spec{}, false
	}
	c, sig := seg[:i], seg[i+2:]
	s, ok := parseCanonical(c)
	if !ok || len(sig) != 32 {
		return Spec{}, false
	}
	if !hmac.Equal([]byte(sig), []byte(v.sig(project, assetID, c))) {
		return Spec{}, false
	}
	return s, true
}

// isAdHoc reports a variant segment that is not a name (names have no '_').
func isAdHoc(seg string) bool { return strings.Contains(seg, "_") }
