// Package container is the file layout that model files and checkpoints
// share: a magic number and version, JSON metadata, float64 arrays, and
// a trailer with a CRC32C over everything before it. It knows nothing of
// what the metadata means.
package container

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// Model and checkpoint files share one container layout (little-endian):
//
//	offset  size  field
//	0       4     magic ("FKOM" for models, "FKCP" for checkpoints)
//	4       1     format version
//	5       3     zero
//	8       8     H: length of the JSON metadata
//	16      H     JSON metadata (UTF-8); it states the shapes of the arrays
//	16+H    P     zero padding to a multiple of 8
//	…       8·Σ   the float64 arrays, one after another, in the order and
//	              lengths the metadata gives
//	end−16  8     offset of this trailer (= file length − 16)
//	end−8   4     CRC32C (Castagnoli) of every byte before the trailer
//	end−4   4     magic again
//
// The reader checks the trailer, the checksum and the lengths before it
// parses anything, and never allocates more than the file's size.

// Castagnoli is the CRC32C table of the trailer's checksum.
var Castagnoli = crc32.MakeTable(crc32.Castagnoli)

// HeaderSize and TrailerSize are the sizes of the fixed header and trailer.
const (
	HeaderSize  = 16
	TrailerSize = 16
)

// ErrFormat is matched (errors.Is) by every error about a damaged or
// foreign model or checkpoint file; ErrVersion by a file of a format
// version this build does not read.
var (
	ErrFormat  = errors.New("not a valid file")
	ErrVersion = errors.New("unsupported format version")
)

// Write writes a container with the given magic, version, metadata
// (marshalled as JSON) and arrays.
func Write(w io.Writer, magic string, version uint8, meta any, arrays ...[]float64) error {
	js, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	h := crc32.New(Castagnoli)
	mw := io.MultiWriter(w, h)
	var hdr [HeaderSize]byte
	copy(hdr[:4], magic)
	hdr[4] = version
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(js)))
	if _, err := mw.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := mw.Write(js); err != nil {
		return err
	}
	pad := (8 - len(js)%8) % 8
	if _, err := mw.Write(make([]byte, pad)); err != nil {
		return err
	}
	off := int64(HeaderSize + len(js) + pad)
	buf := make([]byte, 0, 1<<16)
	for _, a := range arrays {
		for _, v := range a {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
			if len(buf) == cap(buf) {
				if _, err := mw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		off += int64(8 * len(a))
	}
	if _, err := mw.Write(buf); err != nil {
		return err
	}
	var tr [TrailerSize]byte
	binary.LittleEndian.PutUint64(tr[:8], uint64(off))
	binary.LittleEndian.PutUint32(tr[8:12], h.Sum32())
	copy(tr[12:], magic)
	_, err = w.Write(tr[:])
	return err
}

// Read validates data as a container with the given magic and a
// version in [minV, maxV], and returns its version, metadata and the bytes
// of its arrays.
func Read(data []byte, magic string, minV, maxV uint8) (version uint8, meta, payload []byte, err error) {
	if len(data) < HeaderSize+TrailerSize {
		return 0, nil, nil, fmt.Errorf("%w: %d bytes is too short (truncated?)", ErrFormat, len(data))
	}
	if string(data[:4]) != magic {
		return 0, nil, nil, fmt.Errorf("%w: wrong magic number %q (want %q)", ErrFormat, data[:4], magic)
	}
	tr := data[len(data)-TrailerSize:]
	if string(tr[12:]) != magic || binary.LittleEndian.Uint64(tr[:8]) != uint64(len(data)-TrailerSize) {
		return 0, nil, nil, fmt.Errorf("%w: the trailer is missing or damaged (truncated or extended file)", ErrFormat)
	}
	body := data[:len(data)-TrailerSize]
	if got, want := crc32.Checksum(body, Castagnoli), binary.LittleEndian.Uint32(tr[8:12]); got != want {
		return 0, nil, nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x): the file is corrupt", ErrFormat, want, got)
	}
	version = data[4]
	if version < minV || version > maxV {
		reads := fmt.Sprintf("versions %d–%d", minV, maxV)
		if minV == maxV {
			reads = fmt.Sprintf("version %d", minV)
		}
		if version > maxV {
			return version, nil, nil, fmt.Errorf("%w: format version %d was written by a newer falkon-ooc (this build reads %s); upgrade falkon-ooc", ErrVersion, version, reads)
		}
		return version, nil, nil, fmt.Errorf("%w: format version %d is no longer supported (this build reads %s)", ErrVersion, version, reads)
	}
	h := binary.LittleEndian.Uint64(data[8:16])
	if h > uint64(len(body)-HeaderSize) {
		return version, nil, nil, fmt.Errorf("%w: metadata length %d exceeds the file", ErrFormat, h)
	}
	end := HeaderSize + int(h)
	off := end + (8-end%8)%8
	if off > len(body) {
		return version, nil, nil, fmt.Errorf("%w: metadata padding exceeds the file", ErrFormat)
	}
	return version, data[HeaderSize:end], body[off:], nil
}

// DecodeArrays splits payload into float64 arrays of the given lengths,
// which must account for every byte.
func DecodeArrays(payload []byte, lens ...int) ([][]float64, error) {
	total := 0
	for _, n := range lens {
		if n < 0 || n > len(payload)/8 {
			return nil, fmt.Errorf("%w: array length %d does not fit the file", ErrFormat, n)
		}
		total += n
	}
	if total*8 != len(payload) {
		return nil, fmt.Errorf("%w: the metadata describes %d bytes of arrays, the file holds %d", ErrFormat, total*8, len(payload))
	}
	out := make([][]float64, len(lens))
	r := bytes.NewReader(payload)
	for i, n := range lens {
		out[i] = make([]float64, n)
		if err := binary.Read(r, binary.LittleEndian, out[i]); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrFormat, err)
		}
	}
	return out, nil
}
