package chunkstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeBlock feeds arbitrary payloads to the block checker and
// decoder. The CRC is computed over the payload so that the fuzzer reaches
// the decompressors; arbitrary bytes must give an error or exactly rawLen
// bytes, never a panic or an allocation beyond rawLen.
func FuzzDecodeBlock(f *testing.F) {
	enc := map[string]*encoder{}
	for _, c := range []string{"none", "s2", "zstd", "zstd+shuffle", "s2+shuffle", "zstd+auto"} {
		spec, _ := parseCodec(c)
		e, err := newEncoder(spec, 1)
		if err != nil {
			f.Fatal(err)
		}
		enc[c] = e
	}
	for _, c := range []string{"none", "s2", "zstd", "zstd+shuffle", "s2+shuffle", "zstd+auto"} {
		raw := make([]byte, 8*40)
		floatsToBytes(raw, benchColumn("dec2", 40, 3))
		blk, _ := enc[c].encodeBlock(nil, raw, make([]byte, len(raw)))
		f.Add(blk[:len(blk)-trailerSize], blk[len(blk)-trailerSize], uint16(40))
	}
	f.Add([]byte{}, byte(0), uint16(0))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd}, codecZstd, uint16(1000))
	dec, err := newDecoder(8 * 4096)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, payload []byte, codec byte, rows uint16) {
		rawLen := 8 * (int(rows) % 4097)
		blk := append(append([]byte(nil), payload...), codec)
		crc := crc32c(blk)
		blk = binary.LittleEndian.AppendUint32(blk, crc)
		e := entry{storedLen: uint32(len(payload)), rawLen: uint32(rawLen), crc: crc, codec: codec}
		if err := checkBlock(blk, nil, e); err != nil {
			t.Fatalf("valid CRC rejected: %v", err)
		}
		dst := make([]byte, rawLen)
		shuf := make([]byte, rawLen)
		out, err := dec.decodeBlock(dst, shuf, payload, codec, rawLen)
		if err == nil && len(out) != rawLen {
			t.Fatalf("decoded %d bytes, want %d", len(out), rawLen)
		}
		// A flipped CRC is always caught.
		blk[len(blk)-1] ^= 1
		if checkBlock(blk, nil, e) == nil {
			t.Fatal("bad CRC accepted")
		}
		// Round trip: the payload as float64s through every codec.
		n := len(payload) / 8
		raw := payload[:8*n]
		vals := make([]float64, n)
		scatter(vals, raw, 0, 1)
		for name, en := range enc {
			b, _ := en.encode(nil, raw, make([]byte, len(raw)), en.shuffleFor(vals))
			got, err := dec.decodeBlock(make([]byte, len(raw)), make([]byte, len(raw)), b[:len(b)-trailerSize], b[len(b)-trailerSize], len(raw))
			if err != nil || !bytes.Equal(got, raw) {
				t.Fatalf("%s round trip of %d values: err %v, equal %v", name, n, err, bytes.Equal(got, raw))
			}
			scatter(vals, got, 0, 1)
			for i, v := range vals {
				if math.Float64bits(v) != binary.LittleEndian.Uint64(raw[8*i:]) {
					t.Fatalf("%s: value %d bits differ", name, i)
				}
			}
		}
	})
}

// FuzzManifest feeds arbitrary bytes to the manifest decoder, and re-signs
// whatever parses so that the consistency checks are reached too.
func FuzzManifest(f *testing.F) {
	for _, b := range fuzzSeedManifests(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"format_version": 1}`))
	f.Add([]byte(`{"format_version": 99}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		decodeManifest("", b)
		var m Manifest
		if json.Unmarshal(b, &m) != nil || m.FormatVersion != 1 {
			return
		}
		signed, err := encodeManifest(&m)
		if err != nil {
			return
		}
		m2, err := decodeManifest("", signed)
		if err == nil && (m2.Rows != m.Rows || m2.Chunks != m.Chunks) {
			t.Fatal("re-signed manifest changed")
		}
	})
}

