package beam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/internal/table"
)

// Object storage: stores, inputs and the pieces of a distributed ingest
// under URLs (s3://bucket/key, gs://bucket/key, memfs:// in tests), read
// and written through Beam's filesystem packages, so that the same code
// serves every scheme a program registers. Object storage has no
// directories and no rename: a "directory" is a key prefix, and a store
// appears when its manifest object is written, last (see Ingest).

// s3Ranges reads byte ranges of s3:// objects (HTTP range requests), which
// Beam's s3 filesystem cannot: its OpenRead streams an object from its
// start. Its client is configured as Beam's is (the AWS SDK's default
// sources: AWS_REGION, AWS_ENDPOINT_URL, credentials …), once per process
// and endpoint.
var s3Ranges struct {
	sync.Mutex
	client   *s3.Client
	endpoint string
}

func s3Client(ctx context.Context) (*s3.Client, error) {
	s3Ranges.Lock()
	defer s3Ranges.Unlock()
	ep := os.Getenv("AWS_ENDPOINT_URL") + " " + os.Getenv("AWS_ENDPOINT_URL_S3")
	if s3Ranges.client != nil && s3Ranges.endpoint == ep {
		return s3Ranges.client, nil
	}
	cfg, err := config.LoadDefaultConfig(context.WithoutCancel(ctx))
	if err != nil {
		return nil, fmt.Errorf("the AWS configuration: %w", err)
	}
	s3Ranges.client, s3Ranges.endpoint = s3.NewFromConfig(cfg), ep
	return s3Ranges.client, nil
}

// rangedFS is a Beam filesystem with range reads (RangeOpener) for its
// scheme; Remove is passed through.
type rangedFS struct {
	filesystem.Interface
	openRange func(ctx context.Context, name string, off, n int64) (io.ReadCloser, error)
}

func (f rangedFS) OpenRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, error) {
	return f.openRange(ctx, name, off, n)
}

func (f rangedFS) Remove(ctx context.Context, name string) error {
	if rm, ok := f.Interface.(filesystem.Remover); ok {
		return rm.Remove(ctx, name)
	}
	return fmt.Errorf("%s: the filesystem cannot remove objects", name)
}

// openFS returns the Beam filesystem of loc's scheme, with range reads
// for s3://, every wait on object storage bounded by ObjectTimeout
// (timedFS).
func openFS(ctx context.Context, loc string) (filesystem.Interface, error) {
	fs, err := newFS(ctx, loc)
	if err != nil {
		return nil, err
	}
	tf, timed := fs.(timedFS)
	if !timed {
		return fs, nil // a local path
	}
	if _, ok := tf.Interface.(RangeOpener); ok {
		return timedRangeFS{tf}, nil
	}
	if strings.HasPrefix(loc, "s3://") {
		tf.Interface = rangedFS{Interface: tf.Interface, openRange: openS3Range}
		return timedRangeFS{tf}, nil
	}
	return tf, nil
}

func openS3Range(ctx context.Context, name string, off, n int64) (io.ReadCloser, error) {
	u, err := url.Parse(name)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: not an s3://bucket/key URL", name)
	}
	c, err := s3Client(ctx)
	if err != nil {
		return nil, err
	}
	if n <= 0 {
		return io.NopCloser(strings.NewReader("")), nil
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(u.Host), Key: aws.String(strings.TrimPrefix(u.Path, "/")),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	})
	if err != nil {
		return nil, fmt.Errorf("%s: bytes %d–%d: %w", name, off, off+n-1, err)
	}
	return out.Body, nil
}

// objectFile is an object opened for reads at any offset: an
// ingest.RemoteFile.
type objectFile struct{ *rangeReaderAt }

func (f objectFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rc != nil {
		err := f.rc.Close()
		f.rc = nil
		return err
	}
	return nil
}

// objects reads inputs named by URLs for package ingest (ingest.Remote).
type objects struct{ ctx context.Context }

func (o objects) Stat(name string) (int64, time.Time, error) {
	fs, err := openFS(o.ctx, name)
	if err != nil {
		return 0, time.Time{}, err
	}
	size, err := fs.Size(o.ctx, name)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("%s: %w", name, err)
	}
	var mtime time.Time
	if lm, ok := fs.(filesystem.LastModifiedGetter); ok {
		if mtime, err = lm.LastModified(o.ctx, name); err != nil {
			return 0, time.Time{}, fmt.Errorf("%s: %w", name, err)
		}
	}
	return size, mtime, nil
}

