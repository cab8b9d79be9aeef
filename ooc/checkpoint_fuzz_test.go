package ooc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckpoint feeds arbitrary bytes to the checkpoint decoder that
// ReadCheckpoint uses, in memory (writing and fsyncing a file for each
// input once held the fuzzer to 4 inputs a second). With resign set, the
// trailer (offset, CRC32C, magic) is recomputed first, so that mutations
// get past the checksum to the metadata, shape and array checks. It
// checks: an error is a *FileError naming the file and matching ErrFormat
// or ErrVersion, never a panic or an allocation beyond the input's size; a
// checkpoint that decodes has shapes that agree, and encoding it and
// decoding that gives the same checkpoint bit for bit, whose encoding is
// byte for byte the same again.
func FuzzCheckpoint(f *testing.F) {
	seed := &Checkpoint{Fingerprint: "abc", Iteration: 3, M: 2, K: 1, TargetMean: []float64{0.5},
		Beta: []float64{1, 2}, R: []float64{3, 4}, P: []float64{5, 6}, RS: []float64{7}, BN: []float64{8}}
	var buf bytes.Buffer
	if err := seed.encode(&buf); err != nil {
		f.Fatal(err)
	}
	b := buf.Bytes()
	// The file WriteFile writes is the same as encode's bytes.
	p := filepath.Join(f.TempDir(), "seed.ckpt")
	if err := seed.WriteFile(p); err != nil {
		f.Fatal(err)
	}
	if onDisk, err := os.ReadFile(p); err != nil || !bytes.Equal(onDisk, b) {
		f.Fatalf("WriteFile wrote other bytes than encode (%v)", err)
	}
	for _, resign := range []bool{false, true} {
		f.Add(b, resign)
		f.Add(b[:len(b)/2], resign)
		f.Add(b[:len(b)-1], resign)
		flip := bytes.Clone(b)
		flip[len(flip)/3] ^= 0x40
		f.Add(flip, resign)
		f.Add([]byte("FKCP"), resign)
	}
	f.Fuzz(func(t *testing.T, data []byte, resign bool) {
		if resign {
			data = resignContainer(data)
		}
		c, err := decodeCheckpoint("in.ckpt", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != "in.ckpt" || !strings.HasPrefix(err.Error(), "checkpoint file in.ckpt: ") ||
				!(errors.Is(err, ErrFormat) || errors.Is(err, ErrVersion)) {
				t.Fatalf("error %v is not a *FileError naming in.ckpt and matching ErrFormat or ErrVersion", err)
			}
			return
		}
		mk := c.M * c.K
		if len(c.Beta) != mk || len(c.R) != mk || len(c.P) != mk || len(c.RS) != c.K || len(c.BN) != c.K || len(c.TargetMean) != c.K {
			t.Fatalf("shapes disagree: M=%d K=%d beta %d", c.M, c.K, len(c.Beta))
		}
		if 8*(3*mk+2*c.K) > len(data) {
			t.Fatalf("%d values decoded from %d bytes", 3*mk+2*c.K, len(data))
		}
		var out bytes.Buffer
		if err := c.encode(&out); err != nil {
			t.Fatal(err)
		}
		c2, err := decodeCheckpoint("out.ckpt", out.Bytes())
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		for i, pair := range [][2][]float64{{c.Beta, c2.Beta}, {c.R, c2.R}, {c.P, c2.P}, {c.RS, c2.RS}, {c.BN, c2.BN}, {c.TargetMean, c2.TargetMean}} {
			if len(pair[0]) != len(pair[1]) {
				t.Fatalf("array %d: length %d, then %d", i, len(pair[0]), len(pair[1]))
			}
			for j := range pair[0] {
				if math.Float64bits(pair[0][j]) != math.Float64bits(pair[1][j]) {
					t.Fatalf("array %d [%d] changed in the round trip", i, j)
				}
			}
		}
		if c2.Fingerprint != c.Fingerprint || c2.Iteration != c.Iteration || c2.M != c.M || c2.K != c.K {
			t.Fatal("metadata changed in the round trip")
		}
		var again bytes.Buffer
		if err := c2.encode(&again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again.Bytes(), out.Bytes()) {
			t.Fatal("encoding is not stable: a decoded checkpoint encodes to other bytes")
		}
	})
}

// resignContainer returns a copy of data with the container trailer
// (offset, CRC32C of the body, magic) recomputed, when data is long
// enough to have one.
func resignContainer(data []byte) []byte {
	data = bytes.Clone(data)
	if len(data) < containerHeader+containerTrailer {
		return data
	}
	n := len(data) - containerTrailer
	tr := data[n:]
	binary.LittleEndian.PutUint64(tr[:8], uint64(n))
	binary.LittleEndian.PutUint32(tr[8:12], crc32.Checksum(data[:n], castagnoli))
	copy(tr[12:], data[:4])
	return data
}

// TestResignContainerIdentity: the fuzz helper leaves a valid checkpoint
// unchanged, and repairs one whose trailer was damaged.
func TestResignContainerIdentity(t *testing.T) {
	c := &Checkpoint{Fingerprint: "x", M: 1, K: 1, TargetMean: []float64{0}, Beta: []float64{1}, R: []float64{2}, P: []float64{3}, RS: []float64{4}, BN: []float64{5}}
	var buf bytes.Buffer
	if err := c.encode(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if !bytes.Equal(resignContainer(b), b) {
		t.Fatal("resignContainer changed a valid checkpoint")
	}
	bad := bytes.Clone(b)
	bad[20] ^= 1 // in the metadata: the checksum no longer matches
	if _, err := decodeCheckpoint("x", bad); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("damaged checkpoint: %v", err)
	}
	if _, err := decodeCheckpoint("x", resignContainer(bad)); err != nil && strings.Contains(err.Error(), "checksum") {
		t.Fatalf("re-signed checkpoint: %v", err)
	}
}
