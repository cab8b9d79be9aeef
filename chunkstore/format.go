package chunkstore

// This file holds the byte-level format (see FORMAT.md): header, block,
// index and footer encoding and decoding. It does no I/O, so it can be fuzzed.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// FormatVersion is the version of the on-disk format: segment headers and
// footers and the manifest's format_version.
type FormatVersion uint8

const (
	// FormatV1 is the first format: see FORMAT.md.
	FormatV1 FormatVersion = 1
	// FormatV2 is FormatV1 with a column of row weights stored after the
	// targets (the manifest's weight): a store with weights is written
	// as version 2, so that a build that cannot read the weights refuses
	// it instead of reading them as data. The bytes are laid out as in
	// version 1.
	FormatV2 FormatVersion = 2
	// FormatV3 is FormatV2 with an encoding in the manifest (encoding):
	// features made from categorical and time columns (featenc.Spec). A
	// store with an encoding is written as version 3, so that a build
	// that does not know the encoding refuses it instead of fitting
	// one-hot features as numbers and predicting without the encoding.
	// The bytes are laid out as in version 1.
	FormatV3 FormatVersion = 3

	// MinFormatVersion and MaxFormatVersion bound the versions this build
	// reads. Anything else is ErrVersion.
	MinFormatVersion = FormatV1
	MaxFormatVersion = FormatV3

	// CurrentFormatVersion is the version this build writes (FormatV2
	// for a store with row weights, FormatV3 for one with an encoding).
	CurrentFormatVersion = FormatV1
)

// Magic is the segment file magic number, at the start of the header and at
// the very end of the footer.
const Magic = "FOOC"

// Sizes of the fixed parts of a segment file.
const (
	headerSize      = 8
	footerSize      = 48
	chunkRecordSize = 8  // rows u32 + reserved u32
	entrySize       = 24 // one column entry in the index
	trailerSize     = 5  // codec byte + crc32c
)

