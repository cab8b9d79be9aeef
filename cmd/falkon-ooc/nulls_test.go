package main

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// nullsCSV writes to holes n rows of a, b and y = sin(a) + b/2 with b NULL
// (an empty field) in every row i with i%7 == 3. It returns a function
// that writes the same rows with those NULLs replaced by a value, the
// mean of the other b (summed exactly, then rounded), and the NULL rows.
func nullsCSV(t *testing.T, holes string, n int) (write func(path string, fill float64), mean float64, null []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 27))
	type row struct{ a, b, y string }
	rows := make([]row, n)
	sum := new(big.Float).SetPrec(2000)
	var count int
	for i := range rows {
		a, b := rng.NormFloat64(), rng.NormFloat64()*3+2
		rows[i] = row{f6(a), f6(b), f6(math.Sin(a) + b/2)}
		if i%7 == 3 {
			rows[i].b = ""
			null = append(null, i)
			continue
		}
		v, _ := strconv.ParseFloat(rows[i].b, 64)
		sum.Add(sum, big.NewFloat(v))
		count++
	}
	write = func(path string, fill float64) {
		var f strings.Builder
		f.WriteString("a,b,y\n")
		for _, r := range rows {
			b := r.b
			if b == "" && !math.IsNaN(fill) {
				b = strconv.FormatFloat(fill, 'g', -1, 64)
			}
			fmt.Fprintf(&f, "%s,%s,%s\n", r.a, b, r.y)
		}
		if err := os.WriteFile(path, []byte(f.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(holes, math.NaN())
	mean, _ = sum.Quo(sum, big.NewFloat(float64(count))).Float64()
	return write, mean, null
}

// TestNullsMeanFit: fit --nulls mean on data with NULLs gives the model a
// fit gets on the same data with the NULLs replaced by the mean of the
// other values (issue 27 item 4), bit for bit, and says how many it
// filled.
func TestNullsMeanFit(t *testing.T) {
	dir := t.TempDir()
	holes, filled := filepath.Join(dir, "holes.csv"), filepath.Join(dir, "filled.csv")
	write, mean, null := nullsCSV(t, holes, 700)
	flags := []string{"--target", "y", "--centers", "80", "--iters", "8", "--seed", "3"}
	m1Path := filepath.Join(dir, "m1.falkon")
	code, _, e := runCLI(append([]string{"fit", "--out", m1Path, "--nulls", "mean", holes}, flags...)...)
	if code != 0 {
		t.Fatalf("fit --nulls mean: exit %d: %s", code, e)
	}
	if want := fmt.Sprintf("; %d NULL, NaN or ±Inf feature values filled with their column's mean\n", len(null)); !strings.Contains(e, want) {
		t.Errorf("fit's stderr does not say%q:\n%s", want, e)
	}
	// The value stored for the NULLs: the mean of the other values. It is
	// the store's mean × rows / (rows − NULLs): a few roundings from the
	// exact mean.
	r, err := chunkstore.Open(m1Path + ".store")
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, r.ChunkRows(0)*r.Dim())
	if err := r.ReadChunk(context.Background(), 0, x, nil); err != nil {
		t.Fatal(err)
	}
	r.Close()
	fill := x[null[0]*2+1]
	for _, i := range null {
		if x[i*2+1] != fill {
			t.Fatalf("row %d holds b = %v, row %d %v", i, x[i*2+1], null[0], fill)
		}
	}
	if math.Abs(fill-mean) > 4e-16*math.Abs(mean) {
		t.Errorf("NULLs filled with %v, the mean of the others is %v", fill, mean)
	}
	write(filled, fill)
	m2Path := filepath.Join(dir, "m2.falkon")
	if code, _, e := runCLI(append([]string{"fit", "--out", m2Path, "--quiet", filled}, flags...)...); code != 0 {
		t.Fatalf("fit on the filled data: exit %d: %s", code, e)
	}
	m1, err := ooc.Load(m1Path)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ooc.Load(m2Path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m1.Alpha(), m2.Alpha()) || !slices.Equal(m1.Centers(), m2.Centers()) || !slices.Equal(m1.FeatureMean(), m2.FeatureMean()) || !slices.Equal(m1.FeatureStd(), m2.FeatureStd()) {
		t.Errorf("fit --nulls mean and the fit on the filled data differ: means %v and %v", m1.FeatureMean(), m2.FeatureMean())
	}

	// tune reads the inputs as fit does.
	code, _, e = runCLI("tune", "--out", filepath.Join(dir, "t.falkon"), "--target", "y", "--nulls", "mean", "--sigma", "1,2", "--lambda", "1e-3", "--centers", "40", "--iters", "3", holes)
	if want := fmt.Sprintf("; %d NULL, NaN or ±Inf feature values filled with their column's mean\n", len(null)); code != 0 || !strings.Contains(e, want) {
		t.Errorf("tune --nulls mean: exit %d, stderr lacks %q:\n%s", code, want, e)
	}

	// Without --nulls mean the NULL is an error that suggests it.
	code, _, e = runCLI(append([]string{"fit", "--out", filepath.Join(dir, "m3.falkon"), "--quiet", holes}, flags...)...)
	want := "falkon-ooc fit: " + holes + `: row 4 (1-based, counted within this file, header line not counted): column "b" is NULL (--nulls drop skips such rows; --nulls mean fills a feature with the mean of its other values and skips a row whose target is bad)` + "\n"
	if code != 1 || e != want {
		t.Errorf("fit on NULLs: exit %d, stderr\n%s\nwant\n%s", code, e, want)
	}
	code, _, e = runCLI(append([]string{"fit", "--out", filepath.Join(dir, "m3.falkon"), "--nulls", "median", holes}, flags...)...)
	if want := `falkon-ooc fit: --nulls must be error, drop or mean, not "median"`; code != 2 || !strings.HasPrefix(e, want) {
		t.Errorf("--nulls median: exit %d, stderr\n%s\nwant\n%s", code, e, want)
	}

	// ingest's report counts them.
	code, out, e := runCLI("ingest", "--out", filepath.Join(dir, "s"), "--target", "y", "--nulls", "mean", "--quiet", holes)
	if code != 0 {
		t.Fatalf("ingest --nulls mean: %s", e)
	}
	if want := fmt.Sprintf("ingested 700 rows from 1 file into %s; %d NULL, NaN or ±Inf feature values filled with their column's mean\n", filepath.Join(dir, "s"), len(null)); !strings.HasPrefix(out, want) {
		t.Errorf("ingest --nulls mean:\n%s\nwant it to start\n%s", out, want)
	}
	if want := fmt.Sprintf("\nb             number  feature       %d NULL, NaN or ±Inf values filled with the mean of the others, %s\n", len(null), strconv.FormatFloat(fill, 'g', -1, 64)); !strings.Contains(out, want) {
		t.Errorf("ingest --nulls mean: the report lacks\n%s\n%s", want, out)
	}
}

// TestNullsMeanPredict: predict --nulls mean reads a NULL feature as the
// model's training mean; a model without standardisation keeps no means
// and is refused.
func TestNullsMeanPredict(t *testing.T) {
	m, model, in, rows := predictFixture(t, 30)
	b, _ := os.ReadFile(in)
	lines := strings.Split(string(b), "\n")
	f := strings.Split(lines[5], ",") // row index 4; the quoted name holds a comma
	f[3+1] = ""                       // a
	lines[5] = strings.Join(f, ",")
	bad := filepath.Join(t.TempDir(), "nulls.csv")
	os.WriteFile(bad, []byte(strings.Join(lines, "\n")), 0o644)
	out := filepath.Join(t.TempDir(), "p.csv")
	code, _, e := runCLI("predict", "--model", model, "--quiet", "--nulls", "mean", "--keep", "id,name", "--out", out, bad)
	if code != 0 {
		t.Fatalf("--nulls mean: exit %d: %s", code, e)
	}
	want := wantPreds(t, m, rows, nil)
	x := make([]float64, 3)
	for j := range 3 {
		x[j], _ = strconv.ParseFloat(rows[4][2+j], 64)
	}
	x[0] = m.FeatureMean()[0] // a, the model's first feature
	m.PredictTo(want[4:5], x, 1)
	got, _ := os.ReadFile(out)
	checkPreds(t, "--nulls mean", readCSV(t, string(got)), rows, want)

	src := stream.NewMemSource([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8}, 3, []float64{1, 2, 3}, 1, 3)
	raw, err := ooc.Fit(context.Background(), src, ooc.Config{Centers: 3, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 1}, Lambda: 1e-3, Iterations: 2, NoStandardize: true}, ooc.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rawPath := filepath.Join(t.TempDir(), "raw.falkon")
	if err := raw.Save(rawPath); err != nil {
		t.Fatal(err)
	}
	code, _, e = runCLI("predict", "--model", rawPath, "--quiet", "--nulls", "mean", bad)
	if want := "falkon-ooc predict: --nulls mean: model " + rawPath + " was fitted without standardisation and keeps no feature means; use --nulls zero or drop\n"; code != 1 || e != want {
		t.Errorf("no means: exit %d, stderr\n%s\nwant\n%s", code, e, want)
	}
}
