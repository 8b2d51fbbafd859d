package forms

import "testing"

// TestMails: a notification per notify address (the template with the submission's variables,
// or the default summary), and the auto-reply to the address the submitter gave, none when
// that field is empty.
func TestMails(t *testing.T) {
	form := Form{Slug: "contact", Title: "Contact us",
		Fields:    []FormField{{Name: "name", Type: "text"}, {Name: "email", Type: "email"}},
		Notify:    &Notify{To: []string{"a@example.com", "b@example.com"}, Template: "note"},
		AutoReply: &AutoReply{EmailField: "email", Template: "thanks"}}
	a := Accepted{Project: "demo", Form: form, Submission: Submission{ID: "s1", Data: map[string]any{"name": "Ada", "email": "ada@example.com"}}}
	got := a.mails()
	if len(got) != 3 {
		t.Fatalf("mails() = %d mails, want 3: %+v", len(got), got)
	}
	for i, want := range []struct{ to, tag, template string }{
		{"a@example.com", "form-notification", "note"},
		{"b@example.com", "form-notification", "note"},
		{"ada@example.com", "form-auto-reply", "thanks"},
	} {
		m := got[i]
		if m.To != want.to || m.Tag != want.tag || m.TemplateID != want.template || m.Variables["name"] != "Ada" ||
			m.Variables["submissionId"] != "s1" || m.Metadata["form"] != "contact" || m.Metadata["submission"] != "s1" {
			t.Errorf("mails()[%d] = %+v, want to %s, tag %s, template %s, the submission's variables", i, m, want.to, want.tag, want.template)
		}
	}
	a.Form.Notify.Template = ""
	a.Submission.Data["email"] = ""
	got = a.mails()
	if len(got) != 2 || got[0].Subject != "New submission: Contact us" || got[0].Text == "" || got[0].TemplateID != "" {
		t.Errorf("without a template or a reply address: %+v, want two default summaries and no auto-reply", got)
	}
}
