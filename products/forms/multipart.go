package forms

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/gatehouse-dev/gatehouse/edge/apierr"
)

// MaxMultipartTextBytes bounds the text parts of one multipart submission together: the same
// budget as a JSON body, so only file parts can make a multipart body large.
const MaxMultipartTextBytes = MaxJSONBytes

// maxPartHeaderBytes bounds the header block of one part. mime/multipart accepts up to 10 MB of
// headers per part and allocates several times that to read them (a 9 MB header line cost 61
// MB): headerGuard refuses a longer block before the reader sees it.
const maxPartHeaderBytes = 64 << 10

// errPartHeader is a part whose header block is longer than maxPartHeaderBytes.
var errPartHeader = errors.New("forms: a multipart part header is longer than 64 KB")

// spoolPrefix begins the names of the temporary files that hold file parts until the
// submission is stored. A service adds its own run id after it (Service.spoolPart), so its
// Start tells the parts a crash left apart from the parts of submissions arriving meanwhile.
const spoolPrefix = "part-"

// FieldKinds tells the multipart decoder, by field name, whether a field exists and whether it
// takes files; the admitted form answers it (Admission.FieldKind).
type FieldKinds func(name string) (known, file bool)

// Spool is a decoded multipart body: text values, and file parts written to temporary files.
// Remove deletes those files; call it once the submission is stored or refused.
type Spool struct {
	Values map[string]any
	Files  map[string][]FilePart
	paths  []string
	log    *slog.Logger
	// dir and prefix place and name the spooled files.
	dir, prefix string
}

// Remove deletes the spooled files. It is safe on a nil or half-filled Spool.
func (s *Spool) Remove() {
	if s == nil {
		return
	}
	for _, p := range s.paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("removing a spooled file part", "path", p, "err", err)
		}
	}
	s.paths = nil
}

// decodeMultipart streams a multipart/form-data body: text parts become values (at most
// MaxMultipartTextBytes together), file parts are copied to temporary files named prefix* in
// dir (at most MaxFileBytes each) as they arrive, so a submission holds a few kilobytes of
// memory whatever its size. A part without a name, or a file part for a field that does not
// take files, is refused before its bytes are read. On error the spooled files are already
// removed.
func decodeMultipart(body io.Reader, boundary, dir, prefix string, kinds FieldKinds, log *slog.Logger) (*Spool, error) {
	if boundary == "" {
		return nil, bodyErr(errors.New("no boundary"))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Spool{Values: map[string]any{}, Files: map[string][]FilePart{}, log: log, dir: dir, prefix: prefix}
	guard := &headerGuard{r: body, delim: []byte("--" + boundary)}
	if err := s.read(multipart.NewReader(guard, boundary), kinds); err != nil {
		s.Remove()
		return nil, err
	}
	return s, nil
}

// bodyErr is the API error of a failed read of the body: the limit's 413 and the header
// guard's refusal as they are, anything else a malformed body.
func bodyErr(err error) error {
	var he *apierr.Error
	switch {
	case errors.As(err, &he):
		return he
	case errors.Is(err, errPartHeader):
		return apierr.Validation(apierr.FieldProblem{Field: "body", Problem: "has a part whose headers are longer than 64 KB"})
	}
	e := apierr.Validation(apierr.FieldProblem{Field: "body", Problem: "is not a well-formed multipart/form-data body"})
	e.Err = err
	return e
}

func (s *Spool) read(mr *multipart.Reader, kinds FieldKinds) error {
	text := 0
	for i := 0; ; i++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return bodyErr(err)
		}
		name, filename := part.FormName(), part.FileName()
		if name == "" {
			return apierr.Validation(apierr.FieldProblem{Field: partLabel(i, filename),
				Problem: `has no name: every part needs Content-Disposition: form-data; name="<field>"`})
		}
		if filename == "" {
			n, err := s.readText(part, name, MaxMultipartTextBytes-text)
			part.Close()
			if err != nil {
				return err
			}
			text += n
			continue
		}
		if known, file := kinds(name); known && !file {
			part.Close()
			return apierr.Validation(apierr.FieldProblem{Field: name,
				Problem: fmt.Sprintf("is not a file field, but %s is a file part", partLabel(i, filename))})
		}
		err = s.spool(part, name, filename)
		part.Close()
		if err != nil {
			return err
		}
	}
}

// partLabel names a part in an error: its position and, when it has one, its file name.
func partLabel(i int, filename string) string {
	l := fmt.Sprintf("parts[%d]", i)
	if filename != "" {
		l += fmt.Sprintf(" (file %q)", filename)
	}
	return l
}

