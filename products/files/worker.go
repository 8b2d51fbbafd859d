package files

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"

	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// Variant builds can run in worker processes: the gateway's own binary started again as
// `gatehouse variant-worker` (Options.VariantWorker), one process per build slot, each
// building one variant at a time. Why not goroutines: the WebP and AVIF encoders are
// WebAssembly run by wazero, and Go cannot preempt a goroutine inside wazero's compiled code,
// so every stop-the-world of the garbage collector waited for the encode running (tens to
// hundreds of milliseconds), stalling every request of every project; and the build's CPU
// competed with the other requests at the same priority. In a worker the gateway's
// collector never waits for an encode, and the worker runs at a lower CPU priority (nice
// workerNice on Linux), so the kernel gives the cores to requests first and to builds when
// they are idle.

// workerNice is the nice value the worker processes run at (Linux): 10 leaves a build about
// a tenth of a core a busy request thread wants, and all of an idle one.
const workerNice = 10

// The worker's pipes: the gateway writes requests to the first extra file (fd 3 in the
// worker) and reads answers from the second (fd 4); stdout and stderr stay the log's.
const (
	workerRequestFD = 3
	workerAnswerFD  = 4
)

// buildRequest is one build sent to a worker.
type buildRequest struct {
	Data      []byte
	Mime      string
	Spec      Spec
	Format    string // "" for JPEG, or PNG with transparency
	MaxPixels int
}

// Kinds of failure a worker answers, so the gateway maps them as an in-process build would.
const (
	failNone = iota
	failTooLarge
	failUnreadable
	failOther
)

// buildAnswer is a worker's answer to one buildRequest.
type buildAnswer struct {
	Out    []byte
	Format string
	Size   image.Point
	Fail   int
	Err    string
}

// ServeVariantWorker is the loop of a `gatehouse variant-worker` process: it reads build
// requests from fd 3 and answers each on fd 4 (encoding with codec.Codecs, whose WebAssembly
// modules it compiles at once, beside the first build), until fd 3 is closed (the gateway
// stopped or dropped the worker). A panic while building answers that build as an unreadable
// original and the worker goes on.
func ServeVariantWorker() error {
	in, out := os.NewFile(workerRequestFD, "requests"), os.NewFile(workerAnswerFD, "answers")
	if in == nil || out == nil {
		return errors.New("files: variant-worker runs under the gateway, which gives it fds 3 and 4")
	}
	defer in.Close()
	defer out.Close()
	go codec.Warm()
	return serveBuilds(in, out, codec.Codecs{})
}

func serveBuilds(in io.Reader, out io.Writer, enc Encoder) error {
	dec, w := gob.NewDecoder(in), gob.NewEncoder(out)
	for {
		var req buildRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("files: reading a build request: %w", err)
		}
		ans := buildIn(&req, enc)
		if err := w.Encode(&ans); err != nil {
			return fmt.Errorf("files: answering a build: %w", err)
		}
		if len(req.Data) > 4<<20 || ans.Size.X*ans.Size.Y > 4<<20 {
			debug.FreeOSMemory() // a large build's pages go back now, not when the next one runs
		}
	}
}

// buildIn makes one variant in this process.
func buildIn(req *buildRequest, enc Encoder) (ans buildAnswer) {
	defer func() {
		if v := recover(); v != nil {
			ans = buildAnswer{Fail: failUnreadable, Err: fmt.Sprint("panic: ", v)}
		}
	}()
	out, format, size, err := makeVariant(req.Data, req.Mime, req.Spec, req.Format, req.MaxPixels, enc)
	switch {
	case err == nil:
		return buildAnswer{Out: out, Format: format, Size: size}
	case errors.Is(err, ErrVariantTooLarge):
		return buildAnswer{Fail: failTooLarge, Err: err.Error()}
	case errors.Is(err, errUnreadable):
		return buildAnswer{Fail: failUnreadable, Err: err.Error()}
	}
	return buildAnswer{Fail: failOther, Err: err.Error()}
}

// workers starts and hands out the worker processes; the build pool's slots bound how many
// are busy, so it keeps at most one per slot. A worker whose pipe fails (it died, or a build
// overran its context and was killed) is dropped and the next build starts a new one.
type workers struct {
	argv []string
	log  *slog.Logger

	mu     sync.Mutex
	idle   []*worker
	all    map[*worker]struct{}
	closed bool
}

