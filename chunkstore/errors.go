package chunkstore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var (
	// ErrCorrupt is matched (errors.Is) by every *CorruptError: a store's
	// bytes are not what the writer wrote.
	ErrCorrupt = errors.New("chunkstore: corrupt store")
	// ErrVersion reports a store whose format version this build cannot read.
	ErrVersion = errors.New("chunkstore: unsupported format version")
	// ErrClosed reports use of a Reader or Writer after Close.
	ErrClosed = errors.New("chunkstore: use after close")
	// ErrBusy is matched by the error of Create when another writer,
	// in this or another process, is writing a store at the same path.
	ErrBusy = errors.New("chunkstore: another writer is writing the store")
)

// busyError is the error of a Create that found the lock held.
type busyError struct{ msg string }

func (e *busyError) Error() string        { return e.msg }
func (e *busyError) Is(target error) bool { return target == ErrBusy }

// CorruptError locates corruption in a store. It matches ErrCorrupt.
type CorruptError struct {
	Path   string // the store directory ("" for NewReader)
	File   string // file in the store: "meta.json" or "segment-000000.dat"
	Chunk  int    // chunk number (store-wide), or -1
	Column string // column name, or ""
	Offset int64  // byte offset in File, or -1
	Err    error  // what is wrong
}

func (e *CorruptError) Error() string {
	var b strings.Builder
	b.WriteString("chunkstore: corrupt store")
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	var loc []string
	if e.File != "" {
		loc = append(loc, e.File)
	}
	if e.Chunk >= 0 {
		loc = append(loc, "chunk "+strconv.Itoa(e.Chunk))
	}
	if e.Column != "" {
		loc = append(loc, "column "+strconv.Quote(e.Column))
	}
	if e.Chunk < 0 && e.Offset >= 0 {
		loc = append(loc, fmt.Sprintf("offset %d", e.Offset))
	}
	b.WriteString(": ")
	if len(loc) > 0 {
		b.WriteString(strings.Join(loc, " "))
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
