package email_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

// TestRedeliverySameMessageID: the SMTP server keeps the first attempt but its answer is lost
// (451 after DATA), so the message is delivered again: at least once, and both copies carry
// the same Message-ID, derived from the message id, so the receiver can drop the duplicate.
func TestRedeliverySameMessageID(t *testing.T) {
	t.Parallel()
	e := start(t, envOptions{})
	e.smtp.SetLostReply(func(rcpt string, n int) smtptest.Reply {
		if rcpt == "twice@example.com" && n == 1 {
			return smtptest.Reply{Code: 451, Message: "answer lost"}
		}
		return smtptest.Reply{}
	})
	id := e.send(t, welcome("twice@example.com"))
	m := e.waitStatus(t, id, email.StatusDelivered)
	var ids []string
	for _, r := range e.smtp.Messages() {
		if r.Header().Get("X-Gatehouse-Message-Id") == id {
			ids = append(ids, r.Header().Get("Message-Id"))
		}
	}
	want := "<" + strings.TrimPrefix(id, "msg_") + "@acme.test>"
	if len(ids) != 2 || ids[0] != want || ids[1] != want {
		t.Errorf("the server holds %d copies with Message-IDs %q, want 2 copies with %q", len(ids), ids, want)
	}
	if m.Attempts != 2 || email.MessageID(m) != strings.Trim(want, "<>") {
		t.Errorf("attempts %d, MessageID %q; want 2 and %s", m.Attempts, email.MessageID(m), want)
	}
}

// TestOutboxRecoverRemovesTemporaryFiles: the temporary files a crash left between create and
// rename are removed when the worker starts; delivered messages and other files stay.
func TestOutboxRecoverRemovesTemporaryFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{".tmp-123", ".tmp-456", "msg_01.eml", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := start(t, envOptions{outbox: true})
	w := e.svc.NewWorker(email.WorkerOptions{Transport: &email.Outbox{Dir: dir}, Concurrency: 1, PollInterval: time.Hour})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if got := len(left) + len(hidden); got != 2 || filepath.Base(left[0]) != "msg_01.eml" || filepath.Base(left[1]) != "notes.txt" {
		t.Errorf("outbox after start: %v %v, want msg_01.eml and notes.txt", left, hidden)
	}
	// An outbox folder that does not exist yet is no error.
	if err := (&email.Outbox{Dir: filepath.Join(dir, "none")}).Recover(); err != nil {
		t.Errorf("Recover on a missing folder: %v", err)
	}
}
