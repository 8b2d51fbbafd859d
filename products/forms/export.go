package forms

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// csvPage is how many submissions one read transaction of an export holds.
const csvPage = 500

// CSVHeader returns the header row of a form's CSV export: id, createdAt, ip, userAgent, then
// one column per field of the form's definition (FORM_NOT_FOUND when there is none).
func (s *Service) CSVHeader(ctx context.Context, project, slug string) ([]string, error) {
	var f Form
	if err := getJSON(ctx, s.o.DB, defKey(project, slug), &f); errors.Is(err, errNoValue) {
		return nil, ErrFormNotFound
	} else if err != nil {
		return nil, err
	}
	head := []string{"id", "createdAt", "ip", "userAgent"}
	for _, fd := range f.Fields {
		head = append(head, fd.Name)
	}
	return head, nil
}

// WriteCSV writes a form's whole inbox, newest first, as RFC 4180 CSV (encoding/csv, CRLF line
// ends) under head (CSVHeader). A file field's cell holds its files' admin download links, one
// per line; other values are their text (strings as sent, the rest as JSON). Cells a
// spreadsheet would run as a formula (starting with = + - @ or a tab or CR) get a leading '.
func (s *Service) WriteCSV(ctx context.Context, project, slug string, head []string, w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(head); err != nil {
		return err
	}
	after := ""
	for {
		page, err := s.Inbox(ctx, project, slug, after, csvPage)
		if err != nil {
			return err
		}
		for _, sub := range page.Items {
			if err := cw.Write(csvRow(head, sub)); err != nil {
				return err
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return err
		}
		if page.Next == "" {
			return nil
		}
		after = page.Next
	}
}

func csvRow(head []string, sub Submission) []string {
	row := []string{sub.ID, sub.CreatedAt, sub.IP, defuse(sub.UserAgent)}
	files := map[string][]string{}
	for _, f := range sub.Files {
		files[f.Field] = append(files[f.Field], f.URL)
	}
	for _, name := range head[4:] {
		if links, ok := files[name]; ok {
			row = append(row, strings.Join(links, "\n"))
			continue
		}
		row = append(row, cell(sub.Data[name]))
	}
	return row
}

// cell renders one value of a submission's data.
func cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return defuse(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = cell(e)
		}
		return defuse(strings.Join(parts, ", "))
	default:
		raw, _ := json.Marshal(x)
		return string(raw)
	}
}

// defuse keeps a spreadsheet from running a submitted value as a formula (CSV injection).
func defuse(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// DeleteSubmission removes a submission and its files' bytes (SUBMISSION_NOT_FOUND when there
// is none). The bytes go first: a failure leaves the submission listed, so the delete can be
// retried, and never a submission whose files are half gone without a trace.
func (s *Service) DeleteSubmission(ctx context.Context, project, slug, id string) error {
	sub, err := s.Get(ctx, project, slug, id)
	if err != nil {
		return err
	}
	for _, f := range sub.Files {
		if err := s.o.Blobs.Delete(ctx, f.Key); err != nil && !errors.Is(err, blob.ErrNotFound) {
			return err
		}
	}
	return s.o.DB.Update(ctx, func(tx *store.Txn) error {
		if ok, err := tx.Has(subKey(project, slug, id)); err != nil || !ok {
			if err == nil {
				err = ErrSubmissionNotFound
			}
			return err
		}
		return tx.Delete(subKey(project, slug, id))
	})
}
