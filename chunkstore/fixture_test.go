package chunkstore

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

var update = flag.Bool("update", false, "rewrite the format fixtures under testdata/v1 and testdata/v2 and the fuzz seeds under testdata/fuzz")

// A fixture is a tiny store committed under testdata/<name>. The writer
// must reproduce it byte for byte (Created is fixed) and the reader must
// read it, in every later version too (STYLE.md 6).
type fixture struct {
	name              string
	features, targets []ColumnSpec
	rows              int
	opt               Options
	exactF32          bool // float32 columns hold exact float32 values
}

var fixedTime = time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)

var fixturesV1 = []fixture{
	{
		name:     "v1/zstd",
		features: []ColumnSpec{{"age", "int16"}, {"price", "float64"}},
		targets:  []ColumnSpec{{"label", "bool"}},
		rows:     50,
		opt: Options{ChunkRows: 16, Codec: "zstd", SegmentBytes: 700, Created: fixedTime,
			Sources: []SourceFile{{Path: "data/part-0.parquet", Size: 12345, ModTime: fixedTime.Add(-time.Hour), Rows: 50}}},
	},
	{
		name:     "v1/s2-shuffle",
		features: []ColumnSpec{{"a", "float32"}, {"b", "uint8"}, {"c", "float64"}},
		rows:     20,
		opt:      Options{ChunkRows: 7, Codec: "s2+shuffle", Created: fixedTime},
	},
	{
		name:     "v1/zstd-auto",
		features: []ColumnSpec{{"count", "int32"}, {"ratio", "float32"}, {"amount", "float64"}},
		targets:  []ColumnSpec{{"class", "uint8"}},
		rows:     30,
		opt:      Options{ChunkRows: 12, Codec: "zstd+auto", Created: fixedTime},
		exactF32: true,
	},
	{
		name:     "v1/none",
		features: []ColumnSpec{{"x", "float64"}},
		targets:  []ColumnSpec{{"y1", "float64"}, {"y2", "int32"}},
		rows:     9,
		opt:      Options{ChunkRows: 4, Codec: "none", Created: fixedTime},
	},
}

// fixturesV2 are stores of format version 2: those with a weight column
// (Options.Weight names one of the targets' specs, stored after them).
var fixturesV2 = []fixture{
	{
		name:     "v2/zstd-weight",
		features: []ColumnSpec{{"age", "int16"}, {"price", "float64"}},
		targets:  []ColumnSpec{{"label", "bool"}, {"w", "float64"}},
		rows:     40,
		opt:      Options{ChunkRows: 16, Codec: "zstd", Weight: "w", Created: fixedTime},
	},
}

// fixturesV3 are stores of format version 3: those with an encoding of
// categorical and time columns in the manifest.
var fixturesV3 = []fixture{
	{
		name:     "v3/zstd-encoding",
		features: []ColumnSpec{{"price", "float64"}, {"region=north", "bool"}, {"region=south", "bool"}, {"region=(other)", "bool"}, {"region=(null)", "bool"}, {"day", "float64"}, {"day:hour_sin", "float64"}, {"day:hour_cos", "float64"}},
		targets:  []ColumnSpec{{"y", "float64"}},
		rows:     30,
		opt: Options{ChunkRows: 16, Codec: "zstd", Created: fixedTime, Encoding: &featenc.Spec{Columns: []featenc.Column{
			{Source: "region", Kind: featenc.OneHot, Levels: []string{"north", "south"}, Other: true, Null: true, Scale: featenc.Scale,
				Features: []string{"region=north", "region=south", "region=(other)", "region=(null)"}},
			{Source: "day", Kind: featenc.Time, Cyclic: []string{featenc.Hour}, Features: []string{"day", "day:hour_sin", "day:hour_cos"}},
		}}},
	},
}

// fixtureData returns the fixture's columns. It uses only PCG integers and
// exact arithmetic, so it is the same on every platform.
func fixtureData(fx fixture) [][]float64 {
	rng := rand.New(rand.NewPCG(2026, uint64(len(fx.name))))
	cols := make([][]float64, len(fx.features)+len(fx.targets))
	for j := range cols {
		spec := fx.features
		jj := j
		if j >= len(fx.features) {
			spec, jj = fx.targets, j-len(fx.features)
		}
		c := make([]float64, fx.rows)
		for i := range c {
			if spec[jj].Name == fx.opt.Weight && fx.opt.Weight != "" {
				c[i] = float64(rng.IntN(8)) / 2 // weights are ≥ 0
				continue
			}
			switch spec[jj].Type {
			case "bool":
				c[i] = float64(rng.IntN(2))
			case "int16", "int32", "uint8":
				c[i] = float64(rng.IntN(100) - 10*j)
			case "float32":
				if fx.exactF32 {
					c[i] = float64(float32(rng.IntN(1000)) / 7)
				} else {
					c[i] = float64(rng.IntN(2000000)-1000000) / 1000
				}
			default:
				c[i] = float64(rng.IntN(2000000)-1000000) / 1000
			}
		}
		cols[j] = c
	}
	return cols
}

