package blob

import "io"

// Sized is a reader that announces how many bytes it will yield. Backends that can stream an
// object of known length without buffering it (S3) use the size; others ignore it.
type Sized interface {
	io.Reader
	// Size is the exact number of bytes the reader yields when the upload is valid.
	Size() int64
}

// SizedReader wraps r with its expected length n, for Store.Put.
func SizedReader(r io.Reader, n int64) Sized { return sizedReader{r: r, n: n} }

type sizedReader struct {
	r io.Reader
	n int64
}

func (s sizedReader) Read(p []byte) (int, error) { return s.r.Read(p) }
func (s sizedReader) Size() int64                { return s.n }
