package files

import (
	"context"
	"errors"
	"strings"
)

// ThumbnailVariant is the name of the named variant the dashboard's file list shows when the
// asset's project defines one (docs/files.md, "Thumbnails in the dashboard").
const ThumbnailVariant = "thumb"

// thumbnailSpec is the signed ad-hoc variant the file list shows otherwise: a 256 px square
// crop, AVIF or WebP for the browser, small enough for a grid of 24.
var thumbnailSpec = Spec{Width: 256, Height: 256, Fit: "cover", Format: "auto", Quality: 70}

// ThumbnailURL answers the URL of a small image of a for the dashboard's file list, and "" when
// it has none: a pending or private asset is not on the asset host. A raster image gets its
// project's variant named ThumbnailVariant when there is one, else the signed ad-hoc
// thumbnailSpec; an SVG gets its original (it has no raster variants). Nothing is built here:
// the variant is made when the browser first asks for it.
func (s *Service) ThumbnailURL(ctx context.Context, a *Asset) (string, error) {
	if a.Status != StatusCompleted || !a.Public || !strings.HasPrefix(a.MimeType, "image/") {
		return "", nil
	}
	org, rest, ok := strings.Cut(a.StorageKey, "/originals/")
	if !ok {
		return "", nil
	}
	if a.MimeType == "image/svg+xml" {
		return s.base + "/" + a.StorageKey, nil
	}
	seg := ThumbnailVariant
	if _, err := s.namedVariant(ctx, a.Project, ThumbnailVariant); errors.Is(err, ErrVariantNotFound) {
		seg = s.o.VariantSigner.Segment(a.Project, a.ID, thumbnailSpec)
	} else if err != nil {
		return "", err
	}
	return s.base + "/" + org + "/" + seg + "/" + rest, nil
}
