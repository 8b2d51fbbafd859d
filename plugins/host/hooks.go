package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
)

// Action is what a filter decided.
type Action string

// Filter actions.
const (
	Allow   Action = "allow"   // let the request through unchanged
	Reject  Action = "reject"  // stop it with Code and Message
	Rewrite Action = "rewrite" // let it through with the rewritten values
)

// FormVerdict is the outcome of FormsSubmit.
type FormVerdict struct {
	Action  Action
	Code    string         // Reject: UPPER_CASE code chosen by the plugin
	Message string         // Reject: human sentence chosen by the plugin
	Data    map[string]any // Rewrite: the submission's new fields
	Plugin  string         // the plugin that rejected or last rewrote
}

// Address is an email address with an optional display name.
type Address struct {
	Email string `json:"email"`
	Name  string `json:"name,omitempty"`
}

// EmailInput is an email about to be queued, as the email.send hook sees it.
type EmailInput struct {
	To         Address           `json:"to"`
	From       *Address          `json:"from,omitempty"`
	ReplyTo    *Address          `json:"replyTo,omitempty"`
	TemplateID string            `json:"templateId,omitempty"`
	Subject    string            `json:"subject,omitempty"`
	BodyHTML   string            `json:"bodyHtml,omitempty"`
	BodyText   string            `json:"bodyText,omitempty"`
	Variables  map[string]any    `json:"variables,omitempty"`
	Tags       []string          `json:"tags,omitempty"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// EmailVerdict is the outcome of EmailSend. On Rewrite, Variables and Tags
// hold the values to send (unchanged ones included).
type EmailVerdict struct {
	Action    Action
	Code      string
	Message   string
	Variables map[string]any
	Tags      []string
	Plugin    string
}

// filterOutput is the JSON a filter hook writes (empty output = allow).
type filterOutput struct {
	Action    Action          `json:"action"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Data      json.RawMessage `json:"data"`
	Variables json.RawMessage `json:"variables"`
	Tags      []string        `json:"tags"`
}

var codeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

func decodeFilter(out []byte) (filterOutput, error) {
	var f filterOutput
	if len(bytes.TrimSpace(out)) == 0 {
		f.Action = Allow
		return f, nil
	}
	if err := json.Unmarshal(out, &f); err != nil {
		return f, err
	}
	switch f.Action {
	case Allow:
	case Reject:
		if !codeRE.MatchString(f.Code) {
			return f, fmt.Errorf("reject code %q is not UPPER_CASE", f.Code)
		}
		if len(f.Message) > 500 {
			f.Message = f.Message[:500]
		}
	case Rewrite:
	default:
		return f, fmt.Errorf("unknown action %q", f.Action)
	}
	return f, nil
}

// FormsSubmit runs the project's forms.submit plugins in registration order.
// Each sees the data as the previous one left it; the first Reject stops
// the chain. A plugin that fails is skipped under fail-open and fails the
// whole call (an error wrapping ErrPluginFailed) under fail-closed.
func (h *Host) FormsSubmit(ctx context.Context, project, form string, data map[string]any) (FormVerdict, error) {
	verdict := FormVerdict{Action: Allow}
	plugins := h.withHook(project, hookFormsSubmit)
	if len(plugins) == 0 {
		return verdict, nil
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return verdict, fmt.Errorf("host: forms.submit data: %w", err)
	}
	for _, pl := range plugins {
		input := appendDoc(nil, "project", project, "form", form)
		input = append(append(input[:len(input)-1], `,"data":`...), raw...)
		input = append(input, '}')
		var out filterOutput
		err := pl.call(ctx, hookFormsSubmit, input, func(b []byte) error {
			var err error
			out, err = decodeFilter(b)
			if err == nil && out.Action == Rewrite && !isObject(out.Data) {
				err = errors.New("rewrite without a data object")
			}
			return err
		})
		if err != nil {
			if pl.open && ctx.Err() == nil {
				continue
			}
			return FormVerdict{}, err
		}
		switch out.Action {
		case Reject:
			return FormVerdict{Action: Reject, Code: out.Code, Message: out.Message, Plugin: pl.reg.Name}, nil
		case Rewrite:
			raw = out.Data
			verdict.Action, verdict.Plugin = Rewrite, pl.reg.Name
		}
	}
	if verdict.Action == Rewrite {
		if err := json.Unmarshal(raw, &verdict.Data); err != nil {
			return FormVerdict{}, fmt.Errorf("%w: %w", ErrBadOutput, err)
		}
	}
	return verdict, nil
}

