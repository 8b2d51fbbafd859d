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
	lines []LogLine
}

// LogLine is one line of a plugin's log: what the guest printed on stdout
// or stderr, a log host call ("INFO message"), or a note of the host's
// ("host: call failed ...").
type LogLine struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

func newLogBuffer(max int) *logBuffer { return &logBuffer{max: max} }

// Add appends one line, stamped with the time.
func (b *logBuffer) Add(line string) {
	if len(line) > b.max/4 {
		line = line[:b.max/4] + "…"
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, LogLine{Time: time.Now().UTC(), Text: line})
	b.size += len(line)
	drop := 0
	for b.size > b.max && drop < len(b.lines)-1 {
		b.size -= len(b.lines[drop].Text)
		drop++
	}
	if drop > 0 {
		b.lines = append(b.lines[:0], b.lines[drop:]...)
	}
}

// Lines returns the buffered lines as text stamped with their time, oldest
// first.
func (b *logBuffer) Lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, len(b.lines))
	for i, l := range b.lines {
		out[i] = l.Time.Format("2006-01-02T15:04:05.000Z ") + l.Text
	}
	return out
}

// Newest returns up to n of the most recent lines, newest first.
func (b *logBuffer) Newest(n int) []LogLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, len(b.lines))
	out := make([]LogLine, n)
	for i := range n {
		out[i] = b.lines[len(b.lines)-1-i]
	}
	return out
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
