package chunkstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchColumn returns n values of one kind of column:
//
//	dec2:      prices, N(50, 20) rounded to 2 decimals
//	dec3:      measurements, lognormal rounded to 3 decimals
//	dec1:      N(50, 20) rounded to 1 decimal
//	int:       small integers 0–99 (ages, counts, labels)
//	int1e6:    integers 0–999 999 (ids, amounts in cents)
//	bool:      0 or 1
//	onehot:    1 with probability 0.1, else 0
//	timestamp: Unix seconds, one row a minute
//	float32:   N(0, 1) values that came from a float32 column
//	random:    uniform random doubles (incompressible mantissas)
func benchColumn(kind string, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]float64, n)
	for i := range v {
		switch kind {
		case "dec2":
			v[i] = math.Round((50+20*rng.NormFloat64())*100) / 100
		case "dec3":
			v[i] = math.Round(math.Exp(rng.NormFloat64())*1000) / 1000
		case "dec1":
			v[i] = math.Round((50+20*rng.NormFloat64())*10) / 10
		case "int":
			v[i] = float64(rng.IntN(100))
		case "int1e6":
			v[i] = float64(rng.IntN(1000000))
		case "bool":
			v[i] = float64(rng.IntN(2))
		case "onehot":
			v[i] = float64(min(rng.IntN(10), 1) ^ 1)
		case "timestamp":
			v[i] = 1.7e9 + float64(60*i+rng.IntN(60))
		case "float32":
			v[i] = float64(float32(rng.NormFloat64()))
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

// BenchmarkCodecAuto compares zstd, zstd+shuffle and zstd+auto (shuffle
// only blocks of integers or float32s) on more kinds of columns.
//
//	go test ./chunkstore -run '^$' -bench 'BenchmarkCodecAuto' -benchtime 0.2s
func BenchmarkCodecAuto(b *testing.B) {
	for _, kind := range []string{"bool", "onehot", "int", "int1e6", "timestamp", "float32", "dec1", "dec2", "dec3", "random"} {
		for _, codec := range []string{"zstd", "zstd+shuffle", "zstd+auto"} {
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
	vals := benchColumn(kind, rows, 1)
	floatsToBytes(raw, vals)
	scratch := make([]byte, len(raw))
	shuffled := enc.shuffleFor(vals)
	blk, crc := enc.encode(nil, raw, scratch, shuffled)
	e := entry{storedLen: uint32(len(blk) - trailerSize), rawLen: uint32(len(raw)), crc: crc, codec: blk[len(blk)-trailerSize]}
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
			out, _ = enc.encode(out, raw, scratch, enc.shuffleFor(vals))
		}
		b.ReportMetric(ratio, "ratio")
	})
}