// FuzzOpen feeds an arbitrary segment file to NewReader as it is, then
// again with its checksums recomputed (resignSegment) under a manifest
// re-signed to match it (size, store_id), so the fuzzer reaches the
// footer, index and layout checks and the decoders, and reads every chunk.
func FuzzOpen(f *testing.F) {
	metas := fuzzSeedManifests(f)
	for k, seg := range fuzzSeedSegments(f) {
		f.Add(metas[k%len(metas)], seg)
	}
	f.Fuzz(func(t *testing.T, meta, seg []byte) {
		segs := []SegmentData{{R: bytes.NewReader(seg), Size: int64(len(seg))}}
		if r, err := NewReader(meta, segs); err == nil {
			readAllReader(r)
			r.Close()
		}
		var m Manifest
		if json.Unmarshal(meta, &m) != nil {
			return
		}
		m.FormatVersion = 1
		seg = resignSegment(seg, len(m.Features)+len(m.Targets))
		segs = []SegmentData{{R: bytes.NewReader(seg), Size: int64(len(seg))}}
		if len(seg) >= footerSize {
			ft, err := decodeFooter(seg[len(seg)-footerSize:])
			if err == nil && ft.indexOffset <= uint64(len(seg)) && ft.indexLength <= uint64(len(seg))-ft.indexOffset {
				m.StoreID = storeID([][]byte{seg[ft.indexOffset : ft.indexOffset+ft.indexLength]})
			}
		}
		m.Segments = []SegmentInfo{{Name: segmentName(0), FirstChunk: 0, Chunks: m.Chunks, Bytes: int64(len(seg))}}
		signed, err := encodeManifest(&m)
		if err != nil {
			return
		}
		r, err := NewReader(signed, segs)
		if err != nil {
			return
		}
		defer r.Close()
		ctx := context.Background()
		for i := range r.NumChunks() {
			x := make([]float64, r.ChunkRows(i)*r.Dim())
			y := make([]float64, r.ChunkRows(i)*r.NumTargets())
			r.ReadChunk(ctx, i, x, y)
		}
		r.Verify(ctx)
	})
}

// fuzzSeedManifests returns the meta.json of small stores of one segment.
func fuzzSeedManifests(f *testing.F) [][]byte {
	var out [][]byte
	for _, s := range fuzzSeedStores(f) {
		out = append(out, s.meta)
	}
	return out
}

func fuzzSeedSegments(f *testing.F) [][]byte {
	var out [][]byte
	for _, s := range fuzzSeedStores(f) {
		out = append(out, s.segs[0])
	}
	return out
}

func fuzzSeedStores(f *testing.F) []memStore {
	var out []memStore
	for k, codec := range []string{"zstd", "none", "s2+shuffle"} {
		cols := [][]float64{benchColumn("dec2", 12, uint64(k)), benchColumn("int", 12, uint64(k))}
		dir := f.TempDir() + "/s"
		writeStore(f, dir, cols, 1, Options{ChunkRows: 5, Codec: codec, Workers: 1}, 12)
		out = append(out, loadMem(f, dir))
	}
	return out
}

// resignSegment returns a copy of seg with its magic number and every
// checksum it can locate recomputed: each block's CRC (in the trailer and
// the index entry, with the index's codec byte set to the block's), the
// index CRC and the footer CRC. Everything else stays as the fuzzer made it.
func resignSegment(seg []byte, ncol int) []byte {
	seg = bytes.Clone(seg)
	n := uint64(len(seg))
	if n < headerSize+footerSize {
		return seg
	}
	le := binary.LittleEndian
	f := seg[n-footerSize:]
	copy(f[44:], Magic)
	ioff, ilen := le.Uint64(f[0:]), le.Uint64(f[8:])
	if ioff <= n-footerSize && ilen <= n-footerSize-ioff {
		idx := seg[ioff : ioff+ilen]
		rec := chunkRecordSize + entrySize*ncol
		for p := 0; ncol > 0 && p+rec <= len(idx); p += rec {
			for j := range ncol {
				e := idx[p+chunkRecordSize+j*entrySize:]
				off, sl := le.Uint64(e), uint64(le.Uint32(e[8:]))
				if off <= ioff && sl+trailerSize <= ioff-off {
					crc := crc32c(seg[off : off+sl+1])
					le.PutUint32(seg[off+sl+1:], crc)
					e[20] = seg[off+sl]
					le.PutUint32(e[16:], crc)
				}
			}
		}
		le.PutUint32(f[28:], crc32c(seg[ioff:ioff+ilen]))
	}
	le.PutUint32(f[36:], crc32c(f[:36]))
	return seg
}

