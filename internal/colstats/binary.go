package colstats

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// AppendBinary appends s in a form UnmarshalBinary reads back exactly (every
// float64 bit for bit, the distinct values sorted), so that statistics
// computed on another machine merge as if computed here.
func (s *Stats) AppendBinary(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(s.n))
	for _, v := range []float64{s.shift, s.mean, s.m2, s.min, s.max} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(int32(s.exp)))
	var flags byte
	if s.integral {
		flags |= 1
	}
	if s.overflow {
		flags |= 2
	}
	b = append(b, flags)
	keys := make([]uint64, 0, len(s.distinct))
	for k := range s.distinct {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(keys)))
	for _, k := range keys {
		b = binary.LittleEndian.AppendUint64(b, k)
	}
	return b
}

var errShort = errors.New("colstats: truncated statistics")

// UnmarshalBinary sets s to the statistics AppendBinary wrote at the start
// of b and returns the bytes after them.
func (s *Stats) UnmarshalBinary(b []byte) ([]byte, error) {
	const head = 8 + 5*8 + 4 + 1 + 2
	if len(b) < head {
		return nil, errShort
	}
	*s = New()
	s.n = int64(binary.LittleEndian.Uint64(b))
	f := func(i int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8+8*i:])) }
	s.shift, s.mean, s.m2, s.min, s.max = f(0), f(1), f(2), f(3), f(4)
	s.exp = int(int32(binary.LittleEndian.Uint32(b[48:])))
	flags := b[52]
	s.integral, s.overflow = flags&1 != 0, flags&2 != 0
	k := int(binary.LittleEndian.Uint16(b[53:]))
	b = b[head:]
	if s.n < 0 || k > MaxDistinct || len(b) < 8*k || s.exp < -maxScaleExp || s.exp > maxScaleExp {
		return nil, errors.New("colstats: invalid statistics")
	}
	for i := range k {
		s.distinct[binary.LittleEndian.Uint64(b[8*i:])] = struct{}{}
	}
	return b[8*k:], nil
}