// readText adds a text part to the values; it may hold at most budget bytes.
func (s *Spool) readText(part *multipart.Part, name string, budget int) (int, error) {
	if budget < 0 {
		budget = 0
	}
	var b strings.Builder
	n, err := io.Copy(&b, io.LimitReader(part, int64(budget)+1))
	if err != nil {
		return 0, bodyErr(err)
	}
	if n > int64(budget) {
		return 0, apierr.ErrTooLarge
	}
	addValue(s.Values, name, b.String())
	return int(n), nil
}

// spool copies a file part to a temporary file and records it.
func (s *Spool) spool(part *multipart.Part, name, filename string) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("forms: spool folder: %w", err)
	}
	f, err := os.CreateTemp(s.dir, s.prefix+"*")
	if err != nil {
		return fmt.Errorf("forms: spool file: %w", err)
	}
	s.paths = append(s.paths, f.Name())
	head := make([]byte, 512)
	hn, herr := io.ReadFull(part, head)
	head = head[:hn]
	if herr != nil && herr != io.EOF && herr != io.ErrUnexpectedEOF {
		f.Close()
		return bodyErr(herr)
	}
	size := int64(hn)
	_, err = f.Write(head)
	if err == nil && herr == nil { // a full head: there may be more
		var n int64
		n, err = io.Copy(f, io.LimitReader(part, MaxFileBytes+1-size))
		size += n
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) { // the disk, not the body
			return fmt.Errorf("forms: spool file: %w", err)
		}
		return bodyErr(err)
	}
	if size > MaxFileBytes {
		return apierr.ErrTooLarge
	}
	ctype, _, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
	if ctype == "" || ctype == "application/octet-stream" {
		ctype, _, _ = mime.ParseMediaType(http.DetectContentType(head))
	}
	path := f.Name()
	s.Files[name] = append(s.Files[name], FilePart{
		Filename: filename, ContentType: ctype, Size: size, Head: head,
		Open: func() (ReadCloser, error) { return os.Open(path) },
	})
	return nil
}

// cleanSpool removes the file parts a crash left in dir: the files named spoolPrefix*, except
// those named own* (the parts of this run's submissions, which may arrive meanwhile).
func cleanSpool(dir, own string, log *slog.Logger) {
	var stale []string
	parts, _ := filepath.Glob(filepath.Join(dir, spoolPrefix+"*"))
	for _, p := range parts {
		if !strings.HasPrefix(filepath.Base(p), own) {
			stale = append(stale, p)
		}
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			log.Warn("removing a stale spooled file part", "path", p, "err", err)
		}
	}
	if len(stale) > 0 {
		log.Info("removed spooled file parts left by a crash", "count", len(stale), "dir", dir)
	}
}

// headerGuard passes a multipart body through unchanged and fails with errPartHeader when the
// header block of a part (from a "--boundary" delimiter to the blank line that ends the
// headers) is longer than maxPartHeaderBytes. It finds delimiters with bytes.Index over each
// read (plus the few bytes of the previous one a delimiter may straddle) and counts header
// bytes one by one; it parses nothing else, mime/multipart does.
type headerGuard struct {
	r     io.Reader
	delim []byte
	buf   []byte // the carried bytes and the current read, reused
	carry int    // how many bytes at the start of buf come from the previous read
	head  bool   // inside a header block
	n     int    // bytes of the current header block so far
	crlf  int    // how much of "\r\n\r\n" the last header bytes matched
	done  bool   // past the close delimiter
}

func (g *headerGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if n > 0 && !g.done {
		if gerr := g.scan(p[:n]); gerr != nil {
			return 0, gerr
		}
	}
	return n, err
}

func (g *headerGuard) scan(chunk []byte) error {
	g.buf = append(g.buf[:g.carry], chunk...)
	b := g.buf
	for i := 0; i < len(b); {
		if g.head {
			for ; i < len(b); i++ {
				if g.n == 0 && len(b)-i >= 2 && b[i] == '-' && b[i+1] == '-' {
					g.done = true // the close delimiter: the rest is the epilogue
					g.carry = 0
					return nil
				}
				g.n++
				if g.n > maxPartHeaderBytes {
					return errPartHeader
				}
				switch {
				case b[i] == "\r\n\r\n"[g.crlf]:
					g.crlf++
				case b[i] == '\r':
					g.crlf = 1
				default:
					g.crlf = 0
				}
				if g.crlf == 4 {
					g.head, i = false, i+1
					break
				}
			}
			continue
		}
		k := bytes.Index(b[i:], g.delim)
		if k < 0 {
			// Keep what a delimiter split by the next read could start with.
			rest := b[i:]
			if keep := len(g.delim) - 1; len(rest) > keep {
				rest = rest[len(rest)-keep:]
			}
			g.carry = copy(g.buf, rest)
			return nil
		}
		i += k + len(g.delim)
		g.head, g.n, g.crlf = true, 0, 0
	}
	g.carry = 0
	return nil
}
