package chunkstore

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chunkBytes returns the bytes of every chunk's blocks (trailers and
// padding included), in chunk order: equal for two stores exactly when
// their chunks are.
func chunkBytes(t *testing.T, dir string) [][]byte {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := make([][]byte, len(r.chunks))
	for i, c := range r.chunks {
		b := make([]byte, c.end-c.start)
		if _, err := r.segs[c.seg].r.ReadAt(b, c.start); err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestPartsMatchWriter writes the same rows with one Writer and as parts
// cut at chunk boundaries (one of them empty), and checks that Assemble's
// store has the same chunks, bit for bit, and the same manifest but for
// the segments, the store ID (over offsets within segments) and the time.
func TestPartsMatchWriter(t *testing.T) {
	const rows, chunkRows = 1000, 64
	rng := rand.New(rand.NewPCG(1, 2))
	cols := make([][]float64, 4)
	for j := range cols {
		cols[j] = make([]float64, rows)
		for i := range cols[j] {
			switch j {
			case 0:
				cols[j][i] = 1e9 + rng.Float64()
			case 1:
				cols[j][i] = float64(rng.IntN(5))
			case 2:
				cols[j][i] = float64(float32(rng.NormFloat64()))
			default:
				cols[j][i] = rng.Float64() * 3
			}
		}
	}
	feats := []ColumnSpec{{"a", "float64"}, {"b", "int32"}, {"c", "float32"}}
	targs := []ColumnSpec{{"w", "float64"}}
	opt := Options{ChunkRows: chunkRows, Weight: "w", Workers: 3, SegmentBytes: 4000, Created: fixedTime,
		Sources: []SourceFile{{Path: "x", Size: 1, ModTime: fixedTime, Rows: rows}},
		InputColumns: []InputColumn{{Name: "a", Type: "double", Role: RoleFeature}, {Name: "b", Type: "int32", Role: RoleFeature},
			{Name: "c", Type: "float", Role: RoleFeature}, {Name: "w", Type: "double", Role: RoleWeight}}}
	tmp := t.TempDir()
	one := filepath.Join(tmp, "one")
	w, err := Create(one, feats, targs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < rows; lo += 37 { // appends that do not follow chunks
		hi := min(lo+37, rows)
		if err := w.Append([][]float64{cols[0][lo:hi], cols[1][lo:hi], cols[2][lo:hi], cols[3][lo:hi]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(tmp, "parts")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	shift := []float64{cols[0][0], cols[1][0], cols[2][0], cols[3][0]}
	cuts := []int{0, 3, 3, 9, 16} // chunks per part: 3, 0, 6, 7 (the last one partial)
	var parts []*Part
	for k := range len(cuts) - 1 {
		pw, err := CreatePart(dir, len(parts), cuts[k], feats, targs, opt, shift)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := cuts[k]*chunkRows, min(cuts[k+1]*chunkRows, rows)
		if err := pw.Append([][]float64{cols[0][lo:hi], cols[1][lo:hi], cols[2][lo:hi], cols[3][lo:hi]}); err != nil {
			t.Fatal(err)
		}
		p, err := pw.ClosePart()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p) // parts travel as JSON
		p = new(Part)
		if err := json.Unmarshal(b, p); err != nil {
			t.Fatal(err)
		}
		if p.Segment.Chunks > 0 {
			parts = append(parts, p)
		} else if _, err := os.Stat(filepath.Join(dir, p.Segment.Name)); err == nil {
			t.Errorf("an empty part wrote %s", p.Segment.Name)
		}
	}
	m, err := Assemble(dir, feats, targs, opt, parts)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := Open(one)
	if err != nil {
		t.Fatal(err)
	}
	m1 := *r1.Manifest()
	r1.Close()
	if len(m1.Segments) < 2 || len(m.Segments) != 3 {
		t.Fatalf("segments: one writer %d, parts %d; the test wants them to differ", len(m1.Segments), len(m.Segments))
	}
	if m.StoreID == m1.StoreID {
		t.Errorf("same store id %s with different segments", m.StoreID)
	}
	m.Segments, m.StoreID, m.Checksum = m1.Segments, m1.StoreID, m1.Checksum
	a, _ := json.Marshal(m)
	b, _ := json.Marshal(&m1)
	if string(a) != string(b) {
		t.Errorf("manifests differ:\n%s\n%s", a, b)
	}
	c1, c2 := chunkBytes(t, one), chunkBytes(t, dir)
	if len(c1) != len(c2) {
		t.Fatalf("%d chunks against %d", len(c2), len(c1))
	}
	for i := range c1 {
		if string(c1[i]) != string(c2[i]) {
			t.Errorf("chunk %d differs", i)
		}
	}
	r2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if err := r2.Verify(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r2.Manifest().Features[0].Mean; math.Abs(got-(1e9+0.5)) > 0.05 {
		t.Errorf("mean %v", got)
	}
}

func TestAssembleRefuses(t *testing.T) {
	dir := t.TempDir()
	feats := []ColumnSpec{{"a", "float64"}}
	opt := Options{ChunkRows: 4}
	write := func(seg, first, n int) *Part {
		pw, err := CreatePart(dir, seg, first, feats, nil, opt, []float64{0})
		if err != nil {
			t.Fatal(err)
		}
		if err := pw.Append([][]float64{make([]float64, n)}); err != nil {
			t.Fatal(err)
		}
		p, err := pw.ClosePart()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p0, p1 := write(0, 0, 6), write(1, 2, 4) // p0 ends in a partial chunk
	for _, c := range []struct {
		parts []*Part
		want  string
	}{
		{[]*Part{p0, p1}, "part 1: follows a chunk of fewer than 4 rows"},
		{[]*Part{p1}, "part 0: segment segment-000001.dat from chunk 2, want segment-000000.dat from chunk 0"},
	} {
		_, err := Assemble(dir, feats, nil, opt, c.parts)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("got %v, want …%s", err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		t.Error("a refused Assemble wrote the manifest")
	}
}