// Limits on values read from disk, so that a hostile manifest cannot make a
// reader allocate without bound.
const (
	// MaxChunkRows is the largest chunk a store may declare: 8 MiB per
	// column block, so a reader's scratch stays below 80 MiB per goroutine.
	MaxChunkRows = 1 << 20
	// MaxColumns is the largest number of columns (features + targets).
	MaxColumns = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Codec bytes (FORMAT.md "Block").
const (
	codecNone    byte = 0x00
	codecS2      byte = 0x01
	codecZstd    byte = 0x02
	codecShuffle byte = 0x80
)

// codecSpec is a parsed Options.Codec: what to write.
type codecSpec struct {
	name    string // canonical name, recorded in the manifest
	id      byte   // codecNone, codecS2 or codecZstd
	shuffle bool   // always byte-shuffle
	auto    bool   // byte-shuffle blocks whose values are all integers or float32s
	level   int    // s2: 0 Encode, 1 Better, 2 Best; zstd: zstd.EncoderLevel
}

func (c codecSpec) byteValue() byte {
	b := c.id
	if c.shuffle {
		b |= codecShuffle
	}
	return b
}

// DefaultCodec is the codec used when Options.Codec is empty: zstd, with
// each block byte-shuffled when all its values are integers or float32s; see
// bench/RESULTS.md "Chunk codecs" for the measurements behind it.
const DefaultCodec = "zstd+auto"

// Codecs lists the accepted values of Options.Codec: no compression, s2 and
// zstd at several levels, and each compressor with a suffix: "+shuffle"
// byte-shuffles every block's float64s first (helps integer columns, hurts
// rounded decimals: see bench/RESULTS.md), "+auto" shuffles the blocks whose
// values are all integers or all exact float32s. Each block records what
// was done in its codec byte.
var Codecs = []string{
	"none", "s2", "s2-better", "s2-best", "zstd-fastest", "zstd", "zstd-better", "zstd-best",
	"s2+shuffle", "s2-better+shuffle", "s2-best+shuffle",
	"zstd-fastest+shuffle", "zstd+shuffle", "zstd-better+shuffle", "zstd-best+shuffle",
	"s2+auto", "s2-better+auto", "s2-best+auto",
	"zstd-fastest+auto", "zstd+auto", "zstd-better+auto", "zstd-best+auto",
}

// CheckCodec reports whether name is an accepted Options.Codec ("" is the
// default).
func CheckCodec(name string) error {
	_, err := parseCodec(name)
	return err
}

func parseCodec(s string) (codecSpec, error) {
	if s == "" {
		s = DefaultCodec
	}
	base, shuffle := strings.CutSuffix(s, "+shuffle")
	base, auto := strings.CutSuffix(base, "+auto")
	c := codecSpec{name: s, shuffle: shuffle, auto: auto}
	switch base {
	case "none":
		if shuffle || auto {
			return c, fmt.Errorf("chunkstore: codec %q: shuffle needs a compressor", s)
		}
		c.id = codecNone
	case "s2":
		c.id, c.level = codecS2, 0
	case "s2-better":
		c.id, c.level = codecS2, 1
	case "s2-best":
		c.id, c.level = codecS2, 2
	case "zstd-fastest":
		c.id, c.level = codecZstd, int(zstd.SpeedFastest)
	case "zstd":
		c.id, c.level = codecZstd, int(zstd.SpeedDefault)
	case "zstd-better":
		c.id, c.level = codecZstd, int(zstd.SpeedBetterCompression)
	case "zstd-best":
		c.id, c.level = codecZstd, int(zstd.SpeedBestCompression)
	default:
		return c, fmt.Errorf("chunkstore: unknown codec %q (want one of %s)", s, strings.Join(Codecs, ", "))
	}
	return c, nil
}

// validCodecByte reports whether b is a codec byte this version defines.
func validCodecByte(b byte) bool {
	switch b {
	case codecNone, codecS2, codecZstd, codecS2 | codecShuffle, codecZstd | codecShuffle:
		return true
	}
	return false
}

func align8(n int64) int64 { return (n + 7) &^ 7 }

// ---- header and footer ----

func appendHeader(dst []byte, v FormatVersion) []byte {
	dst = append(dst, Magic...)
	return append(dst, byte(v), 0, 0, 0)
}

// decodeHeader checks an 8-byte segment header and returns its version.
func decodeHeader(b []byte) (FormatVersion, error) {
	if len(b) < headerSize {
		return 0, errors.New("truncated header")
	}
	if string(b[:4]) != Magic {
		return 0, fmt.Errorf("bad header magic %q", b[:4])
	}
	if b[5] != 0 || b[6] != 0 || b[7] != 0 {
		return 0, errors.New("non-zero header padding")
	}
	return FormatVersion(b[4]), nil
}

// footer is the decoded fixed-size footer (FORMAT.md "Footer").
type footer struct {
	indexOffset uint64
	indexLength uint64
	firstChunk  uint32
	chunks      uint32
	columns     uint32
	indexCRC    uint32
	version     FormatVersion
}

func appendFooter(dst []byte, f footer) []byte {
	var b [footerSize]byte
	le := binary.LittleEndian
	le.PutUint64(b[0:], f.indexOffset)
	le.PutUint64(b[8:], f.indexLength)
	le.PutUint32(b[16:], f.firstChunk)
	le.PutUint32(b[20:], f.chunks)
	le.PutUint32(b[24:], f.columns)
	le.PutUint32(b[28:], f.indexCRC)
	// b[32:36] reserved, zero
	le.PutUint32(b[36:], crc32c(b[:36]))
	b[40] = byte(f.version)
	copy(b[44:], Magic)
	return append(dst, b[:]...)
}

// decodeFooter checks the magic number, the version and the footer's own
// checksum. A version outside the supported range is reported with
// errVersionFooter so the caller can wrap ErrVersion.
func decodeFooter(b []byte) (footer, error) {
	var f footer
	if len(b) != footerSize {
		return f, errors.New("truncated footer")
	}
	if string(b[44:48]) != Magic {
		return f, fmt.Errorf("bad footer magic %q (truncated or not a segment file)", b[44:48])
	}
	le := binary.LittleEndian
	if got, want := le.Uint32(b[36:]), crc32c(b[:36]); got != want {
		return f, fmt.Errorf("footer checksum mismatch (stored %08x, computed %08x)", got, want)
	}
	if b[41] != 0 || b[42] != 0 || b[43] != 0 || le.Uint32(b[32:]) != 0 {
		return f, errors.New("non-zero footer padding")
	}
	f.indexOffset = le.Uint64(b[0:])
	f.indexLength = le.Uint64(b[8:])
	f.firstChunk = le.Uint32(b[16:])
	f.chunks = le.Uint32(b[20:])
	f.columns = le.Uint32(b[24:])
	f.indexCRC = le.Uint32(b[28:])
	f.version = FormatVersion(b[40])
	return f, nil
}

// ---- index ----

// entry locates one block: the index's column entry.
type entry struct {
	offset    int64
	storedLen uint32
	rawLen    uint32
	crc       uint32
	codec     byte
}

// chunkIndex is one chunk's record in the index.
type chunkIndex struct {
	rows    uint32
	entries []entry // one per column
}

func indexLength(chunks, columns int) int64 {
	return int64(chunks) * (chunkRecordSize + entrySize*int64(columns))
}

func appendChunkIndex(dst []byte, c chunkIndex) []byte {
	le := binary.LittleEndian
	dst = le.AppendUint32(dst, c.rows)
	dst = le.AppendUint32(dst, 0)
	for _, e := range c.entries {
		dst = le.AppendUint64(dst, uint64(e.offset))
		dst = le.AppendUint32(dst, e.storedLen)
		dst = le.AppendUint32(dst, e.rawLen)
		dst = le.AppendUint32(dst, e.crc)
		dst = append(dst, e.codec, 0, 0, 0)
	}
	return dst
}

// indexLayout says what a segment's index must describe.
type indexLayout struct {
	chunks    int
	columns   int
	chunkRows int   // rows of every chunk but possibly the store's last
	lastRows  int   // rows of the segment's last chunk
	dataEnd   int64 // index offset: where the blocks must end
}

// indexError is a problem found in an index, with the chunk (relative to the
// segment) and column it concerns (-1 if none).
type indexError struct {
	chunk, column int
	offset        int64
	msg           string
}

func (e *indexError) Error() string { return e.msg }

// decodeIndex parses and checks a segment index against the layout: record
// sizes, row counts, raw lengths, codec bytes, zero padding, and that the
// blocks tile [headerSize, dataEnd) exactly. It allocates one slice of
// entries for the whole segment.
func decodeIndex(b []byte, l indexLayout) ([]chunkIndex, error) {
	if int64(len(b)) != indexLength(l.chunks, l.columns) {
		return nil, &indexError{-1, -1, 0, fmt.Sprintf("index is %d bytes, want %d for %d chunks of %d columns", len(b), indexLength(l.chunks, l.columns), l.chunks, l.columns)}
	}
	le := binary.LittleEndian
	chunks := make([]chunkIndex, l.chunks)
	all := make([]entry, l.chunks*l.columns)
	next := int64(headerSize)
	p := 0
	for c := range chunks {
		rows := le.Uint32(b[p:])
		want := l.chunkRows
		if c == l.chunks-1 {
			want = l.lastRows
		}
		if int64(rows) != int64(want) {
			return nil, &indexError{c, -1, int64(p), fmt.Sprintf("index says %d rows, manifest implies %d", rows, want)}
		}
		if le.Uint32(b[p+4:]) != 0 {
			return nil, &indexError{c, -1, int64(p + 4), "non-zero reserved field in index"}
		}
		p += chunkRecordSize
		ents := all[c*l.columns : (c+1)*l.columns : (c+1)*l.columns]
		for j := range ents {
			e := entry{
				offset:    int64(le.Uint64(b[p:])),
				storedLen: le.Uint32(b[p+8:]),
				rawLen:    le.Uint32(b[p+12:]),
				crc:       le.Uint32(b[p+16:]),
				codec:     b[p+20],
			}
			bad := func(format string, args ...any) error {
				return &indexError{c, j, int64(p), fmt.Sprintf(format, args...)}
			}
			if b[p+21] != 0 || b[p+22] != 0 || b[p+23] != 0 {
				return nil, bad("non-zero padding in index entry")
			}
			if int64(e.rawLen) != 8*int64(rows) {
				return nil, bad("index raw length %d, want %d (8 × %d rows)", e.rawLen, 8*int64(rows), rows)
			}
			if !validCodecByte(e.codec) {
				return nil, bad("unknown codec byte 0x%02x in index", e.codec)
			}
			if e.codec == codecNone && e.storedLen != e.rawLen {
				return nil, bad("uncompressed block of %d bytes, want %d", e.storedLen, e.rawLen)
			}
			if e.offset != next {
				return nil, bad("block offset %d, want %d (blocks must be contiguous)", e.offset, next)
			}
			next = align8(e.offset + int64(e.storedLen) + trailerSize)
			if next > l.dataEnd {
				return nil, bad("block [%d, %d) runs past the data area (ends at %d)", e.offset, next, l.dataEnd)
			}
			ents[j] = e
			p += entrySize
		}
		chunks[c] = chunkIndex{rows: rows, entries: ents}
	}
	if next != l.dataEnd {
		return nil, &indexError{-1, -1, 0, fmt.Sprintf("blocks end at %d but the index starts at %d", next, l.dataEnd)}
	}
	return chunks, nil
}

// ---- blocks ----

// floatsToBytes writes v as little-endian float64s into dst (len 8*len(v)).
func floatsToBytes(dst []byte, v []float64) {
	_ = dst[:8*len(v)]
	for i, f := range v {
		binary.LittleEndian.PutUint64(dst[8*i:], math.Float64bits(f))
	}
}

// shuffle moves byte b of value r (src[8r+b]) to dst[b*rows+r].
func shuffle(dst, src []byte) {
	rows := len(src) / 8
	_ = dst[:len(src)]
	for r := 0; r < rows; r++ {
		s := src[8*r : 8*r+8]
		dst[r] = s[0]
		dst[rows+r] = s[1]
		dst[2*rows+r] = s[2]
		dst[3*rows+r] = s[3]
		dst[4*rows+r] = s[4]
		dst[5*rows+r] = s[5]
		dst[6*rows+r] = s[6]
		dst[7*rows+r] = s[7]
	}
}

// unshuffle inverts shuffle.
func unshuffle(dst, src []byte) {
	rows := len(src) / 8
	_ = dst[:len(src)]
	p0, p1, p2, p3 := src[0:rows], src[rows:2*rows], src[2*rows:3*rows], src[3*rows:4*rows]
	p4, p5, p6, p7 := src[4*rows:5*rows], src[5*rows:6*rows], src[6*rows:7*rows], src[7*rows:8*rows]
	for r := range p0 {
		d := dst[8*r : 8*r+8]
		d[0], d[1], d[2], d[3] = p0[r], p1[r], p2[r], p3[r]
		d[4], d[5], d[6], d[7] = p4[r], p5[r], p6[r], p7[r]
	}
}

// encoder compresses blocks. It is safe for concurrent use.
type encoder struct {
	spec codecSpec
	zstd *zstd.Encoder // only for zstd codecs
}

func newEncoder(spec codecSpec, concurrency int) (*encoder, error) {
	e := &encoder{spec: spec}
	if spec.id == codecZstd {
		z, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.EncoderLevel(spec.level)),
			zstd.WithEncoderConcurrency(max(concurrency, 1)),
			zstd.WithEncoderCRC(false), // the block trailer has a CRC
		)
		if err != nil {
			return nil, err
		}
		e.zstd = z
	}
	return e, nil
}

