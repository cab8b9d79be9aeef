package chunkstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/falkon-ooc/falkon-ooc/featenc"
)

// ManifestName is the manifest's file name inside a store directory.
const ManifestName = "meta.json"

// Manifest is a store's meta.json: schema, row counts, column statistics and
// the segment files. FORMAT.md lists the JSON fields.
type Manifest struct {
	FormatVersion int    `json:"format_version"`
	Rows          int64  `json:"rows"`
	ChunkRows     int    `json:"chunk_rows"`
	Chunks        int    `json:"chunks"`
	Codec         string `json:"codec"`

	Features []Column `json:"features"`
	Targets  []Column `json:"targets"`
	// Weight is the column of row weights (finite, ≥ 0), stored after
	// the targets; nil for a store without weights. Format version 2.
	Weight *Column `json:"weight,omitempty"`
	// InputColumns records what ingest did with every column of its
	// inputs, in input order; absent in stores written without it.
	InputColumns []InputColumn `json:"input_columns,omitempty"`
	// Encoding says how features were made from categorical and time
	// input columns; nil when every feature is an input column as it was.
	// Format version 3.
	Encoding *featenc.Spec `json:"encoding,omitempty"`
	// Nulls is the policy ingest applied to NULL, NaN and ±Inf values,
	// "drop" or "mean"; absent for "error" (the default) and in stores
	// written without it. A model fitted on the store keeps it, so that
	// predict treats NULLs alike by default.
	Nulls string `json:"nulls,omitempty"`

	Sources []SourceFile `json:"sources"`
	Created time.Time    `json:"created"`

	// Segments lists the segment files in chunk order.
	Segments []SegmentInfo `json:"segments"`
	// StoreID fingerprints the data: the first 16 bytes (32 hex digits) of
	// SHA-256 over the concatenated index bytes of all segments, which hold
	// every block's CRC32C. Checkpoints record it to refuse another store.
	StoreID string `json:"store_id"`
	// Checksum is the CRC-32C of meta.json with this value replaced by
	// "00000000", as 8 lowercase hex digits.
	Checksum string `json:"checksum"`
}

// Column describes one stored column. The statistics are computed by the
// writer in the same pass that writes the data.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"` // source type, e.g. "float32", "int64", "bool"

	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	// Std is the population standard deviation (divide by Count), 0 if
	// Count is 0.
	Std float64 `json:"std"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`

	// Integral reports whether every value is an integer (true if Count is 0).
	Integral bool `json:"integral"`
	// Distinct holds the sorted distinct values if there are at most
	// MaxDistinct of them, else nil. -0 counts as 0.
	Distinct []float64 `json:"distinct,omitempty"`
	// Labels holds the label names of a target of type LabelType, sorted:
	// the stored value k stands for Labels[k]. Absent for other columns.
	Labels []string `json:"labels,omitempty"`
}

// SegmentInfo describes one segment file.
type SegmentInfo struct {
	Name       string `json:"name"` // segment-NNNNNN.dat
	FirstChunk int    `json:"first_chunk"`
	Chunks     int    `json:"chunks"`
	Bytes      int64  `json:"bytes"`
}

// SourceFile records one input file of a store.
type SourceFile struct {
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
	Rows    int64     `json:"rows"`
}

// sourceTypes are the accepted Column.Type values.
var sourceTypes = map[string]bool{
	"float64": true, "float32": true,
	"int8": true, "int16": true, "int32": true, "int64": true,
	"uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"bool": true,
}

func segmentName(k int) string { return fmt.Sprintf("segment-%06d.dat", k) }

const checksumPlaceholder = `"checksum": "00000000"`

// encodeManifest marshals m with its checksum filled in.
func encodeManifest(m *Manifest) ([]byte, error) {
	c := *m
	c.Checksum = "00000000"
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("chunkstore: encode manifest: %w", err)
	}
	b = append(b, '\n')
	if bytes.Count(b, []byte(checksumPlaceholder)) != 1 {
		return nil, errors.New("chunkstore: encode manifest: checksum placeholder not unique")
	}
	sum := fmt.Sprintf("%08x", crc32c(b))
	m.Checksum = sum
	return bytes.Replace(b, []byte(checksumPlaceholder), []byte(`"checksum": "`+sum+`"`), 1), nil
}

