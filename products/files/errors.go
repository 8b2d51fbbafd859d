package files

import "github.com/gatehouse-dev/gatehouse/edge/apierr"

// API errors of the product, each with its one interface code.
var (
	// ErrUnsupportedType is a mimeType outside the five accepted image types.
	ErrUnsupportedType = apierr.New(400, "UNSUPPORTED_MEDIA_TYPE", "mimeType must be one of image/png, image/jpeg, image/webp, image/svg+xml, image/gif", nil)
	// ErrTooLarge is a declared size over MaxFileSize, or an image whose pixel count is over MaxPixels.
	ErrTooLarge = apierr.New(400, "FILE_TOO_LARGE", "the file exceeds the 5 MB limit", nil)
	// ErrPixelsTooMany is an image whose declared width x height is over MaxPixels.
	ErrPixelsTooMany = apierr.New(400, "FILE_TOO_LARGE", "the image has more pixels than allowed", nil)
	// ErrAssetNotFound is an unknown asset id, or one the key may not see.
	ErrAssetNotFound = apierr.New(404, "ASSET_NOT_FOUND", "no asset with that id", nil)
	// ErrURLInvalid is an upload URL that is expired, tampered with or for a removed slot.
	ErrURLInvalid = apierr.New(403, "UPLOAD_URL_INVALID", "the upload URL is expired or invalid; request a new slot", nil)
	// ErrMismatch is a body whose length or sniffed type differs from the slot.
	ErrMismatch = apierr.New(400, "UPLOAD_MISMATCH", "the uploaded bytes do not match the slot", nil)
	// ErrSlotUsed is a second PUT to a slot that already holds bytes (or is receiving them).
	ErrSlotUsed = apierr.New(409, "UPLOAD_SLOT_USED", "this upload slot has already been used; request a new slot", nil)
	// ErrIncomplete is /upload/complete before the bytes arrived.
	ErrIncomplete = apierr.New(409, "UPLOAD_INCOMPLETE", "no bytes have been uploaded for this asset yet", nil)
	// ErrUnsafeSVG is an SVG with script, event handlers, javascript: URLs or external references.
	ErrUnsafeSVG = apierr.New(400, "UNSAFE_SVG", "the SVG contains script, event handlers or external references", nil)
)

// mismatch returns ErrMismatch with a specific message.
func mismatch(msg string) error {
	return apierr.New(ErrMismatch.Status, ErrMismatch.Code, msg, nil)
}

// unsafeSVG returns ErrUnsafeSVG naming what was found.
func unsafeSVG(msg string) error {
	return apierr.New(ErrUnsafeSVG.Status, ErrUnsafeSVG.Code, "unsafe SVG: "+msg, nil)
}

// API errors of image variants (decisions.md 9.3).
var (
	// ErrVariantNotFound is a variant name the asset's project does not define.
	ErrVariantNotFound = apierr.New(404, apierr.CodeNotFound, "no variant of that name in the asset's project", nil)
	// ErrVariantNotSigned is an ad-hoc variant URL without a valid signature.
	ErrVariantNotSigned = apierr.New(403, "VARIANT_NOT_SIGNED", "the ad-hoc variant URL is not signed, or its signature is wrong", nil)
	// ErrVariantTooLarge is a source image over files.variant_max_pixels.
	ErrVariantTooLarge = apierr.New(422, "VARIANT_TOO_LARGE", "the image has too many pixels to make variants of", nil)
	// ErrVariantBusy is a build refused by the build pool: its project's queue is full or the
	// memory budget stayed taken while it waited.
	ErrVariantBusy = apierr.New(503, "VARIANT_BUSY", "variant builds are busy; try again shortly", nil).WithHeader("Retry-After", "2")
	// ErrVariantSource is an original that cannot be decoded (truncated, malformed).
	ErrVariantSource = apierr.New(422, "VARIANT_UNREADABLE", "the original image cannot be decoded", nil)
)
