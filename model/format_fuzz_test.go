package model

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/internal/container"
)

// sealed returns a model file of the metadata meta (raw bytes, not
// checked) and n float64 zeros, with a valid trailer: what gets past the
// checksum, so that the fuzzer reaches the metadata's validation.
func sealed(meta []byte, n int) []byte {
	var b bytes.Buffer
	var hdr [container.HeaderSize]byte
	copy(hdr[:], magic)
	hdr[4] = Version
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(meta)))
	b.Write(hdr[:])
	b.Write(meta)
	b.Write(make([]byte, (8-len(meta)%8)%8+8*n))
	var tr [container.TrailerSize]byte
	binary.LittleEndian.PutUint64(tr[:8], uint64(b.Len()))
	binary.LittleEndian.PutUint32(tr[8:12], crc32.Checksum(b.Bytes(), container.Castagnoli))
	copy(tr[12:], magic)
	b.Write(tr[:])
	return b.Bytes()
}

// FuzzParseMeta: whatever metadata a checksummed file holds, Parse gives
// an error or a model that predicts (scores, probabilities, standard
// deviations) without a panic.
func FuzzParseMeta(f *testing.F) {
	for _, path := range []string{
		"../ooc/testdata/model_v1_multiclass_f64.fkom",
		"../ooc/testdata/model_v2_regression_std.fkom",
		"../cmd/falkon-ooc/testdata/model_v1_binary.falkon",
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		_, meta, payload, err := container.Read(b, magic, MinVersion, Version)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(meta, uint16(len(payload)/8))
	}
	f.Fuzz(func(t *testing.T, meta []byte, n uint16) {
		m, err := Parse(sealed(meta, int(n)))
		if err != nil {
			return
		}
		var dst Prediction
		x := make([]float64, 3*m.D())
		p := m.NewPredictor()
		want := Want(0)
		if m.Task() != TaskRegression {
			want |= WantProba
		}
		if m.Uncertainty() != nil {
			want |= WantStd
		}
		if err := p.PredictTo(&dst, x, 3, want); err != nil {
			t.Fatalf("a parsed model does not predict: %v", err)
		}
	})
}
