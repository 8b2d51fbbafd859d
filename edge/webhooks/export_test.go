package webhooks

import "context"

// ClaimForTest runs one scan of the queue and claims up to n due deliveries as the worker does,
// without attempting them: a worker that claims and then dies. It returns how many it claimed.
func ClaimForTest(w *Worker, n int) (int, error) {
	cs, err := w.next(context.Background(), n)
	return len(cs), err
}
