package chunkstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// smallStore writes a store of 100 rows, 2 features, 1 target, chunks of 16
// rows, in at least two segments, and returns its directory and data.
func smallStore(t testing.TB, codec string) (string, [][]float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(10, 11))
	cols := testData(rng, 100, 3)
	dir := filepath.Join(t.TempDir(), "store")
	writeStore(t, dir, cols, 2, Options{ChunkRows: 16, Codec: codec, Workers: 2, SegmentBytes: 600}, 100)
	return dir, cols
}

// modify rewrites dir/name through f.
func modify(t testing.TB, dir, name string, f func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readAll opens dir and reads and verifies every chunk, returning the first
// error.
func readAll(dir string) error {
	r, err := Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	return readAllReader(r)
}

func readAllReader(r *Reader) error {
	for i := range r.NumChunks() {
		x := make([]float64, r.ChunkRows(i)*r.Dim())
		y := make([]float64, r.ChunkRows(i)*r.NumTargets())
		if err := r.ReadChunk(context.Background(), i, x, y); err != nil {
			return err
		}
	}
	return r.Verify(context.Background())
}

// wantCorrupt checks that err is a *CorruptError matching ErrCorrupt whose
// message is exactly want.
func wantCorrupt(t *testing.T, err error, want string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v (%T), want a *CorruptError", err, err)
	}
	if err.Error() != want {
		t.Fatalf("message:\n got  %s\n want %s", err, want)
	}
}

func TestCorruptionMessages(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		change func(b []byte) []byte
		want   string // message after "chunkstore: corrupt store DIR: "
	}{
		{"truncated segment", "segment-000000.dat", func(b []byte) []byte { return b[:len(b)-10] },
			"segment-000000.dat: segment is %d bytes, manifest says %d (truncated or replaced?)"},
		{"bad header magic", "segment-000000.dat", func(b []byte) []byte { b[0] = 'X'; return b },
			`segment-000000.dat offset 0: bad header magic "XOOC"`},
		{"bad footer magic", "segment-000000.dat", func(b []byte) []byte { b[len(b)-1] = 'X'; return b },
			`segment-000000.dat offset %d: bad footer magic "FOOX" (truncated or not a segment file)`},
		{"flipped footer byte", "segment-000000.dat", func(b []byte) []byte { b[len(b)-footerSize+20] ^= 1; return b },
			"segment-000000.dat offset %d: footer checksum mismatch"},
		{"flipped index byte", "segment-000000.dat", func(b []byte) []byte { b[len(b)-footerSize-3] ^= 1; return b },
			"segment-000000.dat offset %d: index checksum mismatch"},
		{"flipped block byte", "segment-000000.dat", func(b []byte) []byte { b[headerSize+3] ^= 0x40; return b },
			`segment-000000.dat chunk 0 column "x0": checksum mismatch`},
		{"flipped block byte in later chunk", "segment-000001.dat", func(b []byte) []byte {
			// the second column of the segment's first chunk
			off := binary.LittleEndian.Uint64(b[len(b)-footerSize:]) // index offset
			e := b[off+chunkRecordSize+entrySize:]
			b[binary.LittleEndian.Uint64(e)+2] ^= 0x01
			return b
		}, `segment-000001.dat chunk %d column "x1": checksum mismatch`},
		{"missing segment", "segment-000001.dat", nil, "segment-000001.dat: segment file missing"},
		{"manifest edited", "meta.json", func(b []byte) []byte { return bytes.Replace(b, []byte(`"x0"`), []byte(`"y9"`), 1) },
			"meta.json: manifest checksum mismatch"},
		{"manifest not JSON", "meta.json", func(b []byte) []byte { return b[:len(b)/2] },
			"meta.json: invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := smallStore(t, "zstd")
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			m := r.Manifest()
			seg1First := m.Segments[1].FirstChunk
			size0 := m.Segments[0].Bytes
			r.Close()
			if tt.change == nil {
				os.Remove(filepath.Join(dir, tt.file))
			} else {
				modify(t, dir, tt.file, tt.change)
			}
			err = readAll(dir)
			want := "chunkstore: corrupt store " + dir + ": " + tt.want
			switch tt.name {
			case "truncated segment":
				want = strings.Replace(want, "%d", itoa(size0-10), 1)
				want = strings.Replace(want, "%d", itoa(size0), 1)
			case "bad footer magic", "flipped footer byte":
				want = strings.Replace(want, "%d", itoa(size0-footerSize), 1)
			case "flipped index byte":
				want = strings.Replace(want, "%d", itoa(size0-footerSize-indexLength(m.Segments[0].Chunks, 3)), 1)
			case "flipped block byte in later chunk":
				want = strings.Replace(want, "%d", itoa(int64(seg1First)), 1)
			}
			if err == nil {
				t.Fatal("no error")
			}
			// Checksum messages go on with the values; compare the prefix.
			if strings.HasSuffix(want, "mismatch") || strings.HasSuffix(want, "invalid JSON") {
				if !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("message:\n got  %s\n want %s…", err, want)
				}
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%v does not match ErrCorrupt", err)
				}
				return
			}
			wantCorrupt(t, err, want)
		})
	}
}

