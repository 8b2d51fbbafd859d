package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/gatehouse-dev/gatehouse/edge/apiclient"
	"github.com/gatehouse-dev/gatehouse/products/records"
)

// The import sends its file in requests of whole lines, sized so that each one is answered
// in about importTarget: far inside the server's read_timeout (30 s by default), whatever
// the link and the disk, and a small loss when one has to be sent again.
const (
	importFirstLines = 1000            // lines of the first request
	importMinLines   = 100             // the smallest request, on a slow link or server
	importMaxLines   = 10000           // default of --batch
	importMaxBytes   = 4 << 20         // bytes of one request, well under edge.MaxBodyBytes
	importTarget     = 2 * time.Second // wanted duration of one request
	importShowErrors = 100             // failed lines printed; the rest are counted
)

const recordsSynopsis = `  gatehouse records import FILE --project P --collection C [--skip N] [--batch N] [--server URL] [--token T]

Imports an NDJSON file (one record a line: {"id":..., "published":..., "data":{...},
"createdAt":...}; FILE - reads standard input) of any size into a collection of a running
server. The file is sent in requests of whole lines (at most --batch lines or 4 MB each),
never read whole into memory. On a terminal a progress bar shows the lines done, lines/s
and the time left; otherwise one summary line is printed at the end.

A line whose record has an id replaces the stored record with that id: running the same
command again after an interruption, a failure or a fix of bad lines stores every line once
(lines without an id get a new generated id each time: give ids to make an import
repeatable). Lines that are not valid JSON or not valid records are skipped and reported as
FILE:LINE: problem on standard error; the other lines are stored.

Exit status 0 when every line is stored; 1 when a line was refused, or a request failed
(the message names the first line not confirmed and how to continue).`

func recordsCmd(ctx context.Context, args []string, stdout, stderr io.Writer, env []string) error {
	fs := flag.NewFlagSet("records import", flag.ContinueOnError)
	project := fs.String("project", "", "project id")
	collection := fs.String("collection", "", "collection name")
	skip := fs.Int("skip", 0, "lines at the start of FILE not to send (already stored)")
	batch := fs.Int("batch", importMaxLines, "most lines in one request")
	client := clientFlags(fs, env)
	setUsage(fs, stdout, recordsSynopsis, clientEnv)
	if len(args) == 0 || args[0] != "import" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fs.Usage()
			return flag.ErrHelp
		}
		return fmt.Errorf("usage: gatehouse records import FILE --project P --collection C")
	}
	args = args[1:]
	var file string
	if len(args) > 0 && (args[0] == "-" || !strings.HasPrefix(args[0], "-")) {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	if file == "" || *project == "" || *collection == "" {
		return fmt.Errorf("usage: gatehouse records import FILE --project P --collection C")
	}
	if *skip < 0 || *batch < 1 {
		return fmt.Errorf("--skip must not be negative and --batch must be positive")
	}
	in, size := io.Reader(os.Stdin), int64(-1)
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		in = f
	}
	ac, err := client()
	if err != nil {
		return err
	}
	imp := &importer{
		client:     ac,
		project:    *project,
		collection: *collection,
		file:       file,
		maxLines:   *batch,
		stderr:     stderr,
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		imp.bar = newImportBar(size, stderr)
	}
	err = imp.run(ctx, in, *skip)
	fmt.Fprintln(stdout, imp.summary(*project, *collection))
	return err
}

// importer sends one file's lines to the import route, batch by batch, and keeps the count.
type importer struct {
	client              *adminClient
	project, collection string
	file                string
	maxLines            int
	stderr              io.Writer
	bar                 *progressbar.ProgressBar // nil when standard error is not a terminal

	start                             time.Time
	lines                             int // lines read (sent or skipped)
	stored, created, updated, skipped int
	failed, shown                     int
}