func writeFixture(t testing.TB, dir string, fx fixture) [][]float64 {
	t.Helper()
	cols := fixtureData(fx)
	w, err := Create(dir, fx.features, fx.targets, fx.opt)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return cols
}

func TestFixtures(t *testing.T) {
	for _, fx := range slices.Concat(fixturesV1, fixturesV2, fixturesV3) {
		t.Run(fx.name, func(t *testing.T) {
			path := filepath.Join("testdata", filepath.FromSlash(fx.name))
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				writeFixture(t, path, fx)
			}
			// The writer reproduces the fixture byte for byte.
			tmp := filepath.Join(t.TempDir(), "store")
			cols := writeFixture(t, tmp, fx)
			want := readDir(t, path)
			got := readDir(t, tmp)
			if len(got) != len(want) {
				t.Fatalf("writer produced %d files, fixture has %d", len(got), len(want))
			}
			for name, b := range want {
				if !bytes.Equal(got[name], b) {
					t.Errorf("%s differs from the fixture (format change? bump the version and add a fixture)", name)
				}
			}
			// The reader reads it.
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			version := 1
			if fx.opt.Weight != "" {
				version = 2
			}
			if fx.opt.Encoding != nil {
				version = 3
				// One-hot features are scaled by the encoding's rule.
				_, std := r.FeatureStats()
				for j, c := range r.Manifest().Features {
					if want := c.Std; strings.HasPrefix(c.Name, "region=") && std[j] != featenc.Scale || !strings.HasPrefix(c.Name, "region=") && std[j] != want {
						t.Fatalf("FeatureStats std of %q = %v", c.Name, std[j])
					}
				}
				if !reflect.DeepEqual(r.Encoding(), fx.opt.Encoding) {
					t.Fatalf("Encoding = %+v, want %+v", r.Encoding(), fx.opt.Encoding)
				}
			}
			if r.Manifest().FormatVersion != version || filepath.Dir(fx.name) != fmt.Sprintf("v%d", version) {
				t.Fatalf("fixture %s: format version %d, want %d", fx.name, r.Manifest().FormatVersion, version)
			}
			if fx.opt.Weight == "" {
				checkStore(t, r, cols, len(fx.features))
				return
			}
			// The weight column is the last one written; the reader gives it
			// apart from the targets.
			w := cols[len(cols)-1]
			checkStore(t, r, cols[:len(cols)-1], len(fx.features))
			if stream.WeightColumn(r) != fx.opt.Weight {
				t.Fatalf("WeightColumn = %q, want %q", stream.WeightColumn(r), fx.opt.Weight)
			}
			row := 0
			for i := range r.NumChunks() {
				got := make([]float64, r.ChunkRows(i))
				if err := r.ReadWeights(context.Background(), i, got); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, w[row:row+len(got)]) {
					t.Fatalf("chunk %d: weights %v, want %v", i, got, w[row:row+len(got)])
				}
				row += len(got)
			}
			if row != fx.rows {
				t.Fatalf("%d weights for %d rows", row, fx.rows)
			}
			if err := r.Verify(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if *update {
		writeFuzzSeeds(t)
	}
}

// writeFuzzSeeds writes the seed corpora under testdata/fuzz from the
// fixtures, in the go test fuzz v1 encoding.
func writeFuzzSeeds(t *testing.T) {
	put := func(target, name string, args ...any) {
		var b bytes.Buffer
		b.WriteString("go test fuzz v1\n")
		for _, a := range args {
			switch v := a.(type) {
			case []byte:
				fmt.Fprintf(&b, "[]byte(%q)\n", v)
			case byte:
				fmt.Fprintf(&b, "byte(%#02x)\n", v)
			case uint16:
				fmt.Fprintf(&b, "uint16(%d)\n", v)
			}
		}
		dir := filepath.Join("testdata", "fuzz", target)
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, fx := range fixturesV1 {
		ms := loadMem(t, filepath.Join("testdata", filepath.FromSlash(fx.name)))
		name := "fixture-" + filepath.Base(fx.name)
		put("FuzzManifest", name, ms.meta)
		put("FuzzOpen", name, ms.meta, ms.segs[0])
		r, err := ms.open()
		if err != nil {
			t.Fatal(err)
		}
		e := r.chunks[0].ci.entries[0]
		seg := ms.segs[0]
		put("FuzzDecodeBlock", name, seg[e.offset:e.offset+int64(e.storedLen)], e.codec, uint16(r.ChunkRows(0)))
		r.Close()
	}
}