type worker struct {
	cmd *exec.Cmd
	req *os.File // the request pipe's write end
	ans *os.File // the answer pipe's read end
	enc *gob.Encoder
	dec *gob.Decoder
	// exited is closed when the process has ended.
	exited chan struct{}
}

func newWorkers(argv []string, log *slog.Logger) *workers {
	return &workers{argv: argv, log: log, all: map[*worker]struct{}{}}
}

var errWorkersClosed = errors.New("files: the variant workers are closed")

// build runs req in a worker. ctx ending kills the worker (a build never outlives it). A
// worker that was idle and fails (it died since its last build) is replaced once.
func (ws *workers) build(ctx context.Context, req *buildRequest) ([]byte, string, image.Point, error) {
	var ans buildAnswer
	for {
		w, fresh, err := ws.take()
		if err != nil {
			return nil, "", image.Point{}, err
		}
		stop := context.AfterFunc(ctx, func() { _ = w.cmd.Process.Kill() })
		err = w.enc.Encode(req)
		if err == nil {
			err = w.dec.Decode(&ans)
		}
		stop()
		if err == nil {
			ws.put(w)
			break
		}
		ws.drop(w)
		if ctx.Err() != nil {
			return nil, "", image.Point{}, fmt.Errorf("files: variant worker: %w", ctx.Err())
		}
		if fresh {
			return nil, "", image.Point{}, fmt.Errorf("files: variant worker: %w", err)
		}
	}
	switch ans.Fail {
	case failNone:
		return ans.Out, ans.Format, ans.Size, nil
	case failTooLarge:
		return nil, "", image.Point{}, ErrVariantTooLarge
	case failUnreadable:
		return nil, "", image.Point{}, fmt.Errorf("%w: %s", errUnreadable, ans.Err)
	}
	return nil, "", image.Point{}, fmt.Errorf("files: variant worker: %s", ans.Err)
}

// take hands out an idle worker, or starts one (fresh).
func (ws *workers) take() (w *worker, fresh bool, err error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return nil, false, errWorkersClosed
	}
	for n := len(ws.idle); n > 0; n-- {
		w := ws.idle[n-1]
		ws.idle = ws.idle[:n-1]
		select {
		case <-w.exited: // it died while idle (killed, out of memory): start another
			delete(ws.all, w)
			w.stop()
		default:
			return w, false, nil
		}
	}
	if w, err = ws.start(); err != nil {
		return nil, false, err
	}
	ws.all[w] = struct{}{}
	return w, true, nil
}

func (ws *workers) put(w *worker) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		w.stop()
		return
	}
	ws.idle = append(ws.idle, w)
}

func (ws *workers) drop(w *worker) {
	ws.mu.Lock()
	delete(ws.all, w)
	ws.mu.Unlock()
	w.stop()
}

// start starts one worker process at the lower priority. Called with ws.mu held.
func (ws *workers) start() (*worker, error) {
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, err
	}
	cmd := exec.Command(ws.argv[0], ws.argv[1:]...)
	cmd.ExtraFiles = []*os.File{reqR, ansW} // fds 3 and 4
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err = startNiced(cmd, workerNice)
	reqR.Close()
	ansW.Close()
	if err != nil {
		reqW.Close()
		ansR.Close()
		return nil, fmt.Errorf("files: starting a variant worker: %w", err)
	}
	w := &worker{cmd: cmd, req: reqW, ans: ansR, enc: gob.NewEncoder(reqW), dec: gob.NewDecoder(ansR), exited: make(chan struct{})}
	go func() { // reaps it whenever it ends
		_ = cmd.Wait()
		close(w.exited)
	}()
	ws.log.Debug("files: variant worker started", "pid", cmd.Process.Pid)
	return w, nil
}

// stop closes the worker's request pipe (it exits at the end of its loop) and kills it in
// case it is stuck in a build.
func (w *worker) stop() {
	w.req.Close()
	w.ans.Close()
	_ = w.cmd.Process.Kill()
}

// Close stops every worker; builds that run on then fail.
func (ws *workers) Close() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = true
	for w := range ws.all {
		w.stop()
	}
	ws.all, ws.idle = map[*worker]struct{}{}, nil
	return nil
}
