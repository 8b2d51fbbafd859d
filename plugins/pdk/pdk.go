package pdk

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Errors reported by the host functions; each matches one negative status
// code of the ABI.
var (
	ErrNotFound = errors.New("pdk: not found")                    // -1
	ErrDenied   = errors.New("pdk: denied by the host")           // -2
	ErrLimit    = errors.New("pdk: host limit exceeded")          // -3
	ErrInvalid  = errors.New("pdk: invalid argument")             // -4
	ErrFailed   = errors.New("pdk: host operation failed")        // -5
	ErrNoHost   = errors.New("pdk: not running inside gatehouse") // outside wasip1
)

func statusErr(code int32) error {
	switch code {
	case -1:
		return ErrNotFound
	case -2:
		return ErrDenied
	case -3:
		return ErrLimit
	case -4:
		return ErrInvalid
	default:
		return ErrFailed
	}
}

// Submission is the input of the forms.submit hook.
type Submission struct {
	Project string // project id
	Form    string // form slug
	Data    Value  // the submitted fields, a JSON object
}

// Field returns one submitted field, the zero Value when absent.
func (s Submission) Field(name string) Value { return s.Data.Get(name) }

// Verdict is what a filter hook (forms.submit, email.send) answers.
type Verdict struct {
	action    string
	code      string
	message   string
	data      []byte // forms.submit rewrite
	variables []byte // email.send rewrite
	tags      []string
}

// Allow lets the submission or email through unchanged.
func Allow() Verdict { return Verdict{action: "allow"} }

// Reject stops the request; code (UPPER_CASE) and message reach the caller.
func Reject(code, message string) Verdict {
	return Verdict{action: "reject", code: code, message: message}
}

// RewriteData replaces the submitted fields (forms.submit) with data.
func RewriteData(data map[string]any) Verdict {
	b, err := json.Marshal(data)
	if err != nil {
		return Verdict{action: "error", message: err.Error()}
	}
	return Verdict{action: "rewrite", data: b}
}

// RewriteDataRaw replaces the submitted fields with raw, a JSON object.
func RewriteDataRaw(raw []byte) Verdict { return Verdict{action: "rewrite", data: raw} }

// RewriteEmail replaces the template variables and/or tags of an email;
// a nil argument leaves that part unchanged.
func RewriteEmail(variables map[string]any, tags []string) Verdict {
	v := Verdict{action: "rewrite", tags: tags}
	if variables != nil {
		b, err := json.Marshal(variables)
		if err != nil {
			return Verdict{action: "error", message: err.Error()}
		}
		v.variables = b
	}
	return v
}

