package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Options configures an S3-compatible backend (AWS S3, MinIO, Ceph RGW, R2, ...).
type S3Options struct {
	// Endpoint is host[:port], without a scheme (s3.amazonaws.com, minio.internal:9000).
	Endpoint  string
	Bucket    string
	Region    string
	AccessKey string
	SecretKey string
	// UseSSL talks HTTPS to the endpoint.
	UseSSL bool
	// Transport replaces the HTTP transport (tests); nil uses minio-go's default.
	Transport http.RoundTripper
}

// S3 stores objects in one bucket of an S3-compatible service. Bytes still flow through the
// gateway (which checks them) and are streamed on: a reader that is Sized is sent as one
// streaming PUT of known length, never buffered whole.
type S3 struct {
	c      *minio.Client
	bucket string
}

var (
	_ Store         = (*S3)(nil)
	_ PrefixDeleter = (*S3)(nil)
)

// NewS3 connects to the service and checks that the bucket exists.
func NewS3(ctx context.Context, o S3Options) (*S3, error) {
	if o.Endpoint == "" || o.Bucket == "" {
		return nil, errors.New("blob: s3 needs an endpoint and a bucket")
	}
	c, err := minio.New(o.Endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""),
		Secure:    o.UseSSL,
		Region:    o.Region,
		Transport: o.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: s3: %w", err)
	}
	ok, err := c.BucketExists(ctx, o.Bucket)
	if err != nil {
		return nil, fmt.Errorf("blob: s3 bucket %q: %w", o.Bucket, err)
	}
	if !ok {
		return nil, fmt.Errorf("blob: s3 bucket %q does not exist", o.Bucket)
	}
	return &S3{c: c, bucket: o.Bucket}, nil
}

// Put uploads r to key. With a Sized reader the object is sent in one PUT of that length
// (a reader that ends early or fails aborts it); otherwise minio-go uploads 5 MiB parts.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	size := int64(-1)
	opts := minio.PutObjectOptions{ContentType: contentType}
	if sz, ok := r.(Sized); ok {
		size = sz.Size()
	} else {
		// Parts of 5 MiB (the S3 minimum), sent unsigned: some S3-compatible servers store
		// the aws-chunked framing of streaming-signed parts as data.
		opts.PartSize = 5 << 20
		opts.DisableContentSha256 = true
	}
	info, err := s.c.PutObject(ctx, s.bucket, key, r, size, opts)
	if err != nil {
		return 0, fmt.Errorf("blob: s3 put %s: %w", key, err)
	}
	return info.Size, nil
}

// Open returns the object at key; reads and seeks are ranged GETs.
func (s *S3) Open(ctx context.Context, key string) (Object, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	obj, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s3Err(key, err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, s3Err(key, err)
	}
	return s3Object{Object: obj, size: st.Size}, nil
}

// Delete removes key; a missing key is not an error.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := s.c.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		if e := s3Err(key, err); errors.Is(e, ErrNotFound) {
			return nil
		}
		return fmt.Errorf("blob: s3 delete %s: %w", key, err)
	}
	return nil
}

// DeletePrefix removes every object whose key starts with prefix + "/".
func (s *S3) DeletePrefix(ctx context.Context, prefix string) error {
	if err := CheckKey(prefix); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine on a failure
	for obj := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix + "/", Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("blob: s3 list %s: %w", prefix, obj.Err)
		}
		if err := s.Delete(ctx, obj.Key); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// List calls fn with the key and size of every object of the bucket, in key order. Backups
// use it.
func (s *S3) List(ctx context.Context, fn func(key string, size int64) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops minio-go's listing goroutine when fn fails
	for obj := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return fmt.Errorf("blob: s3 list: %w", obj.Err)
		}
		if err := fn(obj.Key, obj.Size); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func s3Err(key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound {
		return ErrNotFound
	}
	return fmt.Errorf("blob: s3 %s: %w", key, err)
}

type s3Object struct {
	*minio.Object
	size int64
}

func (o s3Object) Size() int64 { return o.size }
