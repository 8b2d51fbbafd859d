// Package forms is the Forms product: GET /forms/{slug} answers a published form's
// definition and POST /forms/{slug}/submit validates and stores one submission (JSON, flat
// JSON, urlencoded or multipart with file parts), behind a project-scoped publishable key, a
// per-key-per-form rate limit and, when the form asks for it, a captcha check. Submissions are
// written durably through the store's group committer and listed newest first by the admin
// inbox route.
//
// Contract: "Forms" in the public REST interface and decisions.md sections 4 and 5;
// behaviour and the choices the contract left open are in docs/forms.md.
//
// Layout: api.go (fiber routes only), service.go (the rules), validate.go (field checks),
// captcha.go (the Verifier interface and the three built-in providers), store.go (key layout),
// model.go, errors.go.
package forms