// storeID computes Manifest.StoreID from the segments' index bytes.
func storeID(indexes [][]byte) string {
	h := sha256.New()
	for _, b := range indexes {
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// numColumns is the number of stored columns: features, targets and the
// weight column.
func (m *Manifest) numColumns() int { return len(m.Features) + len(m.Targets) + len(m.weightCols()) }

// weightCols is the weight column as a slice (empty without one).
func (m *Manifest) weightCols() []Column {
	if m.Weight == nil {
		return nil
	}
	return []Column{*m.Weight}
}

// versionError reports an unsupported version, wrapping ErrVersion.
func versionError(path string, v int) error {
	where := "store"
	if path != "" {
		where = "store " + path
	}
	reads := fmt.Sprintf("versions %d–%d", MinFormatVersion, MaxFormatVersion)
	if MinFormatVersion == MaxFormatVersion {
		reads = fmt.Sprintf("version %d", MinFormatVersion)
	}
	if v > int(MaxFormatVersion) {
		return fmt.Errorf("%w: %s was written by a newer falkon-ooc (format version %d; this build reads %s); upgrade falkon-ooc", ErrVersion, where, v, reads)
	}
	return fmt.Errorf("%w: %s has format version %d, which this build no longer reads (it reads %s)", ErrVersion, where, v, reads)
}

// decodeManifest parses and checks meta.json: the version, the checksum and
// the manifest's internal consistency. It does not look at segments.
func decodeManifest(path string, b []byte) (*Manifest, error) {
	bad := func(format string, args ...any) error {
		return &CorruptError{Path: path, File: ManifestName, Chunk: -1, Offset: -1, Err: fmt.Errorf(format, args...)}
	}
	// Read the version alone first, so that a newer manifest whose fields
	// changed still gives a version error rather than a parse error.
	var head struct {
		FormatVersion *int `json:"format_version"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, bad("invalid JSON: %v", err)
	}
	if head.FormatVersion == nil {
		return nil, bad("no format_version")
	}
	if v := *head.FormatVersion; v < int(MinFormatVersion) || v > int(MaxFormatVersion) {
		return nil, versionError(path, v)
	}
	m := new(Manifest)
	if err := json.Unmarshal(b, m); err != nil {
		return nil, bad("invalid JSON: %v", err)
	}
	if err := checkChecksum(b, m.Checksum); err != nil {
		return nil, bad("%v", err)
	}
	if err := m.check(); err != nil {
		return nil, bad("%v", err)
	}
	return m, nil
}

func checkChecksum(b []byte, sum string) error {
	if len(sum) != 8 {
		return fmt.Errorf("checksum %q is not 8 hex digits", sum)
	}
	for _, c := range sum {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("checksum %q is not 8 lowercase hex digits", sum)
		}
	}
	field := []byte(`"checksum": "` + sum + `"`)
	if bytes.Count(b, field) != 1 {
		return errors.New("checksum field not found in its canonical form")
	}
	z := bytes.Replace(b, field, []byte(checksumPlaceholder), 1)
	if got := fmt.Sprintf("%08x", crc32c(z)); got != sum {
		return fmt.Errorf("manifest checksum mismatch (stored %s, computed %s)", sum, got)
	}
	return nil
}

// check verifies the manifest's internal consistency.
func (m *Manifest) check() error {
	if m.ChunkRows < 1 || m.ChunkRows > MaxChunkRows {
		return fmt.Errorf("chunk_rows %d out of range [1, %d]", m.ChunkRows, MaxChunkRows)
	}
	if m.Rows < 0 {
		return fmt.Errorf("negative rows %d", m.Rows)
	}
	want := m.Rows / int64(m.ChunkRows)
	if m.Rows%int64(m.ChunkRows) != 0 {
		want++
	}
	if int64(m.Chunks) != want {
		return fmt.Errorf("chunks %d, want %d for %d rows of %d per chunk", m.Chunks, want, m.Rows, m.ChunkRows)
	}
	if _, err := parseCodec(m.Codec); err != nil || m.Codec == "" {
		return fmt.Errorf("unknown codec %q", m.Codec)
	}
	if len(m.Features) < 1 {
		return errors.New("no feature columns")
	}
	if n := m.numColumns(); n > MaxColumns {
		return fmt.Errorf("%d columns, more than %d", n, MaxColumns)
	}
	if m.Weight != nil && m.FormatVersion < int(FormatV2) {
		return fmt.Errorf("a weight column in format version %d", m.FormatVersion)
	}
	if m.Nulls != "" && m.Nulls != "drop" && m.Nulls != "mean" {
		return fmt.Errorf("unknown NULL policy %q", m.Nulls)
	}
	if m.Encoding != nil && m.FormatVersion < int(FormatV3) {
		return fmt.Errorf("an encoding in format version %d", m.FormatVersion)
	}
	if m.Weight != nil && m.Weight.Min < 0 {
		return fmt.Errorf("weight column %q: negative minimum %v", m.Weight.Name, m.Weight.Min)
	}
	names := make(map[string]bool)
	for _, cols := range [][]Column{m.Features, m.Targets, m.weightCols()} {
		for _, c := range cols {
			if c.Name == "" {
				return errors.New("empty column name")
			}
			if names[c.Name] {
				return fmt.Errorf("duplicate column %q", c.Name)
			}
			names[c.Name] = true
			if !sourceTypes[c.Type] && c.Type != LabelType {
				return fmt.Errorf("column %q: unknown type %q", c.Name, c.Type)
			}
			if c.Count != m.Rows {
				return fmt.Errorf("column %q: count %d, but the store has %d rows", c.Name, c.Count, m.Rows)
			}
			if len(c.Distinct) > MaxDistinct {
				return fmt.Errorf("column %q: %d distinct values, more than %d", c.Name, len(c.Distinct), MaxDistinct)
			}
			for _, v := range []float64{c.Mean, c.Std, c.Min, c.Max} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("column %q: non-finite statistic", c.Name)
				}
			}
			if c.Std < 0 {
				return fmt.Errorf("column %q: negative std %g", c.Name, c.Std)
			}
			if m.Rows > 0 && (c.Min > c.Max || c.Mean < c.Min || c.Mean > c.Max) {
				return fmt.Errorf("column %q: mean %g outside [min %g, max %g]", c.Name, c.Mean, c.Min, c.Max)
			}
		}
	}
	if err := m.checkColumnsAnnex(); err != nil {
		return err
	}
	if err := m.checkEncoding(); err != nil {
		return err
	}
	next := 0
	for k, s := range m.Segments {
		if s.Name != segmentName(k) {
			return fmt.Errorf("segment %d is named %q, want %q", k, s.Name, segmentName(k))
		}
		if s.FirstChunk != next || s.Chunks < 1 || s.Chunks > m.Chunks-next {
			return fmt.Errorf("segment %s holds chunks [%d, +%d), want them to continue from %d within %d chunks", s.Name, s.FirstChunk, s.Chunks, next, m.Chunks)
		}
		if s.Bytes < headerSize+footerSize {
			return fmt.Errorf("segment %s: %d bytes is too small", s.Name, s.Bytes)
		}
		// Each chunk takes at least its index record: bound the chunk
		// count by the file size before anything is sized from it.
		ncol := int64(m.numColumns())
		if int64(s.Chunks) > (s.Bytes-headerSize-footerSize)/(chunkRecordSize+entrySize*ncol) {
			return fmt.Errorf("segment %s: %d chunks cannot fit in %d bytes", s.Name, s.Chunks, s.Bytes)
		}
		next += s.Chunks
	}
	if next != m.Chunks {
		return fmt.Errorf("segments hold %d chunks, want %d", next, m.Chunks)
	}
	if len(m.StoreID) != 32 {
		return fmt.Errorf("store_id %q is not 32 hex digits", m.StoreID)
	}
	return nil
}
