package chunkstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/falkon-ooc/falkon-ooc/internal/colstats"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
)

// Part is one segment of a store written by CreatePart, as ClosePart
// describes it to Assemble: everything the manifest needs from it.
type Part struct {
	Segment SegmentInfo `json:"segment"` // Chunks 0: no segment file
	Rows    int64       `json:"rows"`
	// Index is the segment's index bytes (the store ID is computed over
	// them); Stats the statistics of each of its chunks, column by
	// column, in chunk order.
	Index []byte `json:"index"`
	Stats []byte `json:"stats"`
}

// CreatePart starts segment number seg of a store whose segments are
// written separately (by other processes, on other machines) into the
// existing directory dir, and put together by Assemble. The segment holds
// the store's chunks from firstChunk on: every one of them must be whole
// (opt.ChunkRows rows) except the store's last. features, targets and opt
// must be the same for every part and for Assemble; opt.SegmentBytes is
// ignored (a part is one segment). shift holds each column's value in the
// store's first row: the statistics are taken of the values minus it, as a
// single Writer does, so that the manifest Assemble writes has the same
// statistics, bit for bit, as one written by Create of the same rows.
//
// The part's bytes are those a single Writer writes for the same chunks:
// only the segment boundaries (and so the blocks' offsets and the store
// ID) can differ. No lock is taken: the caller owns dir.
func CreatePart(dir string, seg, firstChunk int, features, targets []ColumnSpec, opt Options, shift []float64) (*Writer, error) {
	spec, err := checkCreate(dir, features, targets, &opt)
	if err != nil {
		return nil, err
	}
	if len(shift) != len(features)+len(targets) {
		return nil, fmt.Errorf("chunkstore: create part %d of %s: %d shifts for %d columns", seg, dir, len(shift), len(features)+len(targets))
	}
	if seg < 0 || firstChunk < 0 {
		return nil, fmt.Errorf("chunkstore: create part %d of %s: negative segment or first chunk", seg, dir)
	}
	opt.SegmentBytes = math.MaxInt64
	// A retried task finds its failed attempt's segment: start afresh.
	if err := os.Remove(filepath.Join(dir, segmentName(seg))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("chunkstore: create part %d of %s: %w", seg, dir, err)
	}
	w, err := buildWriter(dir, dir, features, targets, opt, spec)
	if err != nil {
		return nil, err
	}
	w.part, w.segBase, w.nchunks, w.partFirst = true, seg, firstChunk, firstChunk
	copy(w.shift, shift)
	w.start()
	return w, nil
}

// ClosePart writes the part's last chunk, index and footer, fsyncs its
// segment file and returns its description. A part of no rows writes no
// file. On failure the segment file is removed.
func (w *Writer) ClosePart() (*Part, error) {
	if w.state != stateOpen {
		return nil, ErrClosed
	}
	if !w.part {
		return nil, errors.New("chunkstore: ClosePart of a writer made by Create")
	}
	w.state = stateClosed
	first := w.partFirst
	if w.cur != nil && w.cur.rows > 0 && w.getErr() == nil {
		w.submit()
	}
	w.stopPipeline()
	err := w.getErr()
	if err == nil && w.seg != nil {
		err = w.finishSegment()
	}
	if err != nil {
		if w.seg != nil {
			w.seg.f.Close()
			w.seg = nil
		}
		return nil, errors.Join(err, w.removePart())
	}
	p := &Part{Segment: SegmentInfo{Name: segmentName(w.segBase), FirstChunk: first}, Rows: w.rows, Stats: w.chunkStats}
	if len(w.segInfos) == 1 {
		p.Segment, p.Index = w.segInfos[0], w.indexes[0]
	}
	return p, nil
}

