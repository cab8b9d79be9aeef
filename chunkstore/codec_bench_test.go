package chunkstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchColumn returns n values of one kind of column:
//
//	dec2:   prices, N(50, 20) rounded to 2 decimals
//	dec3:   measurements, lognormal rounded to 3 decimals
//	int:    small integers 0–99 (ages, counts, labels)
//	random: uniform random doubles (incompressible mantissas)
func benchColumn(kind string, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float64, n)
	for i := range v {
		switch kind {
		case "dec2":
			v[i] = math.Round((50+20*rng.NormFloat64())*100) / 100
		case "dec3":
			v[i] = math.Round(math.Exp(rng.NormFloat64())*1000) / 1000
		case "int":
			v[i] = float64(rng.IntN(100))
		case "random":
			v[i] = rng.Float64()
		default:
			panic(kind)
		}
	}
	return v
}

var benchCodecs = []string{
	"none", "s2", "s2-better", "zstd-fastest", "zstd", "zstd-better", "zstd-best",
	"s2+shuffle", "s2-better+shuffle", "zstd-fastest+shuffle", "zstd+shuffle", "zstd-better+shuffle",
}

// BenchmarkCodec measures each codec on each kind of column at 32 Ki rows:
// decode (CRC check + decompress + unshuffle, one goroutine, so MB/s is per
// core) and encode; "ratio" is raw bytes / stored bytes.
//
//	go test ./chunkstore -run '^$' -bench BenchmarkCodec -benchtime 0.3s
func BenchmarkCodec(b *testing.B) {
	for _, kind := range []string{"dec2", "dec3", "int", "random"} {
		for _, codec := range benchCodecs {
			benchCodec(b, kind, codec, DefaultChunkRows)
		}
	}
}

// BenchmarkCodecChunkRows sweeps the chunk size for the default codec.
func BenchmarkCodecChunkRows(b *testing.B) {
	for _, kind := range []string{"dec2", "int", "random"} {
		for _, rows := range []int{1024, 4096, 16384, 32768, 65536, 262144} {
			benchCodec(b, kind, DefaultCodec, rows)
		}
	}
}

func benchCodec(b *testing.B, kind, codec string, rows int) {
	spec, err := parseCodec(codec)
	if err != nil {
		b.Fatal(err)
	}
	enc, err := newEncoder(spec, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer enc.close()
	dec, err := newDecoder(8 * rows)
	if err != nil {
		b.Fatal(err)
	}
	defer dec.close()
	raw := make([]byte, 8*rows)
	floatsToBytes(raw, benchColumn(kind, rows, 1))
	scratch := make([]byte, len(raw))
	blk, crc := enc.encodeBlock(nil, raw, scratch)
	e := entry{storedLen: uint32(len(blk) - trailerSize), rawLen: uint32(len(raw)), crc: crc, codec: spec.byteValue()}
	ratio := float64(len(raw)) / float64(len(blk))
	name := fmt.Sprintf("data=%s/codec=%s/rows=%d", kind, codec, rows)
	b.Run(name+"/decode", func(b *testing.B) {
		dst := make([]byte, len(raw))
		shuf := make([]byte, len(raw))
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if err := checkBlock(blk, nil, e); err != nil {
				b.Fatal(err)
			}
			if _, err := dec.decodeBlock(dst, shuf, blk[:e.storedLen], e.codec, len(raw)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ratio, "ratio")
	})
	b.Run(name+"/encode", func(b *testing.B) {
		out := make([]byte, 0, len(raw)+64)
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			out, _ = enc.encodeBlock(out, raw, scratch)
		}
		b.ReportMetric(ratio, "ratio")
	})
}