func itoa(n int64) string { return strconvI(n) }

func TestCorruptErrorFields(t *testing.T) {
	dir, _ := smallStore(t, "none")
	// Column x0 of chunk 0 is 16 values = 128 bytes + 5 trailer + 3 pad
	// at offset 8, so byte 141 is padding and column x1 starts at 144.
	modify(t, dir, "segment-000000.dat", func(b []byte) []byte { b[144+5] ^= 0xff; return b })
	err := readAll(dir)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want *CorruptError", err)
	}
	if ce.Path != dir || ce.File != "segment-000000.dat" || ce.Chunk != 0 || ce.Column != "x1" || ce.Offset != 144 {
		t.Fatalf("CorruptError = %+v", *ce)
	}
	modify(t, dir, "segment-000000.dat", func(b []byte) []byte { b[144+5] ^= 0xff; b[141] = 1; return b })
	wantCorrupt(t, readAll(dir), "chunkstore: corrupt store "+dir+`: segment-000000.dat chunk 0 column "x0": non-zero padding after block`)
}

func TestManifestVersion(t *testing.T) {
	for _, v := range []int{4, 0} {
		dir, _ := smallStore(t, "zstd")
		modify(t, dir, "meta.json", func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"format_version": 1,`), []byte(`"format_version": `+itoa(int64(v))+`,`), 1)
		})
		_, err := Open(dir)
		if !errors.Is(err, ErrVersion) {
			t.Fatalf("v%d: got %v, want ErrVersion", v, err)
		}
		want := "chunkstore: unsupported format version: store " + dir + " was written by a newer falkon-ooc (format version 4; this build reads versions 1–3); upgrade falkon-ooc"
		if v == 0 {
			want = "chunkstore: unsupported format version: store " + dir + " has format version 0, which this build no longer reads (it reads versions 1–3)"
		}
		if err.Error() != want {
			t.Fatalf("message:\n got  %s\n want %s", err, want)
		}
	}
}

func TestSegmentVersion(t *testing.T) {
	dir, _ := smallStore(t, "zstd")
	modify(t, dir, "segment-000000.dat", func(b []byte) []byte { b[4] = 4; return b })
	_, err := Open(dir)
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "newer falkon-ooc (format version 4; this build reads versions 1–3)") {
		t.Fatalf("got %v, want ErrVersion naming version 4", err)
	}
}

// TestManifestInconsistent re-signs manifests that disagree with the
// segments, so only the consistency checks can catch them.
func TestManifestInconsistent(t *testing.T) {
	tests := []struct {
		name   string
		change func(m *Manifest)
		want   string
	}{
		{"rows", func(m *Manifest) { m.Rows--; m.Features[0].Count--; m.Features[1].Count--; m.Targets[0].Count-- },
			`segment-000003.dat chunk 6: bad index: index says 4 rows, manifest implies 3`},
		{"chunk rows", func(m *Manifest) { m.ChunkRows = 20; m.Chunks = 5 },
			"meta.json: segment segment-000002.dat holds chunks [4, +2), want them to continue from 4 within 5 chunks"},
		{"count", func(m *Manifest) { m.Targets[0].Count = 7 },
			`meta.json: column "y0": count 7, but the store has 100 rows`},
		{"segment bytes", func(m *Manifest) { m.Segments[1].Bytes += 8 },
			"segment-000001.dat: segment is 904 bytes, manifest says 912 (truncated or replaced?)"},
		{"segment name", func(m *Manifest) { m.Segments[1].Name = "../../etc/passwd" },
			`meta.json: segment 1 is named "../../etc/passwd", want "segment-000001.dat"`},
		{"segment chunks", func(m *Manifest) { m.Segments[0].Chunks++; m.Segments[1].FirstChunk++; m.Segments[1].Chunks-- },
			"segment-000000.dat offset 848: footer says chunks [0, +2) of 3 columns, manifest says [0, +3) of 3"},
		{"store id", func(m *Manifest) { m.StoreID = strings.Repeat("ab", 16) },
			"meta.json: store_id abababababababababababababababab does not match the segments"},
		{"extra column", func(m *Manifest) { m.Targets = append(m.Targets, Column{Name: "z", Type: "bool", Count: 100}) },
			"segment-000000.dat offset 848: footer says chunks [0, +2) of 3 columns, manifest says [0, +2) of 4"},
		{"codec", func(m *Manifest) { m.Codec = "lz4" }, `meta.json: unknown codec "lz4"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := smallStore(t, "zstd")
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			m := *r.Manifest()
			m.Features = append([]Column(nil), m.Features...)
			m.Targets = append([]Column(nil), m.Targets...)
			m.Segments = append([]SegmentInfo(nil), m.Segments...)
			r.Close()
			tt.change(&m)
			b, err := encodeManifest(&m)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644); err != nil {
				t.Fatal(err)
			}
			err = readAll(dir)
			want := "chunkstore: corrupt store " + dir + ": " + tt.want
			if err == nil || !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("got  %v\nwant %s…", err, want)
			}
		})
	}
}