// removePart removes a part's segment file, if written.
func (w *Writer) removePart() error {
	err := os.Remove(filepath.Join(w.tmp, segmentName(w.segBase)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("chunkstore: abort: %w", err)
	}
	return nil
}

// Assemble writes the manifest of the store in dir whose segments were
// written by CreatePart, given the parts in chunk order (empty ones may be
// among them) and the features, targets and opt every part was written
// with (opt.Sources, InputColumns, Labels and Created are recorded as Close
// records them). It merges the chunks' statistics in chunk order and
// computes the store ID as a single Writer does, then writes meta.json
// last, under a temporary name, fsynced and renamed: the store in dir is
// whole only once it returns. Move it into place with Install.
func Assemble(dir string, features, targets []ColumnSpec, opt Options, parts []*Part) (*Manifest, error) {
	m, b, err := assemble(dir, features, targets, opt, parts, func(p *Part) error {
		fi, err := os.Stat(filepath.Join(dir, p.Segment.Name))
		if err != nil || fi.Size() != p.Segment.Bytes {
			return fmt.Errorf("segment file %s missing or not of %d bytes (%v)", p.Segment.Name, p.Segment.Bytes, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := fileutil.WriteFile(filepath.Join(dir, ManifestName), 0o644, func(wr io.Writer) error {
		_, err := wr.Write(b)
		return err
	}); err != nil {
		return nil, fmt.Errorf("chunkstore: %w", err)
	}
	return m, nil
}

// AssembleManifest is Assemble for a store whose files are not in a
// directory of this machine (objects of object storage, named by loc in
// errors): it checks the parts and returns the manifest and its bytes,
// and writes nothing. The caller checks that every part's segment file
// (Part.Segment.Name, of Part.Segment.Bytes bytes) is in place, then
// stores the bytes as ManifestName, last.
func AssembleManifest(loc string, features, targets []ColumnSpec, opt Options, parts []*Part) (*Manifest, []byte, error) {
	return assemble(loc, features, targets, opt, parts, func(*Part) error { return nil })
}

// assemble checks the parts and builds the manifest; checkSeg checks a
// part's segment file.
func assemble(dir string, features, targets []ColumnSpec, opt Options, parts []*Part, checkSeg func(*Part) error) (*Manifest, []byte, error) {
	spec, err := checkCreate(dir, features, targets, &opt)
	if err != nil {
		return nil, nil, err
	}
	for name, labels := range opt.Labels {
		if err := checkLabels(labels); err != nil {
			return nil, nil, fmt.Errorf("chunkstore: labels of %q: %w", name, err)
		}
	}
	w, err := buildWriter(dir, dir, features, targets, opt, spec)
	if err != nil {
		return nil, nil, err
	}
	defer w.enc.close()
	bad := func(k int, format string, args ...any) (*Manifest, []byte, error) {
		return nil, nil, fmt.Errorf("chunkstore: assemble %s: part %d: %s", dir, k, fmt.Sprintf(format, args...))
	}
	var st colstats.Stats
	for k, p := range parts {
		if p.Segment.Chunks == 0 {
			if p.Rows != 0 {
				return bad(k, "%d rows in no chunk", p.Rows)
			}
			continue
		}
		if p.Segment.FirstChunk != w.nchunks || p.Segment.Name != segmentName(len(w.segInfos)) {
			return bad(k, "segment %s from chunk %d, want %s from chunk %d", p.Segment.Name, p.Segment.FirstChunk, segmentName(len(w.segInfos)), w.nchunks)
		}
		if w.rows%int64(opt.ChunkRows) != 0 {
			return bad(k, "follows a chunk of fewer than %d rows", opt.ChunkRows)
		}
		if want := int64(p.Segment.Chunks) * int64(opt.ChunkRows); p.Rows > want || p.Rows <= want-int64(opt.ChunkRows) {
			return bad(k, "%d rows in %d chunks of %d", p.Rows, p.Segment.Chunks, opt.ChunkRows)
		}
		if len(p.Index) != p.Segment.Chunks*(chunkRecordSize+entrySize*w.ncol) {
			return bad(k, "an index of %d bytes for %d chunks", len(p.Index), p.Segment.Chunks)
		}
		if err := checkSeg(p); err != nil {
			return bad(k, "%v", err)
		}
		b := p.Stats
		for range p.Segment.Chunks {
			for c := range w.ncol {
				if b, err = st.UnmarshalBinary(b); err != nil {
					return bad(k, "%v", err)
				}
				w.stats[c].Merge(&st)
			}
		}
		if len(b) != 0 {
			return bad(k, "%d bytes of statistics left over", len(b))
		}
		w.rows += p.Rows
		w.nchunks += p.Segment.Chunks
		w.segInfos = append(w.segInfos, p.Segment)
		w.indexes = append(w.indexes, p.Index)
	}
	m := w.manifest()
	b, err := encodeManifest(m)
	if err != nil {
		return nil, nil, err
	}
	if err := m.check(); err != nil {
		return nil, nil, fmt.Errorf("chunkstore: assemble %s: %w", dir, err)
	}
	return m, b, nil
}
