package forms_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// GET /admin/v1/projects/{project}/forms lists every definition of the project (drafts and
// private forms included) in slug order, never the project's captcha secret.
func TestAdminFormsList(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.Admin("GET", "/projects/demo/forms", nil)
	if r.Status != 200 {
		t.Fatalf("forms = %d %s", r.Status, r.Body)
	}
	var b struct {
		Items []struct {
			Slug      string `json:"slug"`
			Title     string `json:"title"`
			Published bool   `json:"published"`
			Fields    []struct {
				Name string `json:"name"`
			} `json:"fields"`
		} `json:"items"`
		Pagination struct {
			NextCursor *string `json:"nextCursor"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	var slugs []string
	for _, f := range b.Items {
		slugs = append(slugs, f.Slug)
	}
	if want := []string{"contact", "draft", "gallery", "guarded", "internal", "other"}; !reflect.DeepEqual(slugs, want) || b.Pagination.NextCursor != nil {
		t.Errorf("slugs = %v, want %v (one page)", slugs, want)
	}
	if b.Items[0].Title != "Contact us" || len(b.Items[0].Fields) != 7 || !b.Items[0].Published || b.Items[1].Published {
		t.Errorf("definitions = %s", r.Body)
	}
	r = e.Admin("GET", "/projects/ts/forms", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"slug":"guarded"`) || strings.Contains(string(r.Body), "ts-secret") || strings.Contains(string(r.Body), "ts-site") {
		t.Errorf("forms of a project with captcha keys = %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/projects/nope/forms", nil); r.Status != 200 || string(r.Body) != `{"items":[],"pagination":{"nextCursor":null}}` {
		t.Errorf("forms of a project without forms = %d %s", r.Status, r.Body)
	}
}