func (e *encoder) close() {
	if e.zstd != nil {
		e.zstd.Close()
	}
}

// shuffleFor says whether to byte-shuffle a block holding v.
func (e *encoder) shuffleFor(v []float64) bool {
	if e.spec.auto {
		return shuffleHelps(v)
	}
	return e.spec.shuffle
}

// shuffleHelps reports whether every value is an integer or an exact
// float32: the columns whose high bytes repeat, which byte-shuffling
// compresses 1.2–1.7× better (bench/RESULTS.md), where rounded decimals
// compress 2× worse.
func shuffleHelps(v []float64) bool {
	for _, x := range v {
		if x != math.Trunc(x) && float64(float32(x)) != x {
			return false
		}
	}
	return true
}

// encodeBlock compresses raw (the little-endian float64 bytes of one column)
// with the encoder's fixed shuffle setting; see encode.
func (e *encoder) encodeBlock(dst, raw, scratch []byte) ([]byte, uint32) {
	return e.encode(dst, raw, scratch, e.spec.shuffle)
}

// encode compresses raw, byte-shuffled first if shuffle is set, and
// appends payload, codec byte and CRC32C to dst[:0], returning it along
// with the CRC. scratch is used for the shuffle and must have len(raw) bytes.
// The result is a pure function of raw, the codec and shuffle.
func (e *encoder) encode(dst, raw, scratch []byte, shuffled bool) ([]byte, uint32) {
	shuffled = shuffled && e.spec.id != codecNone
	src := raw
	if shuffled {
		shuffle(scratch[:len(raw)], raw)
		src = scratch[:len(raw)]
	}
	dst = dst[:0]
	switch e.spec.id {
	case codecNone:
		dst = append(dst, src...)
	case codecS2:
		n := s2.MaxEncodedLen(len(src))
		if cap(dst) < n {
			dst = make([]byte, 0, n+trailerSize)
		}
		var out []byte
		switch e.spec.level {
		case 0:
			out = s2.Encode(dst[:n], src)
		case 1:
			out = s2.EncodeBetter(dst[:n], src)
		default:
			out = s2.EncodeBest(dst[:n], src)
		}
		dst = dst[:len(out)] // s2 wrote into dst's backing array
	case codecZstd:
		dst = e.zstd.EncodeAll(src, dst)
	}
	codec := e.spec.id
	if shuffled {
		codec |= codecShuffle
	}
	dst = append(dst, codec)
	crc := crc32c(dst)
	dst = binary.LittleEndian.AppendUint32(dst, crc)
	return dst, crc
}