func (v Verdict) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"action":`...)
	dst = AppendString(dst, v.action)
	if v.code != "" {
		dst = append(dst, `,"code":`...)
		dst = AppendString(dst, v.code)
	}
	if v.message != "" {
		dst = append(dst, `,"message":`...)
		dst = AppendString(dst, v.message)
	}
	if v.data != nil {
		dst = append(dst, `,"data":`...)
		dst = append(dst, v.data...)
	}
	if v.variables != nil {
		dst = append(dst, `,"variables":`...)
		dst = append(dst, v.variables...)
	}
	if v.tags != nil {
		dst = append(dst, `,"tags":[`...)
		for i, t := range v.tags {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendString(dst, t)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// Page is the input of the records.read hook: one page of records, each a
// JSON object with populated relations nested inside it.
type Page struct {
	Project    string
	Collection string
	Records    Value // a JSON array of objects
}

// Email is the input of the email.send hook; Doc holds the whole message
// (to, from, templateId, subject, variables, tags, metadata).
type Email struct {
	Project string
	Doc     Value
}

// Captcha is the input of the captcha.verify hook.
type Captcha struct {
	Project  string
	Token    string
	RemoteIP string
}

var handlers struct {
	formSubmit    func(Submission) Verdict
	recordsRead   func(Page) ([][]byte, error)
	emailSend     func(Email) Verdict
	captchaVerify func(Captcha) (bool, error)
}

// OnFormSubmit registers the forms.submit handler. Call it from init.
func OnFormSubmit(fn func(Submission) Verdict) { handlers.formSubmit = fn }

// OnRecordsRead registers the records.read handler. It returns the page's
// records rewritten, one JSON object per input record and in the same
// order, or nil to leave the page unchanged. Call it from init.
func OnRecordsRead(fn func(Page) ([][]byte, error)) { handlers.recordsRead = fn }

// OnEmailSend registers the email.send handler. Call it from init.
func OnEmailSend(fn func(Email) Verdict) { handlers.emailSend = fn }

// OnCaptchaVerify registers the captcha.verify handler; it answers whether
// the token is good. An error makes the host apply the plugin's failure
// policy (fail-closed unless the operator chose otherwise). Call it from init.
func OnCaptchaVerify(fn func(Captcha) (bool, error)) { handlers.captchaVerify = fn }

// Hook return codes of the ABI.
const (
	codeOK    int32 = 0
	codeError int32 = 1
)

var outBuf []byte

func fail(msg string) int32 {
	writeOutput([]byte(msg))
	return codeError
}

func runFormSubmit() int32 {
	if handlers.formSubmit == nil {
		return fail("pdk: no forms.submit handler registered")
	}
	var s Submission
	hostDoc(readInput()).scanObject(func(k []byte, _ bool, v Value) bool {
		switch string(k) {
		case "project":
			s.Project = v.Text()
		case "form":
			s.Form = v.Text()
		case "data":
			s.Data = v
		}
		return true
	})
	return writeVerdict(handlers.formSubmit(s))
}

func runEmailSend() int32 {
	if handlers.emailSend == nil {
		return fail("pdk: no email.send handler registered")
	}
	doc := hostDoc(readInput())
	return writeVerdict(handlers.emailSend(Email{Project: doc.Get("project").Text(), Doc: doc.Get("email")}))
}

func writeVerdict(v Verdict) int32 {
	switch v.action {
	case "allow", "":
		return codeOK // empty output: allow
	case "error":
		return fail(v.message)
	}
	outBuf = v.appendJSON(outBuf[:0])
	if writeOutput(outBuf) < 0 {
		return codeError
	}
	return codeOK
}

func runRecordsRead() int32 {
	if handlers.recordsRead == nil {
		return fail("pdk: no records.read handler registered")
	}
	doc := hostDoc(readInput())
	p := Page{Project: doc.Get("project").Text(), Collection: doc.Get("collection").Text(), Records: doc.Get("records")}
	recs, err := handlers.recordsRead(p)
	if err != nil {
		return fail(err.Error())
	}
	if recs == nil {
		return codeOK
	}
	outBuf = append(outBuf[:0], `{"records":[`...)
	for i, r := range recs {
		if i > 0 {
			outBuf = append(outBuf, ',')
		}
		outBuf = append(outBuf, r...)
	}
	outBuf = append(outBuf, "]}"...)
	if writeOutput(outBuf) < 0 {
		return codeError
	}
	return codeOK
}

func runCaptchaVerify() int32 {
	if handlers.captchaVerify == nil {
		return fail("pdk: no captcha.verify handler registered")
	}
	doc := hostDoc(readInput())
	ok, err := handlers.captchaVerify(Captcha{
		Project:  doc.Get("project").Text(),
		Token:    doc.Get("token").Text(),
		RemoteIP: doc.Get("remoteIP").Text(),
	})
	if err != nil {
		return fail(err.Error())
	}
	out := `{"success":false}`
	if ok {
		out = `{"success":true}`
	}
	if writeOutput([]byte(out)) < 0 {
		return codeError
	}
	return codeOK
}

var configCache map[string]string

// Config returns the value of one key of the plugin's config (the tenants
// document's plugins[].config). Values do not change during an instance's
// life, so they are cached after the first read.
func Config(key string) (string, bool) {
	if v, ok := configCache[key]; ok {
		return v, true
	}
	v, ok := configGet(key)
	if ok {
		if configCache == nil {
			configCache = map[string]string{}
		}
		configCache[key] = v
	}
	return v, ok
}

// ConfigOr returns Config(key), or def when the key is not set.
func ConfigOr(key, def string) string {
	if v, ok := Config(key); ok {
		return v
	}
	return def
}

// ConfigInt returns Config(key) as an integer, or def when it is not set or
// not a number.
func ConfigInt(key string, def int) int {
	if v, ok := Config(key); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// Log levels for Log.
const (
	LevelDebug int32 = -4
	LevelInfo  int32 = 0
	LevelWarn  int32 = 4
	LevelError int32 = 8
)

// Log writes one line to the plugin's log buffer on the host (what an
// operator sees next to the plugin's stdout and stderr).
func Log(level int32, msg string) { logWrite(level, msg) }

// Request is an outgoing HTTP request for Fetch. Header values and the body
// may contain {{config.KEY}} placeholders, which the host replaces with the
// plugin's config values after the request has left the guest, so a secret
// can be sent without the plugin reading it. Placeholders are replaced once
// and only in the text the plugin wrote: URL-encode user input (as
// url.QueryEscape does) so it cannot carry a placeholder of its own.
type Request struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// Response is the answer to Fetch.
type Response struct {
	Status int
	Body   []byte
}

// Fetch performs req through the host's http_fetch. The host allows only
// the schemes, hosts and ports the operator listed in the plugin's
// allowHosts, refuses private and loopback addresses, and caps the number
// of calls, the response size and the time.
func Fetch(req Request) (Response, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return Response{}, err
	}
	return fetch(b)
}

// hostDoc wraps an input document from the host, which is always one valid
// JSON object: it is not validated again (every scanned byte costs a loop
// iteration, and loops are what the host's time limit makes expensive).
func hostDoc(b []byte) Value {
	if len(b) == 0 || b[0] != '{' {
		return ParseValue(b)
	}
	return Value{raw: b}
}
