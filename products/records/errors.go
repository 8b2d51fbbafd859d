package records

import "github.com/gatehouse-dev/gatehouse/edge/apierr"

// API errors of the product: the one place codes are chosen.
var (
	// ErrProjectNotFound is an unknown project, or one the key may not see.
	ErrProjectNotFound = apierr.New(404, "PROJECT_NOT_FOUND", "no project with that id", nil)
	// ErrCollectionNotFound is an unknown collection, or a non-public one read with a publishable key.
	ErrCollectionNotFound = apierr.New(404, "COLLECTION_NOT_FOUND", "no collection with that name", nil)
	// ErrRecordNotFound is an unknown or unpublished record.
	ErrRecordNotFound = apierr.New(404, "RECORD_NOT_FOUND", "no published record with that id", nil)
	// ErrPrivateField is a private field used in filter, sort, groupBy or distinct with a publishable key.
	ErrPrivateField = apierr.New(400, "PRIVATE_FIELD_NOT_QUERYABLE", "a private field can only be queried with a secret key", nil)
)

// Codes of the errors built per request.
const (
	codeInvalidFilter = "INVALID_FILTER"
	codeInvalidSort   = "INVALID_SORT"
)

func invalidFilter(msg string) error { return apierr.New(400, codeInvalidFilter, msg, nil) }

func invalidSort(msg string) error { return apierr.New(400, codeInvalidSort, msg, nil) }

func privateField(name string) error {
	e := *ErrPrivateField
	e.Message = "field " + name + " is private: it can only be queried with a secret key"
	return &e
}

func validation(field, problem string) error {
	return apierr.Validation(apierr.FieldProblem{Field: field, Problem: problem})
}

// Errors of the product's plugin hook (records.read); the plugin adapter the composition root gives the
// product returns them (a reject is apierr.PluginRejected).
var (
	// ErrPluginFailed is a fail-closed plugin that gave no verdict.
	ErrPluginFailed = apierr.New(503, apierr.CodePluginFailed, "a plugin of this project failed; try again", nil)
	// ErrPluginBusy is a fail-closed plugin not run: the project's plugins are over their CPU
	// budget (or their queue is full); the caller may retry shortly.
	ErrPluginBusy = apierr.New(503, apierr.CodePluginBusy, "this project's plugins are over their CPU budget; try again shortly", nil).WithHeader("Retry-After", "1")
)
