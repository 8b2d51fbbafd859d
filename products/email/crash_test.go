package email_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/edge/store"
	"github.com/gatehouse-dev/gatehouse/edge/tenancy"
	"github.com/gatehouse-dev/gatehouse/products/email"
	"github.com/gatehouse-dev/gatehouse/products/email/smtptest"
)

const (
	crashMessages    = 500
	crashConcurrency = 4
)

// gateway is the email product over a data folder, without HTTP: what the crash test runs in
// the child process and again, after the kill, in the test.
type gateway struct {
	db  *store.DB
	svc *email.Service
	w   *email.Worker
}

func openGateway(t testing.TB, dir, smtpAddr string) *gateway {
	db, err := store.Open(store.Options{Dir: dir, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := email.NewService(email.Options{DB: db, Tenancy: ten})
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(smtpAddr, ":")
	var p int
	fmt.Sscan(port, &p)
	tr, err := email.NewSMTP(email.SMTPOptions{Host: host, Port: p, TLS: "none", HELO: "gatehouse.test"})
	if err != nil {
		t.Fatal(err)
	}
	w := svc.NewWorker(email.WorkerOptions{Transport: tr, Concurrency: crashConcurrency,
		BaseBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &gateway{db: db, svc: svc, w: w}
}

func (g *gateway) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = g.w.Stop(ctx)
	_ = g.svc.Close()
	_ = g.db.Close()
}

// TestCrashChild is the child process of TestCrashRedelivery: it queues the messages, prints
// "ACK <id>" after each durable acknowledgement, and delivers until it is killed.
func TestCrashChild(t *testing.T) {
	dir, addr := os.Getenv("EMAIL_CRASH_DIR"), os.Getenv("EMAIL_CRASH_SMTP")
	if dir == "" {
		t.Skip("run by TestCrashRedelivery")
	}
	g := openGateway(t, dir, addr)
	var wg sync.WaitGroup
	next := make(chan int)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range next {
				rc, err := g.svc.Send(context.Background(), email.Caller{Org: "acme", Project: "demo"}, "",
					email.SendRequest{To: &email.Address{Email: fmt.Sprintf("r%d@example.com", n)}, TemplateID: "plain",
						Variables: map[string]any{"name": fmt.Sprint(n)}})
				if err != nil {
					fmt.Println("ERR", err)
					continue
				}
				fmt.Println("ACK", rc.ID)
			}
		}()
	}
	for n := 0; n < crashMessages; n++ {
		next <- n
	}
	close(next)
	wg.Wait()
	fmt.Println("ALLACKED")
	select {} // deliver until killed
}

func TestCrashRedelivery(t *testing.T) {
	if os.Getenv("EMAIL_CRASH_DIR") != "" {
		t.Skip("child")
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	srv := smtptest.Start(t, nil)
	srv.SetDelay(10 * time.Millisecond)
	// Tenants first, in this process.
	db, err := store.Open(store.Options{Dir: dir, SyncWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := tenancy.Parse([]byte(tenants))
	if err != nil {
		t.Fatal(err)
	}
	ten, err := tenancy.NewService(tenancy.Options{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := email.NewService(email.Options{DB: db, Tenancy: ten})
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.Add(svc); err != nil {
		t.Fatal(err)
	}
	if _, err := ten.Apply(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	_ = svc.Close()
	_ = db.Close()

	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EMAIL_CRASH_DIR="+dir, "EMAIL_CRASH_SMTP="+srv.Addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	all := make(chan struct{})
	go func() {
		defer close(all)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if id, ok := strings.CutPrefix(line, "ACK "); ok {
				acked[id] = true
			}
			if line == "ALLACKED" {
				return
			}
			if strings.HasPrefix(line, "ERR") {
				t.Errorf("child: %s", line)
			}
		}
	}()
	select {
	case <-all:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("child did not acknowledge every send in 60 s")
	}
	// Kill while delivering: after some, well before all, are accepted.
	deadline := time.Now().Add(30 * time.Second)
	for srv.Len() < crashMessages/5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	atKill := srv.Len()
	if len(acked) != crashMessages {
		t.Fatalf("child acknowledged %d sends, want %d", len(acked), crashMessages)
	}
	if atKill >= crashMessages {
		t.Fatalf("all %d messages were delivered before the kill; the test proves nothing", atKill)
	}

	// Restart: the worker requeues the leases and delivers the rest.
	g := openGateway(t, dir, srv.Addr)
	defer g.close()
	deadline = time.Now().Add(60 * time.Second)
	for {
		pending := 0
		for id := range acked {
			m, err := g.svc.Get(context.Background(), id)
			if err != nil {
				t.Fatalf("acknowledged message %s lost: %v", id, err)
			}
			if m.Status != email.StatusDelivered {
				pending++
			}
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d acknowledged messages not delivered 60 s after the restart", pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	received := map[string]int{}
	messageIDs := map[string]string{}
	for _, m := range srv.Messages() {
		h := m.Header()
		id := h.Get("X-Gatehouse-Message-Id")
		received[id]++
		// Every attempt of a message, before and after the kill, has the same Message-ID.
		if want := "<" + strings.TrimPrefix(id, "msg_") + "@acme.test>"; h.Get("Message-Id") != want {
			t.Errorf("message %s received with Message-ID %q, want %q", id, h.Get("Message-Id"), want)
		}
		if prev, ok := messageIDs[id]; ok && prev != h.Get("Message-Id") {
			t.Errorf("message %s redelivered with Message-ID %q, first %q", id, h.Get("Message-Id"), prev)
		}
		messageIDs[id] = h.Get("Message-Id")
	}
	dups := 0
	for id := range acked {
		switch n := received[id]; {
		case n == 0:
			t.Errorf("message %s is delivered but the server never received it", id)
		case n > 1:
			dups += n - 1
		}
	}
	for id := range received {
		if !acked[id] {
			t.Errorf("server received %s, which was never acknowledged", id)
		}
	}
	t.Logf("crash test: %d acknowledged, %d received before SIGKILL, %d duplicates after restart (at most %d in flight)", len(acked), atKill, dups, crashConcurrency)
	if dups > crashConcurrency {
		t.Errorf("%d duplicate deliveries, want at most %d (the messages in flight at the kill)", dups, crashConcurrency)
	}
}
