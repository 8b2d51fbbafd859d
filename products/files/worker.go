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
	"strconv"
	"sync"

	"github.com/gatehouse-dev/gatehouse/products/files/codec"
)

// Variant builds can run in a worker process: the gateway's own binary started again as
// `gatehouse variant-worker` (Options.VariantWorker), building as many variants at once as
// the build pool has slots. Why not goroutines: the WebP and AVIF encoders are
// WebAssembly run by wazero, and Go cannot preempt a goroutine inside wazero's compiled code,
// so every stop-the-world of the garbage collector waited for the encode running (tens to
// hundreds of milliseconds), stalling every request of every project; and the build's CPU
// competed with the other requests at the same priority. In a worker the gateway's
// collector never waits for an encode, and the worker runs at a lower CPU priority
// (workerNice levels lower on Linux), so the kernel gives the cores to requests first and to
// builds when they are idle.

// workerNice is how many nice levels below the gateway the worker runs (Linux; nice 10 for a
// gateway at 0): a build then gets about a tenth of a core a busy request thread wants, and
// all of an idle one.
const workerNice = 10

// buildRequest is one build sent to a worker.
type buildRequest struct {
	// Key names the original's content (SHA-256 and type): builds of the same key running at
	// once share its decode (sources).
	Key       string
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

// ServeVariantWorker is a `gatehouse variant-worker LANES [KEEP]` process (KEEP: the bytes of
// recent decodes it keeps for the next builds of the same originals, 0 when absent): for each
// of its lanes it reads build requests from one pipe and answers each on the next (fds 3 and
// 4, 5 and 6, ...), until the request pipes are closed (the gateway stopped or dropped it).
// It encodes with codec.Codecs, whose WebAssembly it compiles at once, beside the first
// builds. A panic while building answers that build as an unreadable original and the lane
// goes on.
func ServeVariantWorker(args []string) error {
	lanes := 1
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 || n > 64 {
			return fmt.Errorf("files: variant-worker takes its lane count, not %q", args[0])
		}
		lanes = n
	}
	var keep int64
	if len(args) > 1 {
		n, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("files: variant-worker takes the bytes of decodes it keeps, not %q", args[1])
		}
		keep = n
	}
	// Compiling the encoders' WebAssembly makes most of the garbage it will ever hold: it is
	// collected at every 25% of growth until then, at Go's default 100% after. Over 40 WebP
	// and AVIF builds on two lanes its peak was 102 MB (166 MB at 100% throughout, 110 MB at
	// 25% throughout); a JPEG build of a 640 px photograph took 12.6-12.8 ms, as in the
	// gateway's own process (16.6 ms at 25% throughout: a collection every few builds).
	debug.SetGCPercent(25)
	go func() {
		codec.Warm()
		debug.SetGCPercent(100)
		debug.FreeOSMemory()
	}()
	errs := make(chan error, lanes)
	ss := newSources(keep)
	enc := codec.New(lanes) // an instance of the WebP module kept for each lane
	for i := range lanes {
		in, out := os.NewFile(uintptr(3+2*i), "requests"), os.NewFile(uintptr(4+2*i), "answers")
		if in == nil || out == nil {
			return errors.New("files: variant-worker runs under the gateway, which gives it its pipes")
		}
		go func() {
			defer in.Close()
			defer out.Close()
			errs <- serveBuilds(in, out, ss, enc)
		}()
	}
	var first error
	for range lanes {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func serveBuilds(in io.Reader, out io.Writer, ss *sources, enc Encoder) error {
	dec, w := gob.NewDecoder(in), gob.NewEncoder(out)
	for {
		var req buildRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("files: reading a build request: %w", err)
		}
		ans := buildIn(ss, &req, enc)
		if err := w.Encode(&ans); err != nil {
			return fmt.Errorf("files: answering a build: %w", err)
		}
		if len(req.Data) > 256<<10 || ans.Size.X*ans.Size.Y > 1<<20 {
			// A large original (a compressed quarter megabyte decodes to megapixels) or output:
			// its pages go back now, not when the scavenger gets to them (a few milliseconds
			// of a build of hundreds).
			debug.FreeOSMemory()
		}
	}
}

