package beam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/falkon-ooc/falkon-ooc/chunkstore"
)

// hasScheme reports whether loc is a URL with a scheme (gs://, s3://,
// memfs://) rather than a path on a filesystem every worker mounts.
func hasScheme(loc string) bool {
	i := strings.Index(loc, "://")
	return i > 0 && !strings.ContainsAny(loc[:i], `/\`)
}

// openStore opens the store at loc: chunkstore.Open (memory-mapped) for a
// path, or through Beam's filesystem package for a URL, reading segments
// with range reads (rangeReaderAt).
func openStore(ctx context.Context, loc string) (*chunkstore.Reader, error) {
	if !hasScheme(loc) {
		return chunkstore.Open(loc)
	}
	fs, err := openFS(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", loc, err)
	}
	// The Reader does not close its ReaderAts; they hold no open stream
	// between reads, so the filesystem may stay open for the process.
	metaName := joinURL(loc, chunkstore.ManifestName)
	rc, err := fs.OpenRead(ctx, metaName)
	if err != nil {
		return nil, fmt.Errorf("store %s: no manifest %s (not a store, or one still being written: its manifest is written last): %w", loc, metaName, err)
	}
	meta, err := io.ReadAll(io.LimitReader(rc, 64<<20+1))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", metaName, err)
	}
	var m struct {
		Segments []struct {
			Name string `json:"name"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		return nil, fmt.Errorf("store %s: %w", metaName, err)
	}
	segs := make([]chunkstore.SegmentData, len(m.Segments))
	for k, s := range m.Segments {
		if s.Name == "" || strings.ContainsAny(s.Name, `/\`) {
			return nil, fmt.Errorf("store %s: segment %d has an invalid name %q", metaName, k, s.Name)
		}
		name := joinURL(loc, s.Name)
		size, err := fs.Size(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", name, err)
		}
		// The Reader outlives ctx (workers cache it for the process):
		// its reads must not fail when the job that opened it ends.
		segs[k] = chunkstore.SegmentData{R: &rangeReaderAt{ctx: context.WithoutCancel(ctx), fs: fs, name: name}, Size: size}
	}
	r, err := chunkstore.NewReader(meta, segs)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", loc, err)
	}
	return r, nil
}

func joinURL(dir, name string) string {
	return strings.TrimSuffix(dir, "/") + "/" + path.Clean(name)
}

// RangeOpener is an optional interface of a Beam filesystem that can open
// a byte range of a file (HTTP range requests on object storage). Beam's
// own gs:// and s3:// filesystems do not implement it yet; a program can
// register a filesystem that does, under the same scheme, before it runs.
type RangeOpener interface {
	OpenRange(ctx context.Context, name string, off, n int64) (io.ReadCloser, error)
}

// rangeReaderAt is an io.ReaderAt over a file of a Beam filesystem. With a
// RangeOpener it reads each range on its own. Otherwise it keeps one open
// stream and serves reads at increasing offsets by skipping forward, which
// is what reading the chunks of a range in order does: each segment is
// then streamed once per range (from its start, since Beam's OpenRead
// cannot seek), and a read behind the stream's position reopens it.
type rangeReaderAt struct {
	ctx  context.Context
	fs   filesystem.Interface
	name string

	mu  sync.Mutex
	rc  io.ReadCloser
	pos int64
}

func (r *rangeReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if ro, ok := r.fs.(RangeOpener); ok {
		rc, err := ro.OpenRange(r.ctx, r.name, off, int64(len(p)))
		if err != nil {
			return 0, err
		}
		defer rc.Close()
		return io.ReadFull(rc, p)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ra, ok := r.rc.(io.ReaderAt); ok {
		return ra.ReadAt(p, off)
	}
	if r.rc == nil || off < r.pos {
		if r.rc != nil {
			r.rc.Close()
		}
		rc, err := r.fs.OpenRead(r.ctx, r.name)
		if err != nil {
			r.rc = nil
			return 0, err
		}
		r.rc, r.pos = rc, 0
		if ra, ok := rc.(io.ReaderAt); ok {
			return ra.ReadAt(p, off)
		}
	}
	if off > r.pos {
		k, err := io.CopyN(io.Discard, r.rc, off-r.pos)
		r.pos += k
		if err != nil {
			return 0, err
		}
	}
	n, err := io.ReadFull(r.rc, p)
	r.pos += int64(n)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}
