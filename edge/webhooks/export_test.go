package webhooks

import "context"

// ClaimForTest runs one scan of the queue and claims up to n due deliveries as the worker does,
// without attempting them: a worker that claims and then dies. It returns how many it claimed.
func ClaimForTest(w *Worker, n int) (int, error) {
	cs, err := w.next(context.Background(), n)
	return len(cs), err
}

// LoopEnded is closed once w's queue loop ended (Stop was called): w claims nothing more.
func LoopEnded(w *Worker) <-chan struct{} { return w.looped }
