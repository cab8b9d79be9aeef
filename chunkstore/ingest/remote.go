package ingest

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Remote reads the inputs whose names are URLs (scheme://…, such as
// s3://bucket/key): a runner whose workers reach object storage sets
// Config.Remote (falkon-ooc-beam ingest does, through Beam's
// filesystems). A URL names one object; the runner expands patterns and
// prefixes before it calls NewPlan. Without a Remote a URL input is
// refused.
type Remote interface {
	// Stat returns the size and modification time of the object name;
	// its error names the object.
	Stat(name string) (size int64, modTime time.Time, err error)
	// Open opens the object name for reading at any offset.
	Open(name string) (RemoteFile, error)
}

// RemoteFile is an object opened by a Remote. ReadAt may be called from
// several goroutines at once.
type RemoteFile interface {
	io.ReaderAt
	io.Closer
}

// IsURL reports whether name is a URL (a scheme followed by ://) rather
// than a path.
func IsURL(name string) bool {
	i := strings.Index(name, "://")
	return i > 0 && !strings.ContainsAny(name[:i], `/\`)
}

// IsDataPath reports whether rel, a path below a directory (or a key
// below a prefix) that is being listed, is a data file that a directory
// listing picks up: not inside a hidden or "_" directory, with a data
// file's name (.parquet, .parq, .pq, .csv, .tsv, optionally .gz; not
// hidden, not a marker such as _SUCCESS).
func IsDataPath(rel string) bool {
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		if hiddenName(d) {
			return false
		}
	}
	return isDataName(parts[len(parts)-1])
}

// remoteFor returns the Remote that reads path: nil for a path of this
// machine, s.cfg.Remote for a URL (an error without one).
func (s *session) remoteFor(path string) (Remote, error) {
	if !IsURL(path) {
		return nil, nil
	}
	if s.cfg.Remote == nil {
		return nil, fmt.Errorf("%s: a URL input is read only by an ingest that reaches object storage (falkon-ooc-beam ingest)", path)
	}
	return s.cfg.Remote, nil
}

// remoteSection is a RemoteFile seen from offset 0 to its size, as the
// Parquet reader wants it (io.ReaderAt and io.Seeker); Close closes the
// file.
type remoteSection struct {
	*io.SectionReader
	io.Closer
}

func openRemote(fi *fileInfo) (remoteSection, error) {
	f, err := fi.remote.Open(fi.path)
	if err != nil {
		return remoteSection{}, err
	}
	if f == nil {
		return remoteSection{}, errors.New(fi.path + ": the object storage returned no reader")
	}
	return remoteSection{io.NewSectionReader(f, 0, fi.size), f}, nil
}