func (m *importer) run(ctx context.Context, in io.Reader, skip int) error {
	m.start = time.Now()
	src := newLineBatcher(in, records.MaxImportLine)
	if skip > 0 {
		n, err := src.skip(skip)
		m.lines, m.skipped = n, n
		m.progress(src.read)
		if err != nil {
			return fmt.Errorf("records import: reading %s: %w", m.file, err)
		}
	}
	var buf bytes.Buffer
	want := min(importFirstLines, m.maxLines)
	for {
		b, err := src.next(&buf, want, importMaxBytes)
		if err != nil {
			return fmt.Errorf("records import: reading %s after line %d: %w", m.file, m.lines, err)
		}
		if b.lines == 0 {
			m.finishBar()
			if m.failed > 0 {
				return fmt.Errorf("records import: %d line(s) of %s not stored (listed above); fix them and run the same command again: stored lines are updated, not duplicated", m.failed, m.file)
			}
			return nil
		}
		for _, l := range b.tooLong {
			m.fail(l, fmt.Sprintf("longer than %d bytes", records.MaxImportLine))
		}
		t0 := time.Now()
		rep, err := m.send(ctx, buf.Bytes())
		if err != nil {
			m.finishBar()
			return m.sendFailed(ctx, b, err)
		}
		m.stored += rep.Imported
		m.created += rep.Created
		m.updated += rep.Updated
		for _, e := range deref(rep.Errors) {
			m.fail(b.first+e.Line-1, e.Problem)
		}
		// The route lists at most 100 bad lines per request; the rest are counted.
		m.failed += rep.Failed - len(deref(rep.Errors))
		m.lines = b.first + b.lines - 1
		m.progress(src.read)
		want = nextBatch(b.lines, time.Since(t0), m.maxLines)
	}
}

// send posts one batch of NDJSON lines to the import route.
func (m *importer) send(ctx context.Context, lines []byte) (*apiclient.ImportReport, error) {
	res, err := m.client.api.ImportRecordsWithBodyWithResponse(ctx, m.project, m.collection, "application/x-ndjson", bytes.NewReader(lines))
	if err != nil {
		return nil, err
	}
	return answered(res.HTTPResponse, res.Body, res.JSON200)
}

// nextBatch sizes the next request from how long the last one took: about importTarget,
// growing at most twofold, between importMinLines and max.
func nextBatch(lines int, took time.Duration, most int) int {
	n := lines * 2
	if took > 0 {
		n = min(n, int(float64(lines)*float64(importTarget)/float64(took)))
	}
	return min(most, max(n, importMinLines))
}

// sendFailed explains a request that was not answered with a report: which lines are
// stored for sure and how to go on.
func (m *importer) sendFailed(ctx context.Context, b batch, err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusRequestTimeout && ae.Status != http.StatusTooManyRequests {
		// The server refuses the import itself (no such collection, a bad token): sending
		// again would not help.
		return fmt.Errorf("records import: the server refused lines %d-%d of %s: %d %s %s", b.first, b.first+b.lines-1, m.file, ae.Status, ae.Code, ae.Message)
	}
	what := err.Error()
	if ctx.Err() != nil {
		what = "interrupted"
	}
	done := b.first - 1
	stored := "no line is confirmed stored"
	next := "run the same command again: stored lines are updated, not duplicated"
	if done > 0 {
		stored = fmt.Sprintf("lines 1-%d are stored", done)
		next += fmt.Sprintf(" (or add --skip %d to start after them)", done)
	}
	return fmt.Errorf("records import: lines %d-%d of %s not confirmed (%s); %s; %s", b.first, b.first+b.lines-1, m.file, what, stored, next)
}

// fail reports one line that was not stored.
func (m *importer) fail(line int, problem string) {
	m.failed++
	if m.shown++; m.shown <= importShowErrors {
		m.printAbove(fmt.Sprintf("%s:%d: %s", m.file, line, problem))
	} else if m.shown == importShowErrors+1 {
		m.printAbove(fmt.Sprintf("%s: more lines not stored; only the first %d are listed", m.file, importShowErrors))
	}
}

