package host

import (
	"io"
	"sync"
	"time"
)

// logBuffer keeps a plugin's most recent log lines within a byte budget:
// the oldest lines go first.
type logBuffer struct {
	mu    sync.Mutex
	max   int
	size  int
	lines []string
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

// Add appends one line, stamped with the time.
func (b *logBuffer) Add(line string) {
	if len(line) > b.max/4 {
		line = line[:b.max/4] + "…"
	}
	line = time.Now().UTC().Format("2006-01-02T15:04:05.000Z ") + line
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
	b.size += len(line)
	drop := 0
	for b.size > b.max && drop < len(b.lines)-1 {
		b.size -= len(b.lines[drop])
		drop++
	}
	if drop > 0 {
		b.lines = append(b.lines[:0], b.lines[drop:]...)
	}
}

// Lines returns a copy of the buffered lines, oldest first.
func (b *logBuffer) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

// Writer returns an io.Writer (a guest's stdout or stderr) that adds one
// line to the buffer per newline, prefixed with stream.
func (b *logBuffer) Writer(stream string) io.Writer {
	return &lineWriter{buf: b, prefix: stream + ": "}
}

type lineWriter struct {
	buf     *logBuffer
	prefix  string
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := 0
		for i < len(p) && p[i] != '\n' {
			i++
		}
		w.partial = append(w.partial, p[:i]...)
		if i < len(p) || len(w.partial) >= maxLogLine {
			w.buf.Add(w.prefix + string(w.partial))
			w.partial = w.partial[:0]
			if i < len(p) {
				i++
			}
		}
		p = p[i:]
	}
	return n, nil
}