// blockError describes why a block failed to verify or decode.
type blockError struct{ msg string }

func (e *blockError) Error() string { return e.msg }

func blockErrorf(format string, args ...any) error {
	return &blockError{fmt.Sprintf(format, args...)}
}

// checkBlock verifies a stored block: b is payload, codec byte and CRC
// (len(b) == e.storedLen + 5), then zero padding up to pad bytes. It checks
// the CRC against both the trailer and the index before anything is decoded.
func checkBlock(b []byte, pad []byte, e entry) error {
	if len(b) != int(e.storedLen)+trailerSize {
		return blockErrorf("truncated block (%d bytes, want %d)", len(b), int(e.storedLen)+trailerSize)
	}
	n := int(e.storedLen)
	stored := binary.LittleEndian.Uint32(b[n+1:])
	got := crc32c(b[:n+1])
	if got != stored || got != e.crc {
		return blockErrorf("checksum mismatch (block %08x, index %08x, computed %08x)", stored, e.crc, got)
	}
	if b[n] != e.codec {
		return blockErrorf("codec byte 0x%02x differs from the index (0x%02x)", b[n], e.codec)
	}
	for _, p := range pad {
		if p != 0 {
			return blockErrorf("non-zero padding after block")
		}
	}
	return nil
}

// decoder decompresses blocks. It is safe for concurrent use: one
// zstd.Decoder is shared through DecodeAll.
type decoder struct {
	zstd *zstd.Decoder
}