// printAbove writes a line to standard error, above the progress bar when there is one.
func (m *importer) printAbove(s string) {
	if m.bar != nil {
		_ = m.bar.Clear()
	}
	fmt.Fprintln(m.stderr, s)
}

// progress moves the bar (when shown) to read bytes of the file and lines.
func (m *importer) progress(read int64) {
	if m.bar == nil {
		return
	}
	m.bar.Describe(fmt.Sprintf("%d lines, %.0f lines/s", m.lines, m.rate()))
	_ = m.bar.Set64(read)
}

func (m *importer) finishBar() {
	if m.bar != nil {
		_ = m.bar.Finish()
		fmt.Fprintln(m.stderr)
	}
}

// rate is the lines sent per second so far (skipped lines not counted).
func (m *importer) rate() float64 {
	d := time.Since(m.start).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(m.lines-m.skipped) / d
}

// summary is the one line printed at the end, whatever happened.
func (m *importer) summary(project, collection string) string {
	s := fmt.Sprintf("records import %s into %s/%s: %d lines read, %d stored (%d created, %d updated), %d not stored",
		m.file, project, collection, m.lines, m.stored, m.created, m.updated, m.failed)
	if m.skipped > 0 {
		s += fmt.Sprintf(", %d skipped (--skip)", m.skipped)
	}
	return s + fmt.Sprintf(", in %s (%.0f lines/s)", time.Since(m.start).Round(100*time.Millisecond), m.rate())
}

// newImportBar is the terminal progress bar: the file's bytes (for the percentage and the
// time left) with the lines and lines/s as its description; a spinner for standard input.
func newImportBar(size int64, w io.Writer) *progressbar.ProgressBar {
	return progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
	)
}

// batch is one request's lines: the file's line numbers first..first+lines-1.
type batch struct {
	first, lines int
	// tooLong are the lines over the limit, sent as empty lines (which the server skips) so
	// that the server's line numbers still count from first.
	tooLong []int
}

// lineBatcher cuts an NDJSON stream into batches of whole lines without holding more than
// one batch: a line longer than maxLine is not kept but reported by its number.
type lineBatcher struct {
	r       *bufio.Reader
	maxLine int
	line    int   // lines read so far
	read    int64 // bytes read so far
}

func newLineBatcher(r io.Reader, maxLine int) *lineBatcher {
	return &lineBatcher{r: bufio.NewReaderSize(r, 64<<10), maxLine: maxLine}
}

// skip reads n lines without keeping them and returns how many there were.
func (l *lineBatcher) skip(n int) (int, error) {
	done := 0
	for done < n {
		frag, err := l.r.ReadSlice('\n')
		l.read += int64(len(frag))
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(frag) > 0 {
			done++
			l.line++
		}
		if err == io.EOF {
			return done, nil
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// next resets buf and fills it with the next lines, each ending in '\n': at most maxLines,
// and no more once buf holds maxBytes. A batch of no lines means the end of the input.
func (l *lineBatcher) next(buf *bytes.Buffer, maxLines, maxBytes int) (batch, error) {
	buf.Reset()
	b := batch{first: l.line + 1}
	for b.lines < maxLines && buf.Len() < maxBytes {
		start, long, eof := buf.Len(), false, false
		for {
			frag, err := l.r.ReadSlice('\n')
			l.read += int64(len(frag))
			if !long {
				buf.Write(frag)
				if buf.Len()-start > l.maxLine {
					long = true
					buf.Truncate(start)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				eof = true
				if buf.Len() == start && !long {
					return b, nil // no line left
				}
				if !long && buf.Len()-start+1 > l.maxLine {
					long = true // the newline the last line lacks would take it over
					buf.Truncate(start)
				}
				if !long {
					buf.WriteByte('\n')
				}
			} else if err != nil {
				return b, err
			}
			break
		}
		l.line++
		b.lines++
		if long {
			b.tooLong = append(b.tooLong, l.line)
			buf.WriteByte('\n')
		}
		if eof {
			break
		}
	}
	return b, nil
}
