package chunkstore

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// memStore is a store's files in memory.
type memStore struct {
	meta []byte
	segs [][]byte
}

func loadMem(t testing.TB, dir string) memStore {
	t.Helper()
	files := readDir(t, dir)
	ms := memStore{meta: files[ManifestName]}
	for k := 0; ; k++ {
		b, ok := files[segmentName(k)]
		if !ok {
			break
		}
		ms.segs = append(ms.segs, b)
	}
	return ms
}

func (ms memStore) open() (*Reader, error) {
	segs := make([]SegmentData, len(ms.segs))
	for k, b := range ms.segs {
		segs[k] = SegmentData{R: bytes.NewReader(b), Size: int64(len(b))}
	}
	return NewReader(ms.meta, segs)
}

// acceptable reports whether err is how a flipped byte may show.
func acceptable(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce) && errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion)
}

// TestByteFlips flips every byte of a small store's files (two masks per
// byte), through NewReader, and checks that each flip is reported as
// corruption (or a version error) by NewReader, ReadChunk or Verify —
// never a panic, never silently different data.
func TestByteFlips(t *testing.T) {
	for _, codec := range []string{"zstd+auto", "none", "s2+shuffle"} {
		t.Run(codec, func(t *testing.T) {
			dir, _ := smallStore(t, codec)
			ms := loadMem(t, dir)
			r, err := ms.open()
			if err != nil {
				t.Fatal(err)
			}
			if err := readAllReader(r); err != nil {
				t.Fatal(err)
			}
			r.Close()
			rng := rand.New(rand.NewPCG(5, 6))
			files := append([][]byte{ms.meta}, ms.segs...)
			n := 0
			for f, b := range files {
				for p := range b {
					if testing.Short() && p%4 != 0 && p >= headerSize && p < len(b)-footerSize {
						continue // -short: every byte of headers and footers, a quarter of the rest
					}
					for _, mask := range []byte{0x01, byte(rng.IntN(255) + 1)} {
						if testing.Short() && mask != 1 {
							continue
						}
						b[p] ^= mask
						r, err := ms.open()
						if err == nil {
							err = readAllReader(r)
							r.Close()
						}
						b[p] ^= mask
						n++
						if !acceptable(err) {
							t.Fatalf("file %d byte %d ^ %#02x: got %v, want corruption reported", f, p, mask, err)
						}
					}
				}
			}
			t.Logf("%d flips, all detected", n)
		})
	}
}

// TestByteFlipsFiles flips random bytes of the files on disk and reads
// through Open (memory-mapped).
func TestByteFlipsFiles(t *testing.T) {
	dir, _ := smallStore(t, "zstd")
	names := []string{ManifestName}
	for k := 0; ; k++ {
		if _, err := os.Stat(filepath.Join(dir, segmentName(k))); err != nil {
			break
		}
		names = append(names, segmentName(k))
	}
	orig := readDir(t, dir)
	rng := rand.New(rand.NewPCG(7, 8))
	flips := 300
	if testing.Short() {
		flips = 50
	}
	for range flips {
		name := names[rng.IntN(len(names))]
		b := slices.Clone(orig[name])
		p := rng.IntN(len(b))
		b[p] ^= byte(rng.IntN(255) + 1)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		err := readAll(dir)
		if !acceptable(err) {
			t.Fatalf("%s byte %d: got %v, want corruption reported", name, p, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), orig[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := readAll(dir); err != nil {
		t.Fatal(err)
	}
}