// newDecoder returns a decoder for blocks of at most maxRaw bytes. Each
// DecodeAll is also capped at the capacity of its destination, the block's
// raw length. The memory limit has a floor of 1 MiB because zstd frames
// declare a window of at least 1 KiB and the decoder's limit also bounds the
// window.
func newDecoder(maxRaw int) (*decoder, error) {
	z, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(uint64(max(maxRaw, 1<<20))),
		zstd.WithDecodeAllCapLimit(true),
		zstd.WithDecoderLowmem(false),
	)
	if err != nil {
		return nil, err
	}
	return &decoder{zstd: z}, nil
}

func (d *decoder) close() { d.zstd.Close() }

// decodeBlock decodes a verified payload with the given codec byte into raw
// bytes of exactly rawLen. The result is payload itself (codec none) or
// dst[:rawLen]; dst must have capacity for rawLen bytes, and so must scratch
// for shuffled blocks, which are decompressed there and unshuffled into dst.
// It never writes or allocates beyond rawLen bytes of output.
func (d *decoder) decodeBlock(dst, scratch, payload []byte, codec byte, rawLen int) ([]byte, error) {
	if !validCodecByte(codec) {
		return nil, blockErrorf("unknown codec byte 0x%02x", codec)
	}
	shuffled := codec&codecShuffle != 0
	if cap(dst) < rawLen || shuffled && cap(scratch) < rawLen {
		panic("chunkstore: decodeBlock buffers too small")
	}
	target := dst
	if shuffled {
		target = scratch
	}
	var out []byte
	switch codec &^ codecShuffle {
	case codecNone:
		if len(payload) != rawLen {
			return nil, blockErrorf("uncompressed block is %d bytes, want %d", len(payload), rawLen)
		}
		out = payload
	case codecS2:
		n, err := s2.DecodedLen(payload)
		if err != nil {
			return nil, blockErrorf("s2: %v", err)
		}
		if n != rawLen {
			return nil, blockErrorf("s2 block decodes to %d bytes, want %d", n, rawLen)
		}
		out, err = s2.Decode(target[:rawLen], payload)
		if err != nil {
			return nil, blockErrorf("s2: %v", err)
		}
	case codecZstd:
		var err error
		out, err = d.zstd.DecodeAll(payload, target[:0:rawLen])
		if err != nil {
			return nil, blockErrorf("zstd: %v", err)
		}
	}
	if len(out) != rawLen {
		return nil, blockErrorf("block decodes to %d bytes, want %d", len(out), rawLen)
	}
	if shuffled {
		unshuffle(dst[:rawLen], out)
		out = dst[:rawLen]
	}
	return out, nil
}

