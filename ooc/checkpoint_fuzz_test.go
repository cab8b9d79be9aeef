package ooc

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCheckpoint feeds arbitrary bytes to ReadCheckpoint: an error or a
// checkpoint whose shapes agree, never a panic or a huge allocation; a
// checkpoint read back after WriteFile is the same bit for bit. The seeds
// are a valid checkpoint, cut and flipped.
func FuzzCheckpoint(f *testing.F) {
	dir := f.TempDir()
	seed := &Checkpoint{Fingerprint: "abc", Iteration: 3, M: 2, K: 1, TargetMean: []float64{0.5},
		Beta: []float64{1, 2}, R: []float64{3, 4}, P: []float64{5, 6}, RS: []float64{7}, BN: []float64{8}}
	p := filepath.Join(dir, "seed.ckpt")
	if err := seed.WriteFile(p); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add(b[:len(b)-1])
	flip := bytes.Clone(b)
	flip[len(flip)/3] ^= 0x40
	f.Add(flip)
	f.Add([]byte("FKCP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.ckpt")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := ReadCheckpoint(in)
		if err != nil {
			return
		}
		mk := c.M * c.K
		if len(c.Beta) != mk || len(c.R) != mk || len(c.P) != mk || len(c.RS) != c.K || len(c.BN) != c.K || len(c.TargetMean) != c.K {
			t.Fatalf("shapes disagree: M=%d K=%d beta %d", c.M, c.K, len(c.Beta))
		}
		out := filepath.Join(dir, "out.ckpt")
		if err := c.WriteFile(out); err != nil {
			t.Fatal(err)
		}
		c2, err := ReadCheckpoint(out)
		if err != nil {
			t.Fatalf("re-read: %v", err)
		}
		for i, pair := range [][2][]float64{{c.Beta, c2.Beta}, {c.R, c2.R}, {c.P, c2.P}, {c.RS, c2.RS}, {c.BN, c2.BN}, {c.TargetMean, c2.TargetMean}} {
			for j := range pair[0] {
				if math.Float64bits(pair[0][j]) != math.Float64bits(pair[1][j]) {
					t.Fatalf("array %d [%d] changed in the round trip", i, j)
				}
			}
		}
		if c2.Fingerprint != c.Fingerprint || c2.Iteration != c.Iteration {
			t.Fatal("metadata changed in the round trip")
		}
	})
}