// RecordsRead runs the project's records.read plugins over one page of
// records (one call per plugin for the whole page). Each record is a JSON
// object, populated relations nested inside it. The result has as many
// records as the input, in the same order. A failing fail-open plugin
// leaves the page as it was; a failing fail-closed one fails the call.
func (h *Host) RecordsRead(ctx context.Context, project, collection string, records []json.RawMessage) ([]json.RawMessage, error) {
	plugins := h.withHook(project, hookRecordsRead)
	if len(plugins) == 0 || len(records) == 0 {
		return records, nil
	}
	for _, pl := range plugins {
		input := appendDoc(nil, "project", project, "collection", collection)
		input = append(input[:len(input)-1], `,"records":[`...)
		for i, r := range records {
			if i > 0 {
				input = append(input, ',')
			}
			input = append(input, r...)
		}
		input = append(input, "]}"...)
		var next []json.RawMessage
		err := pl.call(ctx, hookRecordsRead, input, func(b []byte) error {
			if len(bytes.TrimSpace(b)) == 0 {
				return nil // unchanged
			}
			var out struct {
				Records []json.RawMessage `json:"records"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				return err
			}
			if len(out.Records) != len(records) {
				return fmt.Errorf("records.read returned %d records for %d", len(out.Records), len(records))
			}
			for i, r := range out.Records {
				if !isObject(r) {
					return fmt.Errorf("record %d is not an object", i)
				}
			}
			next = out.Records
			return nil
		})
		if err != nil {
			if pl.open && ctx.Err() == nil {
				continue
			}
			return nil, err
		}
		if next != nil {
			records = next
		}
	}
	return records, nil
}

// EmailSend runs the project's email.send plugins in order, like
// FormsSubmit: the first Reject stops the chain, rewrites accumulate.
func (h *Host) EmailSend(ctx context.Context, project string, msg EmailInput) (EmailVerdict, error) {
	verdict := EmailVerdict{Action: Allow}
	plugins := h.withHook(project, hookEmailSend)
	if len(plugins) == 0 {
		return verdict, nil
	}
	for _, pl := range plugins {
		email, err := json.Marshal(msg)
		if err != nil {
			return verdict, fmt.Errorf("host: email.send input: %w", err)
		}
		input := appendDoc(nil, "project", project)
		input = append(append(input[:len(input)-1], `,"email":`...), email...)
		input = append(input, '}')
		var out filterOutput
		var vars map[string]any
		err = pl.call(ctx, hookEmailSend, input, func(b []byte) error {
			var err error
			if out, err = decodeFilter(b); err != nil || out.Action != Rewrite {
				return err
			}
			if len(out.Variables) > 0 && !bytes.Equal(out.Variables, []byte("null")) {
				if err := json.Unmarshal(out.Variables, &vars); err != nil {
					return fmt.Errorf("variables: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			if pl.open && ctx.Err() == nil {
				continue
			}
			return EmailVerdict{}, err
		}
		switch out.Action {
		case Reject:
			return EmailVerdict{Action: Reject, Code: out.Code, Message: out.Message, Plugin: pl.reg.Name}, nil
		case Rewrite:
			if vars != nil {
				msg.Variables = vars
			}
			if out.Tags != nil {
				msg.Tags = out.Tags
			}
			verdict = EmailVerdict{Action: Rewrite, Variables: msg.Variables, Tags: msg.Tags, Plugin: pl.reg.Name}
		}
	}
	return verdict, nil
}

// CaptchaVerify asks the named plugin whether token (from a client at
// remoteIP) is good. ErrNotFound when the project has no such plugin
// serving captcha.verify. A failing plugin answers false with an error
// wrapping ErrPluginFailed (fail-closed, the default), or true and no
// error when the operator set onError: open.
func (h *Host) CaptchaVerify(ctx context.Context, project, plugin, token, remoteIP string) (bool, error) {
	pl := h.find(project, plugin)
	if pl == nil || !pl.hooks[hookCaptchaVerify] {
		return false, fmt.Errorf("%w: %s/%s (captcha.verify)", ErrNotFound, project, plugin)
	}
	input := appendDoc(nil, "project", project, "token", token, "remoteIP", remoteIP)
	var ok bool
	err := pl.call(ctx, hookCaptchaVerify, input, func(b []byte) error {
		var out struct {
			Success *bool `json:"success"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return err
		}
		if out.Success == nil {
			return errors.New("captcha.verify output has no success field")
		}
		ok = *out.Success
		return nil
	})
	if err != nil {
		if pl.open && ctx.Err() == nil {
			return true, nil
		}
		return false, err
	}
	return ok, nil
}

// appendDoc appends a JSON object of string members given as key, value
// pairs.
func appendDoc(dst []byte, kv ...string) []byte {
	dst = append(dst, '{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, kv[i])
		dst = append(dst, ':')
		dst = appendJSONString(dst, kv[i+1])
	}
	return append(dst, '}')
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // escapes <, >, & too; never fails for a string
	return append(dst, b...)
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{'
}
