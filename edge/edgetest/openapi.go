package edgetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/gatehouse-dev/gatehouse/edge/openapi"
)

// contractHost is the server URL the document is matched against: a request's path and
// method find its operation whatever loopback port the harness listens on.
const contractHost = "http://gatehouse.test"

// contract is the OpenAPI document loaded once per test binary (it never changes), and the
// router that finds a request's operation in it.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	raw, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("edgetest: load the OpenAPI document: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: contractHost}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("edgetest: route the OpenAPI document: %w", err)
	}
	return &contract{doc: doc, router: router}, nil
})

// checkContract validates a response a harness request received against the OpenAPI document
// (edge/openapi/openapi.yaml): its status must be one the operation documents, its
// Content-Type one of that response's, and a JSON body must match the schema. A request the
// document has no operation for (an unknown route, a test-only product, the dashboard's files,
// an OPTIONS preflight, a HEAD) is not checked. It returns "" when the response matches.
func (h *Harness) checkContract(req *http.Request, status int, header http.Header, body []byte) string {
	hosts := map[string]string{}
	// The asset and embed hosts serve their routes at the root; the document lists them
	// under /cdn and /embed, where the main host serves them too.
	if a := hostOf(h.Config.AssetHost); a != "" && a != hostOf(h.Config.PublicURL) {
		hosts[a] = "/cdn"
	}
	if e := hostOf(h.Config.EmbedHost); e != "" && e != hostOf(h.Config.PublicURL) {
		hosts[e] = "/embed"
	}
	return CheckContract(req, status, header, body, hosts)
}

// CheckContract validates a response (status, header, body) the gateway gave to req against
// the OpenAPI document, for test helpers other than Harness.Do (a gateway wired in the test,
// the real binary). hostPrefixes maps a Host the gateway routes by (the asset or embed host)
// to the prefix its routes have in the document ("/cdn", "/embed"). It returns "" when the
// response matches or the document has no operation for the request.
func CheckContract(req *http.Request, status int, header http.Header, body []byte, hostPrefixes map[string]string) string {
	if req.Method == http.MethodOptions || req.Method == http.MethodHead {
		return ""
	}
	c, err := loadContract()
	if err != nil {
		return err.Error()
	}
	path := req.URL.EscapedPath()
	if prefix, ok := hostPrefixes[strings.ToLower(req.Host)]; ok {
		path = prefix + path
	}
	u, err := url.Parse(contractHost + path)
	if err != nil {
		return ""
	}
	if req.URL.RawQuery != "" {
		u.RawQuery = req.URL.RawQuery
	}
	probe := req.Clone(context.Background())
	probe.URL, probe.Host, probe.RequestURI = u, u.Host, ""
	route, params, err := c.router.FindRoute(probe)
	if err != nil {
		return "" // no operation: nothing to check against
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: probe, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	ctype, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	if ctype != "application/json" {
		// Bytes of a file, a page, a CSV: the status and the media type are the contract.
		in.Options.ExcludeResponseBody = true
		if resp := route.Operation.Responses.Status(status); resp != nil && resp.Value != nil && len(resp.Value.Content) > 0 && len(body) > 0 {
			if resp.Value.Content.Get(header.Get("Content-Type")) == nil {
				return fmt.Sprintf("%s %s answered %d with Content-Type %q, which operation %s does not document",
					req.Method, req.URL.Path, status, header.Get("Content-Type"), route.Operation.OperationID)
			}
		}
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Sprintf("%s %s answered %d %s, which does not match operation %s of edge/openapi/openapi.yaml: %v",
			req.Method, req.URL.Path, status, truncate(body, 300), route.Operation.OperationID, err)
	}
	return ""
}

func hostOf(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