// TestManifestFromOtherStore puts one store's manifest beside another's
// segments of the same shape.
func TestManifestFromOtherStore(t *testing.T) {
	dir1, _ := smallStore(t, "zstd")
	rng := rand.New(rand.NewPCG(99, 99))
	cols := testData(rng, 100, 3)
	dir2 := filepath.Join(t.TempDir(), "other")
	writeStore(t, dir2, cols, 2, Options{ChunkRows: 16, Codec: "none", Workers: 2, SegmentBytes: 600}, 100)
	m2, _ := os.ReadFile(filepath.Join(dir2, ManifestName))
	os.WriteFile(filepath.Join(dir1, ManifestName), m2, 0o644)
	err := readAll(dir1)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("got %v, want ErrCorrupt", err)
	}
	t.Log(err)
}

func TestCreateRefuses(t *testing.T) {
	parent := t.TempDir()
	file := filepath.Join(parent, "file")
	os.WriteFile(file, []byte("data"), 0o644)
	nonStore := filepath.Join(parent, "photos")
	os.Mkdir(nonStore, 0o755)
	os.WriteFile(filepath.Join(nonStore, "cat.jpg"), []byte("meow"), 0o644)
	for _, c := range []struct{ dir, want string }{
		{file, "chunkstore: create " + file + ": " + file + " exists and is not a chunk store (a file); refusing to replace it"},
		{nonStore, "chunkstore: create " + nonStore + ": " + nonStore + " exists and is not a chunk store (a non-empty directory without meta.json); refusing to replace it"},
	} {
		_, err := Create(c.dir, specs("x", 1), nil, Options{})
		if err == nil || err.Error() != c.want {
			t.Fatalf("got  %v\nwant %s", err, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(nonStore, "cat.jpg")); string(b) != "meow" {
		t.Fatal("non-store directory was touched")
	}
	assertNoTemp(t, parent)
	bad := []struct {
		f, tg []ColumnSpec
		opt   Options
		want  string
	}{
		{nil, nil, Options{}, "no feature columns"},
		{[]ColumnSpec{{"a", "float64"}, {"a", "int8"}}, nil, Options{}, `duplicate column "a"`},
		{[]ColumnSpec{{"a", "string"}}, nil, Options{}, `column "a": unknown source type "string"`},
		{[]ColumnSpec{{"", "float64"}}, nil, Options{}, "empty column name"},
		{specs("x", 1), nil, Options{ChunkRows: -1}, "chunk rows -1 out of range"},
		{specs("x", 1), nil, Options{Codec: "gzip"}, `unknown codec "gzip"`},
		{specs("x", 1), nil, Options{Codec: "none+shuffle"}, `codec "none+shuffle": shuffle needs a compressor`},
	}
	for _, c := range bad {
		_, err := Create(filepath.Join(parent, "new"), c.f, c.tg, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	assertNoTemp(t, parent)
}

func assertNoTemp(t *testing.T, parent string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(parent, ".*"))
	if len(m) != 0 {
		t.Fatalf("temporary files left behind: %v", m)
	}
}

func TestAppendErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	w, err := Create(dir, specs("x", 2), specs("y", 1), Options{ChunkRows: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Append([][]float64{{1, 2}, {3, 4}, {5, 6}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cols [][]float64
		want string
	}{
		{[][]float64{{1}, {2}}, "chunkstore: append: 2 columns, want 3 (2 features + 1 targets)"},
		{[][]float64{{1}, {2, 3}, {4}}, `chunkstore: append: column "x1" has 2 values, column "x0" has 1`},
		{[][]float64{{1, 2}, {3, math.NaN()}, {5, 6}}, `chunkstore: append: column "x1" row 1 (store row 3): value NaN is not finite`},
		{[][]float64{{1, 2}, {3, 4}, {math.Inf(-1), 6}}, `chunkstore: append: column "y0" row 0 (store row 2): value -Inf is not finite`},
	} {
		if err := w.Append(c.cols); err == nil || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
	if w.Rows() != 2 {
		t.Fatalf("rejected appends changed Rows to %d", w.Rows())
	}
	if w.Manifest() != nil {
		t.Fatal("Manifest before Close is not nil")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if m := w.Manifest(); m == nil || m.Rows != 2 || len(m.StoreID) != 32 || m.Features[1].Mean != 3.5 {
		t.Fatalf("Manifest after Close = %+v", m)
	}
	if err := w.Append([][]float64{{1}, {2}, {3}}); err != ErrClosed {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); err != ErrClosed {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort after Close: %v, want nil", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
		t.Fatalf("Abort after Close removed the store: %v", err)
	}
}

func TestReadAfterClose(t *testing.T) {
	dir, _ := smallStore(t, "zstd")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, r.ChunkRows(0)*r.Dim())
	if err := r.ReadChunk(context.Background(), 0, x, nil); err != ErrClosed {
		t.Fatalf("ReadChunk after Close: %v, want ErrClosed", err)
	}
	if err := r.ReadColumns(context.Background(), 0, []int{0}, [][]float64{make([]float64, r.ChunkRows(0))}); err != ErrClosed {
		t.Fatalf("ReadColumns after Close: %v, want ErrClosed", err)
	}
	if err := r.Verify(context.Background()); err != ErrClosed {
		t.Fatalf("Verify after Close: %v, want ErrClosed", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestReadChunkArgs(t *testing.T) {
	dir, _ := smallStore(t, "zstd")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	x := make([]float64, 16*2)
	for _, c := range []struct {
		i    int
		x, y []float64
		want string
	}{
		{-1, x, nil, "chunkstore: read chunk -1: out of range [0, 7)"},
		{7, x, nil, "chunkstore: read chunk 7: out of range [0, 7)"},
		{0, x[:5], nil, "chunkstore: read chunk 0: len(x) = 5, want 16 rows × 2 features"},
		{0, x, make([]float64, 3), "chunkstore: read chunk 0: len(y) = 3, want 16 rows × 1 targets"},
	} {
		if err := r.ReadChunk(ctx, c.i, c.x, c.y); err == nil || err.Error() != c.want {
			t.Errorf("got  %v\nwant %s", err, c.want)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := r.ReadChunk(cctx, 0, x, nil); err != context.Canceled {
		t.Fatalf("cancelled: %v", err)
	}
	if r.ChunkRows(-1) != 0 || r.ChunkRows(7) != 0 || r.ChunkRows(6) != 4 {
		t.Fatal("ChunkRows out of range or last chunk wrong")
	}
}

func TestOpenNotAStore(t *testing.T) {
	parent := t.TempDir()
	_, err := Open(filepath.Join(parent, "missing"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing dir: %v", err)
	}
	want := "chunkstore: open " + parent + ": not a chunk store (no meta.json; an interrupted ingest leaves none)"
	if _, err := Open(parent); err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}

func strconvI(n int64) string { return strconv.FormatInt(n, 10) }

func TestCodecs(t *testing.T) {
	for _, c := range Codecs {
		if err := CheckCodec(c); err != nil {
			t.Errorf("listed codec %q rejected: %v", c, err)
		}
	}
	for _, c := range []string{"", "zstd"} {
		if err := CheckCodec(c); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
	for _, c := range []string{"none+shuffle", "lz4", "zstd+", "+shuffle", "ZSTD"} {
		if CheckCodec(c) == nil {
			t.Errorf("%q accepted", c)
		}
	}
}

// TestVerifyLowestChunk corrupts two chunks and checks that the parallel
// Verify always reports the lower one.
func TestVerifyLowestChunk(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	cols := testData(rng, 2000, 2)
	dir := filepath.Join(t.TempDir(), "s")
	writeStore(t, dir, cols, 2, Options{ChunkRows: 10, Codec: "none"}, 2000)
	r0, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	e5, e150 := r0.chunks[5].ci.entries[1], r0.chunks[150].ci.entries[0]
	r0.Close()
	modify(t, dir, segmentName(0), func(b []byte) []byte {
		b[e5.offset+3] ^= 1
		b[e150.offset+3] ^= 1
		return b
	})
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 20 {
		err := r.Verify(context.Background())
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Chunk != 5 || ce.Column != "x1" {
			t.Fatalf("Verify = %v, want chunk 5 column x1", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Verify(ctx); err != context.Canceled {
		t.Fatalf("cancelled Verify = %v", err)
	}
}

// TestVerifyRange re-signs a manifest whose Max is below the data: only
// Verify's range check can see it.
func TestVerifyRange(t *testing.T) {
	dir, cols := smallStore(t, "zstd")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := *r.Manifest()
	m.Features = append([]Column(nil), m.Features...)
	r.Close()
	m.Features[1].Max = 3 // column x1 holds integers 0–6
	b, err := encodeManifest(&m)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644)
	r, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first := 0
	for first < len(cols[1]) && cols[1][first] <= 3 {
		first++
	}
	err = r.Verify(context.Background())
	want := "chunkstore: corrupt store " + dir + `: segment-000000.dat chunk ` + itoa(int64(first/16)) + ` column "x1": row ` + itoa(int64(first%16)) + ": value " + strconv.FormatFloat(cols[1][first], 'g', -1, 64) + " outside the manifest's range [0, 3]"
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