// scatter writes the little-endian float64s in raw into dst[j], dst[j+stride], …
func scatter(dst []float64, raw []byte, j, stride int) {
	rows := len(raw) / 8
	if rows == 0 {
		return
	}
	_ = dst[j+(rows-1)*stride]
	for r := 0; r < rows; r++ {
		dst[j+r*stride] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*r:]))
	}
}

// tileCols is the number of columns ReadChunk decodes before scattering
// them together into the row-major destination: one pass over the
// destination per tile instead of per column.
const tileCols = 8

// scatterTile writes column raws[t] (little-endian float64s, rows values
// each) into dst[r*stride+j0+t] for every row r.
func scatterTile(dst []float64, raws [][]byte, j0, stride, rows int) {
	n := len(raws)
	if rows == 0 || n == 0 {
		return
	}
	_ = dst[(rows-1)*stride+j0+n-1]
	if n == 1 {
		scatter(dst, raws[0][:8*rows], j0, stride)
		return
	}
	if n == tileCols {
		le := binary.LittleEndian
		a0, a1, a2, a3 := raws[0][:8*rows], raws[1][:8*rows], raws[2][:8*rows], raws[3][:8*rows]
		a4, a5, a6, a7 := raws[4][:8*rows], raws[5][:8*rows], raws[6][:8*rows], raws[7][:8*rows]
		for r := 0; r < rows; r++ {
			o := 8 * r
			row := dst[r*stride+j0 : r*stride+j0+8 : r*stride+j0+8]
			row[0] = math.Float64frombits(le.Uint64(a0[o : o+8]))
			row[1] = math.Float64frombits(le.Uint64(a1[o : o+8]))
			row[2] = math.Float64frombits(le.Uint64(a2[o : o+8]))
			row[3] = math.Float64frombits(le.Uint64(a3[o : o+8]))
			row[4] = math.Float64frombits(le.Uint64(a4[o : o+8]))
			row[5] = math.Float64frombits(le.Uint64(a5[o : o+8]))
			row[6] = math.Float64frombits(le.Uint64(a6[o : o+8]))
			row[7] = math.Float64frombits(le.Uint64(a7[o : o+8]))
		}
		return
	}
	for t := range raws {
		raws[t] = raws[t][:8*rows]
	}
	for r := 0; r < rows; r++ {
		row := dst[r*stride+j0 : r*stride+j0+n]
		o := 8 * r
		for t, raw := range raws {
			row[t] = math.Float64frombits(binary.LittleEndian.Uint64(raw[o : o+8]))
		}
	}
}
