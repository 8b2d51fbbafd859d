// Package openapi holds the gateway's HTTP contract: openapi.yaml, an OpenAPI 3.1 document of
// every public route of the five products, the asset and embed hosts, the admin API
// (/admin/v1) and the probes, kept beside the code as its one source of truth. The server
// serves it as JSON at GET /openapi.json (no key, on the main host) and a browsable reference
// of it at GET /docs/ (Redoc's standalone bundle, embedded: reference.go). Tests keep it true:
// edge/cmd/gatehouse walks the assembled server's routes against it, and edge/edgetest
// validates every response the e2e tests receive against it (docs/api.md).
package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"go.yaml.in/yaml/v3"
)

// source is the document as written (YAML, so it can carry comments and stay readable).
//
//go:embed openapi.yaml
var source []byte

// YAML returns the document as written.
func YAML() []byte { return source }

// JSON returns the document as JSON, the form /openapi.json serves.
func JSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(source, &doc); err != nil {
		return nil, fmt.Errorf("openapi: openapi.yaml: %w", err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: openapi.yaml as JSON: %w", err)
	}
	return out, nil
}

// Spec serves the document.
type Spec struct {
	json []byte
}

// New converts the document to JSON once; a document that does not convert is an error
// (a test catches it before any build ships).
func New() (*Spec, error) {
	raw, err := JSON()
	if err != nil {
		return nil, err
	}
	return &Spec{json: raw}, nil
}

// Mount registers GET /openapi.json on r (the main host's root).
func (s *Spec) Mount(r fiber.Router) {
	r.Get("/openapi.json", s.serve)
}

func (s *Spec) serve(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	return c.Send(s.json)
}
