package forms

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
	"github.com/gatehouse-dev/gatehouse/edge/blob"
	"github.com/gatehouse-dev/gatehouse/edge/store"
)

// Page is one page of the inbox.
type Page struct {
	Items []Submission
	// Next is the last id of the page when more follow, "" on the last page.
	Next string
}

// Inbox lists a form's submissions newest first, limit per page, after the id after (the
// cursor payload; "" for the first page). A form unknown to tenancy is 404 FORM_NOT_FOUND,
// whether published or not (the dashboard sees drafts and private forms too).
func (s *Service) Inbox(ctx context.Context, project, slug, after string, limit int) (Page, error) {
	var f Form
	if err := getJSON(ctx, s.o.DB, defKey(project, slug), &f); errors.Is(err, errNoValue) {
		return Page{}, ErrFormNotFound
	} else if err != nil {
		return Page{}, err
	}
	prefix := subPrefix(project, slug)
	opts := store.IterOptions{Prefix: prefix, Reverse: true}
	var startKey []byte
	if after != "" {
		startKey = subKey(project, slug, after)
		opts.Start = startKey
	}
	var page Page
	err := s.o.DB.View(ctx, func(tx *store.Txn) error {
		return tx.Iterate(opts, func(k, v []byte) (bool, error) {
			if startKey != nil && bytes.Equal(k, startKey) {
				return true, nil
			}
			if len(page.Items) == limit {
				page.Next = page.Items[len(page.Items)-1].ID
				return false, nil
			}
			var sub Submission
			if err := json.Unmarshal(v, &sub); err != nil {
				return false, fmt.Errorf("forms: decode submission %s: %w", k, err)
			}
			for i := range sub.Files {
				sub.Files[i].URL = s.fileURL(project, slug, sub.ID, i)
			}
			if sub.Files == nil {
				sub.Files = []FileRef{}
			}
			page.Items = append(page.Items, sub)
			return true, nil
		})
	})
	return page, err
}

func (s *Service) fileURL(project, slug, id string, n int) string {
	return s.o.AdminBase + "/projects/" + project + "/forms/" + slug + "/submissions/" + id + "/files/" + strconv.Itoa(n)
}

// Get returns one stored submission.
func (s *Service) Get(ctx context.Context, project, slug, id string) (Submission, error) {
	var sub Submission
	err := s.o.DB.View(ctx, func(tx *store.Txn) error {
		raw, err := tx.Get(subKey(project, slug, id))
		if errors.Is(err, store.ErrNotFound) {
			return ErrSubmissionNotFound
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &sub)
	})
	return sub, err
}

// OpenFile opens the n-th file of a submission for download.
func (s *Service) OpenFile(ctx context.Context, project, slug, id string, n int) (FileRef, blob.Object, error) {
	sub, err := s.Get(ctx, project, slug, id)
	if err != nil {
		return FileRef{}, nil, err
	}
	if n < 0 || n >= len(sub.Files) {
		return FileRef{}, nil, apierr.New(404, CodeSubmissionFileMissing, "the submission has no such file", nil)
	}
	f := sub.Files[n]
	obj, err := s.o.Blobs.Open(ctx, f.Key)
	if errors.Is(err, blob.ErrNotFound) {
		return FileRef{}, nil, apierr.New(404, CodeSubmissionFileMissing, "the file's bytes are gone", err)
	}
	return f, obj, err
}
