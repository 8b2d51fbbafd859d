package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The document is valid OpenAPI 3.1 (kin-openapi's loader and Validate), and every operation
// has a unique operationId, a tag and at least one response.
func TestDocumentIsValid(t *testing.T) {
	raw, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("LoadFromData(openapi.json): %v", err)
	}
	if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			switch {
			case op.OperationID == "":
				t.Errorf("%s has no operationId", where)
			case ids[op.OperationID] != "":
				t.Errorf("%s repeats operationId %s of %s", where, op.OperationID, ids[op.OperationID])
			}
			ids[op.OperationID] = where
			if len(op.Tags) == 0 {
				t.Errorf("%s has no tag", where)
			}
			if op.Responses == nil || op.Responses.Len() == 0 {
				t.Errorf("%s documents no response", where)
			}
		}
	}
	for _, name := range []string{"publishableKey", "secretKey", "adminToken", "adminSession", "filesBearer"} {
		if doc.Components.SecuritySchemes[name] == nil {
			t.Errorf("security scheme %s is missing", name)
		}
	}
	for _, name := range []string{"Error", "ListEnvelope", "Pagination"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("schema %s is missing", name)
		}
	}
}

// Every shared error response is the Error envelope, and a non-2xx answer of an operation is
// always one of them (so each status's codes are listed once, in components.responses).
func TestErrorsAreTheEnvelope(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]map[string]any `json:"responses"`
		} `json:"paths"`
	}
	raw, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths {
		for method, op := range item {
			for status, resp := range op.Responses {
				if status[0] < '4' || status == "416" && strings.HasPrefix(path, "/cdn/") || path == "/readyz" {
					continue
				}
				ref, _ := resp["$ref"].(string)
				if !strings.HasPrefix(ref, "#/components/responses/") {
					t.Errorf("%s %s answers %s without a shared error response", method, path, status)
				}
			}
		}
	}
}