func (o objects) Open(name string) (ingest.RemoteFile, error) {
	fs, err := openFS(o.ctx, name)
	if err != nil {
		return nil, err
	}
	return objectFile{&rangeReaderAt{ctx: o.ctx, fs: fs, name: name}}, nil
}

// maxListDepth bounds how deep below a prefix expandURLs looks for data
// objects (Hive partitions nest a level per key).
const maxListDepth = 6

// expandURLs expands the inputs that are URLs as ingest expands paths: a
// pattern (*, ?, [) to the objects it matches, sorted; a key that names
// an object to itself; else a prefix (a "directory") to the data objects
// below it (ingest.IsDataPath), sorted, up to maxListDepth levels down.
// Paths are left for ingest. Objects found by a pattern or below a
// prefix that falkon-ooc wrote as predictions (table.IsPredictionsAt) are
// left out and returned as skipped.
func expandURLs(ctx context.Context, inputs []string) (out, skipped []string, err error) {
	for _, in := range inputs {
		if !hasScheme(in) {
			out = append(out, in)
			continue
		}
		fs, err := openFS(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		if strings.ContainsAny(in[strings.Index(in, "://")+3:], "*?[") {
			got, err := fs.List(ctx, in)
			if err != nil {
				return nil, nil, fmt.Errorf("list %s: %w", in, err)
			}
			if len(got) == 0 {
				return nil, nil, fmt.Errorf("no objects match %q", in)
			}
			slices.Sort(got)
			for _, g := range got {
				if isPredictionObject(ctx, fs, g) {
					skipped = append(skipped, g)
				} else {
					out = append(out, g)
				}
			}
			continue
		}
		if _, err := fs.Size(ctx, in); err == nil {
			out = append(out, in)
			continue
		}
		dir := strings.TrimSuffix(in, "/")
		var found []string
		pattern := dir
		for range maxListDepth {
			pattern += "/*"
			got, err := fs.List(ctx, pattern)
			if err != nil {
				return nil, nil, fmt.Errorf("list %s: %w", in, err)
			}
			for _, g := range got {
				if ingest.IsDataPath(strings.TrimPrefix(g, dir+"/")) {
					found = append(found, g)
				}
			}
		}
		if len(found) == 0 {
			return nil, nil, fmt.Errorf("%s: no such object, and no data objects below it (.parquet, .parq, .pq, .csv, .tsv, optionally .gz, up to %d levels down)", in, maxListDepth)
		}
		slices.Sort(found)
		for _, g := range slices.Compact(found) {
			if isPredictionObject(ctx, fs, g) {
				skipped = append(skipped, g)
			} else {
				out = append(out, g)
			}
		}
	}
	return out, skipped, nil
}

// isPredictionObject reports whether the object name (found by a listing)
// is a Parquet file of predictions written by falkon-ooc.
func isPredictionObject(ctx context.Context, fs filesystem.Interface, name string) bool {
	lower := strings.ToLower(strings.TrimSuffix(name, ".gz"))
	if !strings.HasSuffix(lower, ".parquet") && !strings.HasSuffix(lower, ".parq") && !strings.HasSuffix(lower, ".pq") {
		return false
	}
	size, err := fs.Size(ctx, name)
	if err != nil {
		return false
	}
	f := objectFile{&rangeReaderAt{ctx: ctx, fs: fs, name: name}}
	defer f.Close()
	return table.IsPredictionsAt(f, size)
}

// putFile copies the local file src to the object name.
func putFile(ctx context.Context, fs filesystem.Interface, src, name string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// putStore copies the local store dir to the objects under prefix: its
// segment files first, its manifest last, so that a reader finds the
// store only whole.
func putStore(ctx context.Context, fs filesystem.Interface, dir, prefix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		if e.Type().IsRegular() && e.Name() != "meta.json" && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	for _, n := range append(names, "meta.json") {
		if err := putFile(ctx, fs, filepath.Join(dir, n), joinURL(prefix, n)); err != nil {
			return err
		}
	}
	return nil
}

// removeObjects removes every object matching the patterns (best effort:
// the first error is returned, the others are tried).
func removeObjects(ctx context.Context, fs filesystem.Interface, patterns ...string) error {
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return errors.New("the filesystem cannot remove objects")
	}
	var first error
	for _, p := range patterns {
		got, err := fs.List(ctx, p)
		if err != nil && first == nil {
			first = err
		}
		for _, g := range got {
			if err := rm.Remove(ctx, g); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// getFile copies the object name to the new local file dst.
func getFile(ctx context.Context, fs filesystem.Interface, name, dst string) error {
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer rc.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return fmt.Errorf("read %s: %w", name, err)
	}
	return f.Close()
}
