package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/admin"
)

// GET /admin/v1/projects/{project}/overview on the assembled gateway counts what is stored:
// records per collection, submissions (today's in the daily figures), emails by status, assets
// and plugin calls, for the project asked and nothing of another org's.
func TestOverviewCountsStoredData(t *testing.T) {
	t.Parallel()
	g := startGateway(t, scopeTenants)
	for _, id := range []string{"a-1", "a-2", "a-3"} {
		g.admin(t, "PUT", "/projects/acme-site/collections/posts/records/"+id, `{"data":{"title":"`+id+`"}}`)
	}
	for range 2 {
		g.public(t, "POST", "/forms/forms/contact/submit", "pk_live_acme_scope_web", `{"email":"a@b.test"}`)
	}
	g.public(t, "POST", "/email/notifications/send", "sk_live_acme_scope_server", `{"to":{"email":"x@acme.test"},"subject":"hi","bodyText":"hello"}`)

	var ov struct {
		Project string
		Days    []string
		Records struct {
			Collections []struct {
				Name    string
				Records int
			}
		}
		Forms struct {
			Submissions      int
			SubmissionsByDay map[string]int
		}
		Email struct {
			Messages      int
			ByStatus      map[string]int
			MessagesByDay map[string]int
		}
		Files   struct{ Assets int }
		Plugins struct{ Calls int }
	}
	if err := json.Unmarshal([]byte(g.admin(t, "GET", "/projects/acme-site/overview", "")), &ov); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if len(ov.Days) != admin.OverviewDays || ov.Days[len(ov.Days)-1] != today && ov.Days[len(ov.Days)-1] != time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly) {
		t.Errorf("days = %v; want %d days ending today", ov.Days, admin.OverviewDays)
	}
	if len(ov.Records.Collections) != 1 || ov.Records.Collections[0].Name != "posts" || ov.Records.Collections[0].Records != 3 {
		t.Errorf("records = %+v; want posts: 3", ov.Records)
	}
	if ov.Forms.Submissions != 2 || sum(ov.Forms.SubmissionsByDay) != 2 {
		t.Errorf("forms = %+v; want 2 submissions, both in the last days", ov.Forms)
	}
	if ov.Email.Messages != 1 || sum(ov.Email.ByStatus) != 1 || sum(ov.Email.MessagesByDay) != 1 {
		t.Errorf("email = %+v; want 1 message", ov.Email)
	}
	if ov.Files.Assets != 0 || ov.Plugins.Calls != 0 {
		t.Errorf("files %+v, plugins %+v; want nothing", ov.Files, ov.Plugins)
	}
	// globex's one record is globex's: not in acme's overview, counted in globex's.
	out := g.admin(t, "GET", "/projects/globex-site/overview", "")
	if !strings.Contains(out, `"records":1`) {
		t.Errorf("globex overview = %s; want its one record", out)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