// TestResignSegmentIdentity checks the fuzz helper leaves a valid segment
// unchanged, so FuzzOpen's seeds open.
func TestResignSegmentIdentity(t *testing.T) {
	for _, fx := range fixturesV1 {
		ms := loadMem(t, "testdata/"+fx.name)
		for k, seg := range ms.segs {
			if !bytes.Equal(resignSegment(seg, len(fx.features)+len(fx.targets)), seg) {
				t.Errorf("%s segment %d changed", fx.name, k)
			}
		}
	}
}

// FuzzOpenDir is FuzzOpen through the real directory path: the manifest
// and segment go to files in a directory that Open maps (mmap where
// supported), reads chunk by chunk and verifies. With resign set, the
// segment's checksums and the manifest are re-signed as in FuzzOpen (a
// manifest that is not JSON is replaced by a seed's), so the fuzzer gets
// past them to the footer, index and decoders through the mapping.
//
// Every execution writes both files and calls Open: an earlier version
// returned before writing anything when resign was set and the manifest
// was not JSON, which most mutated inputs are, so most of its counted
// executions never reached the mapping. With FALKON_FUZZ_STATS=PATH set,
// each fuzzing process writes to PATH.<pid>, every 256 executions, how
// many it ran, how many had a manifest that decodes (Open then maps the
// segment), how many opened and how many chunks were read without error.
func FuzzOpenDir(f *testing.F) {
	metas := fuzzSeedManifests(f)
	for k, seg := range fuzzSeedSegments(f) {
		f.Add(metas[k%len(metas)], seg, k%2 == 0)
	}
	root := f.TempDir()
	stats := os.Getenv("FALKON_FUZZ_STATS")
	var execs, mapped, opened, chunks int64
	f.Fuzz(func(t *testing.T, meta, seg []byte, resign bool) {
		dir := filepath.Join(root, "s")
		os.RemoveAll(dir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if resign {
			var m Manifest
			if json.Unmarshal(meta, &m) != nil {
				if err := json.Unmarshal(metas[len(seg)%len(metas)], &m); err != nil {
					t.Fatal(err)
				}
			}
			m.FormatVersion = 1
			seg = resignSegment(seg, len(m.Features)+len(m.Targets))
			if len(seg) >= footerSize {
				ft, err := decodeFooter(seg[len(seg)-footerSize:])
				if err == nil && ft.indexOffset <= uint64(len(seg)) && ft.indexLength <= uint64(len(seg))-ft.indexOffset {
					m.StoreID = storeID([][]byte{seg[ft.indexOffset : ft.indexOffset+ft.indexLength]})
				}
			}
			m.Segments = []SegmentInfo{{Name: segmentName(0), FirstChunk: 0, Chunks: m.Chunks, Bytes: int64(len(seg))}}
			if signed, err := encodeManifest(&m); err == nil {
				meta = signed
			}
		}
		if err := os.WriteFile(filepath.Join(dir, ManifestName), meta, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, segmentName(0)), seg, 0o644); err != nil {
			t.Fatal(err)
		}
		execs++
		if _, err := decodeManifest(dir, meta); err == nil {
			mapped++
		}
		defer func() {
			if stats != "" && execs%256 == 0 {
				os.WriteFile(fmt.Sprintf("%s.%d", stats, os.Getpid()),
					fmt.Appendf(nil, "execs %d manifest-ok %d opened %d chunks-read %d\n", execs, mapped, opened, chunks), 0o644)
			}
		}()
		r, err := Open(dir)
		if err != nil {
			return
		}
		opened++
		defer r.Close()
		ctx := context.Background()
		for i := range r.NumChunks() {
			x := make([]float64, r.ChunkRows(i)*r.Dim())
			y := make([]float64, r.ChunkRows(i)*r.NumTargets())
			if r.ReadChunk(ctx, i, x, y) == nil {
				chunks++
			}
		}
		r.Verify(ctx)
	})
}
