package email

import "context"

// ClaimForTest runs one claim of up to n messages as the dispatcher does, without handing them
// to a delivery: a worker that claims and then dies. It returns how many it claimed.
func ClaimForTest(w *Worker, n int) (int, error) {
	cs, _, err := w.claim(n)
	return len(cs), err
}

// RenewForTest renews the worker's leases now, as its renewer does every LeaseTTL/3.
func RenewForTest(w *Worker) error { return w.renew() }

// SendClaimedForTest sends the messages the worker claimed through its transport without
// recording the outcomes: a node killed after the receiver took a message, before its commit.
func SendClaimedForTest(w *Worker) {
	sess := w.o.Transport.Session()
	defer sess.Close()
	for _, c := range w.inflight {
		sess.Deliver(context.Background(), c.m)
	}
}

// Stopping reports whether Stop was called on w (it claims nothing more).
func Stopping(w *Worker) bool { return w.stopping.Load() }
