// Package blob stores uploaded bytes (asset files, form attachments) behind one small
// interface, so products never touch the file system or an object store directly. The local
// folder under the data directory is the default backend; an S3-compatible backend can
// implement the same interface.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Sentinel errors of the package.
var (
	// ErrNotFound reports a key with no object.
	ErrNotFound = errors.New("blob: not found")
	// ErrBadKey reports a key that is empty, absolute or escapes the store (.., backslashes).
	ErrBadKey = errors.New("blob: invalid key")
)

// Object is a stored object opened for reading, with random access for range requests.
type Object interface {
	io.ReadSeekCloser
	// Size is the object's length in bytes.
	Size() int64
}

// Store keeps objects by key. Keys are slash-separated relative paths.
type Store interface {
	// Put streams r into key, replacing any object there only once the write is complete.
	// It returns the bytes written.
	Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	// Open opens the object at key, or ErrNotFound.
	Open(ctx context.Context, key string) (Object, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// PrefixDeleter is a Store that deletes every object under a folder at once: the owner of
// objects it may not have recorded (a Remakeable object whose record a crash lost) removes
// them with their folder. Local and S3 implement it.
type PrefixDeleter interface {
	// DeletePrefix removes every object whose key starts with prefix + "/"; prefix is a
	// key (CheckKey), and none there is not an error.
	DeletePrefix(ctx context.Context, prefix string) error
}

// remakeableKey marks a context whose writes are Remakeable.
type remakeableKey struct{}

// Remakeable marks the Puts made with ctx as bytes their owner can make again (an image
// variant, built from its original): a store may answer before they reach the disk (Local
// skips its fsync, about 0.5 ms of CPU and 2.5 ms of waiting a file here), so a crash may lose
// such an object or leave it shorter, never put another object's bytes in its place. The
// owner checks the size it recorded when it opens one, and makes it again when it differs.
func Remakeable(ctx context.Context) context.Context {
	return context.WithValue(ctx, remakeableKey{}, true)
}

// isRemakeable reports whether ctx was marked by Remakeable.
func isRemakeable(ctx context.Context) bool {
	v, _ := ctx.Value(remakeableKey{}).(bool)
	return v
}

// CheckKey refuses keys that could escape the store.
func CheckKey(key string) error {
	if key == "" || len(key) > 1024 || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") || strings.ContainsRune(key, 0) {
		return ErrBadKey
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return ErrBadKey
		}
	}
	if path.Clean(key) != key {
		return ErrBadKey
	}
	return nil
}

// Local stores objects as files below a root folder.
type Local struct{ root string }

var (
	_ Store         = (*Local)(nil)
	_ PrefixDeleter = (*Local)(nil)
)

// NewLocal returns a store rooted at dir, creating it.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return &Local{root: dir}, nil
}

func (l *Local) path(key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	return filepath.Join(l.root, filepath.FromSlash(key)), nil
}

// Put writes to a temporary file beside the target, syncs it (unless ctx is Remakeable) and
// renames it into place.
func (l *Local) Put(ctx context.Context, key string, r io.Reader, _ string) (int64, error) {
	p, err := l.path(key)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return 0, fmt.Errorf("blob: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return 0, fmt.Errorf("blob: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	n, err := io.Copy(tmp, ctxReader{ctx: ctx, r: r})
	if err == nil && !isRemakeable(ctx) {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return n, fmt.Errorf("blob: %w", err)
	}
	return n, nil
}

// Open opens the file at key.
func (l *Local) Open(_ context.Context, key string) (Object, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("blob: %w", err)
	}
	return localObject{File: f, size: st.Size()}, nil
}

// Delete removes the file at key.
func (l *Local) Delete(_ context.Context, key string) error {
	p, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("blob: %w", err)
	}
	return nil
}

// DeletePrefix removes the folder prefix with every file in it.
func (l *Local) DeletePrefix(_ context.Context, prefix string) error {
	p, err := l.path(prefix)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	return nil
}

// List calls fn with the key and size of every complete object, in key order; the temporary
// files of writes in progress are not objects. An object deleted while the walk reaches it is
// skipped. Backups use it.
func (l *Local) List(ctx context.Context, fn func(key string, size int64) error) error {
	return filepath.WalkDir(l.root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".upload-") {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		return fn(filepath.ToSlash(rel), info.Size())
	})
}

type localObject struct {
	*os.File
	size int64
}

func (o localObject) Size() int64 { return o.size }

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
