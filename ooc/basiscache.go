package ooc

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/precond"
)

// The Nyström basis's file (RunOptions.PrecondCache), little-endian:
//
//	"FKNB" | version u32 = 1 | key [32]byte | M u64 | r u64 |
//	trace f64 | residual f64 | μ f64 | S: r·r × f64 | Q: M·r × f64 | CRC-32C u32
//
// key is basisKey: the file holds the basis of exactly these centres,
// weights, kernel, rank, seed and jitter. The CRC covers every byte
// before it.
const (
	basisMagic   = "FKNB"
	basisVersion = 1
)

// basisKey identifies the Nyström basis a fit builds: everything
// precond.BuildNystrom reads.
func basisKey(cfg Config, cs *centreSample) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "nystrom basis v%d|M=%d|d=%d|rank=%d|seed=%d|jitter=%g|kernel=%v|", basisVersion, cs.m, len(cs.centres)/max(cs.m, 1),
		cfg.PrecondRank, cfg.Seed, cfg.Jitter, cfg.Kernel)
	var b [8]byte
	for _, s := range [][]float64{cs.centres, cs.weights} {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		for _, v := range s {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// writeBasis writes pre's Nyström basis to path (temporary name, fsync,
// rename).
func writeBasis(path string, key [32]byte, pre *precond.Preconditioner) error {
	q, sm, trace, residual, mu := pre.NystromBasis()
	m, r := pre.M(), len(q)/pre.M()
	return fileutil.WriteFile(path, 0o644, func(w io.Writer) error {
		crc := crc32.New(castagnoli)
		bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
		var b [8]byte
		put := func(v uint64) {
			binary.LittleEndian.PutUint64(b[:], v)
			bw.Write(b[:])
		}
		bw.WriteString(basisMagic)
		binary.LittleEndian.PutUint32(b[:4], basisVersion)
		bw.Write(b[:4])
		bw.Write(key[:])
		put(uint64(m))
		put(uint64(r))
		put(math.Float64bits(trace))
		put(math.Float64bits(residual))
		put(math.Float64bits(mu))
		for _, s := range [][]float64{sm, q} {
			for _, v := range s {
				put(math.Float64bits(v))
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		binary.LittleEndian.PutUint32(b[:4], crc.Sum32())
		_, err := w.Write(b[:4])
		return err
	})
}

// errBasisStale is readBasis's answer for a file that holds another
// fit's basis.
var errBasisStale = errors.New("it holds the basis of other centres or settings")

// readBasis reads the Nyström basis at path for a fit of M centres with
// this key, checking its checksum as it streams: Q (M × r) and S (r × r). Any
// mismatch or damage is an error naming what is wrong; the caller then
// builds the basis afresh.
func readBasis(path string, key [32]byte, m int) (q, sm []float64, trace, residual, mu float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, 0, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, 0, 0, 0, err
	}
	crc := crc32.New(castagnoli)
	br := bufio.NewReaderSize(f, 1<<20)
	head := make([]byte, 4+4+32+8+8+8+8+8)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, nil, 0, 0, 0, fmt.Errorf("truncated header: %w", err)
	}
	crc.Write(head)
	if string(head[:4]) != basisMagic {
		return nil, nil, 0, 0, 0, errors.New("not a Nyström basis file (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(head[4:8]); v != basisVersion {
		return nil, nil, 0, 0, 0, fmt.Errorf("version %d, want %d", v, basisVersion)
	}
	if [32]byte(head[8:40]) != key {
		return nil, nil, 0, 0, 0, errBasisStale
	}
	fm, r := binary.LittleEndian.Uint64(head[40:48]), binary.LittleEndian.Uint64(head[48:56])
	if fm != uint64(m) || r == 0 || r > uint64(m) {
		return nil, nil, 0, 0, 0, fmt.Errorf("M = %d and rank %d in the header, want M = %d", fm, r, m)
	}
	if want := int64(len(head)) + 8*int64(r)*int64(uint64(m)+r) + 4; st.Size() != want {
		return nil, nil, 0, 0, 0, fmt.Errorf("%d bytes, want %d", st.Size(), want)
	}
	trace = math.Float64frombits(binary.LittleEndian.Uint64(head[56:64]))
	residual = math.Float64frombits(binary.LittleEndian.Uint64(head[64:72]))
	mu = math.Float64frombits(binary.LittleEndian.Uint64(head[72:80]))
	sm, q = make([]float64, r*r), make([]float64, uint64(m)*r)
	buf := make([]byte, 1<<20)
	for _, s := range [][]float64{sm, q} {
		for i := 0; i < len(s); {
			n := min(len(buf)/8, len(s)-i)
			if _, err := io.ReadFull(br, buf[:8*n]); err != nil {
				return nil, nil, 0, 0, 0, fmt.Errorf("truncated: %w", err)
			}
			crc.Write(buf[:8*n])
			for j := range n {
				s[i+j] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*j:]))
			}
			i += n
		}
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return nil, nil, 0, 0, 0, fmt.Errorf("truncated checksum: %w", err)
	}
	if binary.LittleEndian.Uint32(tail[:]) != sum {
		return nil, nil, 0, 0, 0, errors.New("checksum mismatch: the file is damaged")
	}
	return q, sm, trace, residual, mu, nil
}