// buildIn makes one variant in this process.
func buildIn(ss *sources, req *buildRequest, enc Encoder) (ans buildAnswer) {
	defer func() {
		if v := recover(); v != nil {
			ans = buildAnswer{Fail: failUnreadable, Err: fmt.Sprint("panic: ", v)}
		}
	}()
	out, format, size, err := buildShared(ss, req.Key, req.Data, req.Mime, req.Spec, req.Format, req.MaxPixels, enc)
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

// workers runs builds in one worker process with a lane per build slot (a pair of pipes, each
// carrying one build at a time), so the encoders' WebAssembly is compiled once, not once per
// slot. It starts the process at the first build. When a lane's pipe fails (the process
// died, or a build overran its context and the process was killed), the process is stopped
// and the next build starts a new one.
type workers struct {
	argv  []string
	lanes int
	keep  int64 // bytes of recent decodes the process keeps (sources)
	limit int64 // the process's Go memory limit (GOMEMLIMIT): its builds and its base
	log   *slog.Logger

	mu     sync.Mutex
	proc   *workerProc // nil until the first build, and after a failure
	closed bool
}

// workerProc is one worker process and its lanes.
type workerProc struct {
	cmd    *exec.Cmd
	ends   []*os.File    // the gateway's ends of the pipes
	exited chan struct{} // closed when the process has ended
	idle   []*lane       // guarded by workers.mu
}

type lane struct {
	p   *workerProc
	enc *gob.Encoder
	dec *gob.Decoder
}

func newWorkers(argv []string, lanes int, keep, limit int64, log *slog.Logger) *workers {
	return &workers{argv: argv, lanes: max(1, lanes), keep: keep, limit: limit, log: log}
}

var errWorkersClosed = errors.New("files: the variant workers are closed")

// build runs req in the worker. ctx ending kills the worker (a build never outlives it). A
// build whose worker fails and was not started for it (it died since, or with another build)
// is tried once more in a new one.
func (ws *workers) build(ctx context.Context, req *buildRequest) ([]byte, string, image.Point, error) {
	var ans buildAnswer
	for attempt := 0; ; attempt++ {
		l, fresh, err := ws.take()
		if err != nil {
			return nil, "", image.Point{}, err
		}
		stop := context.AfterFunc(ctx, l.p.stop)
		err = l.enc.Encode(req)
		if err == nil {
			err = l.dec.Decode(&ans)
		}
		stop()
		if err == nil {
			ws.put(l)
			break
		}
		ws.fail(l.p)
		if ctx.Err() != nil {
			return nil, "", image.Point{}, fmt.Errorf("files: variant worker: %w", ctx.Err())
		}
		if fresh || attempt > 0 {
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

// take hands out an idle lane, starting the process when none runs (fresh).
func (ws *workers) take() (l *lane, fresh bool, err error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return nil, false, errWorkersClosed
	}
	if p := ws.proc; p != nil {
		select {
		case <-p.exited: // it died while idle (killed, out of memory): start another
			ws.proc = nil
			p.stop()
		default:
		}
	}
	if ws.proc == nil {
		if ws.proc, err = ws.start(); err != nil {
			return nil, false, err
		}
		fresh = true
	}
	p := ws.proc
	n := len(p.idle)
	if n == 0 { // the pool runs at most lanes builds at once
		return nil, false, errors.New("files: no free variant worker lane")
	}
	l = p.idle[n-1]
	p.idle = p.idle[:n-1]
	return l, fresh, nil
}

func (ws *workers) put(l *lane) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.proc == l.p {
		l.p.idle = append(l.p.idle, l)
	}
}

// fail stops a process whose lane failed; the next build starts another.
func (ws *workers) fail(p *workerProc) {
	ws.mu.Lock()
	if ws.proc == p {
		ws.proc = nil
	}
	ws.mu.Unlock()
	p.stop()
}

// start starts the worker process at the lower priority. Called with ws.mu held.
func (ws *workers) start() (*workerProc, error) {
	p := &workerProc{exited: make(chan struct{})}
	var theirs []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for range ws.lanes {
		reqR, reqW, err := os.Pipe()
		if err != nil {
			closeAll(theirs)
			closeAll(p.ends)
			return nil, err
		}
		ansR, ansW, err := os.Pipe()
		if err != nil {
			closeAll(append(theirs, reqR))
			closeAll(append(p.ends, reqW))
			return nil, err
		}
		theirs = append(theirs, reqR, ansW) // fds 3 and 4, 5 and 6, ...
		p.ends = append(p.ends, reqW, ansR)
		p.idle = append(p.idle, &lane{p: p, enc: gob.NewEncoder(reqW), dec: gob.NewDecoder(ansR)})
	}
	argv := append(append([]string{}, ws.argv...), strconv.Itoa(ws.lanes), strconv.FormatInt(ws.keep, 10))
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.ExtraFiles = theirs
	// Its collector works harder as it nears its bound instead of letting garbage grow to
	// twice what its builds hold (the last GOMEMLIMIT in the environment wins).
	p.cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.FormatInt(ws.limit, 10))
	p.cmd.Stdout, p.cmd.Stderr = os.Stderr, os.Stderr
	err := startNiced(p.cmd, workerNice)
	closeAll(theirs)
	if err != nil {
		closeAll(p.ends)
		return nil, fmt.Errorf("files: starting the variant worker: %w", err)
	}
	go func() { // reaps it whenever it ends
		_ = p.cmd.Wait()
		close(p.exited)
	}()
	ws.log.Debug("files: variant worker started", "pid", p.cmd.Process.Pid, "lanes", ws.lanes)
	return p, nil
}

// stop closes the process's pipes (it exits at the end of its loops) and kills it in case it
// is in a build.
func (p *workerProc) stop() {
	for _, f := range p.ends {
		f.Close()
	}
	_ = p.cmd.Process.Kill()
}

// Close stops the worker; builds that run on then fail.
func (ws *workers) Close() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.closed = true
	if ws.proc != nil {
		ws.proc.stop()
		ws.proc = nil
	}
	return nil
}
