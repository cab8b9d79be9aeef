package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/stream"
)

// readDelimited reads a (gzip-compressed) delimited text file of numbers.
// skipHeader drops the first line.
func readDelimited(path string, sep string, skipHeader bool) (rows [][]float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		if line == 1 && skipHeader {
			continue
		}
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		var fs []string
		if sep == "" {
			fs = strings.Fields(s)
		} else {
			fs = strings.Split(s, sep)
		}
		v := make([]float64, len(fs))
		for i, x := range fs {
			if v[i], err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
		}
		if len(rows) > 0 && len(v) != len(rows[0]) {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d", path, line, len(v), len(rows[0]))
		}
		rows = append(rows, v)
	}
	return rows, sc.Err()
}

// fromRows builds a table from rows whose last column is the target.
func fromRows(rows [][]float64, features []string, target string) *table {
	t := &table{features: features, target: target}
	for _, r := range rows {
		t.x = append(t.x, r[:len(r)-1]...)
		t.y = append(t.y, r[len(r)-1])
	}
	return t
}

func colNames(d int) []string {
	n := make([]string, d)
	for i := range n {
		n[i] = fmt.Sprintf("c%d", i)
	}
	return n
}

func indices(n int, keep func(i int) bool) []int {
	var idx []int
	for i := range n {
		if keep(i) {
			idx = append(idx, i)
		}
	}
	return idx
}

// loadUCI reads data.csv.gz and the first split of test_mask.csv.gz, and
// z-scores the target with the training part's mean and standard deviation.
func loadUCI(name string) func(*env) (*table, *table, error) {
	return func(e *env) (*table, *table, error) {
		dir := filepath.Join(e.dataDir, "uci_gp_wilson", name)
		rows, err := readDelimited(filepath.Join(dir, "data.csv.gz"), ",", false)
		if err != nil {
			return nil, nil, err
		}
		mask, err := readDelimited(filepath.Join(dir, "test_mask.csv.gz"), ",", false)
		if err != nil {
			return nil, nil, err
		}
		if len(mask) != len(rows) {
			return nil, nil, fmt.Errorf("test mask has %d rows, data %d", len(mask), len(rows))
		}
		all := fromRows(rows, colNames(len(rows[0])-1), "y")
		train := all.subset(indices(all.n(), func(i int) bool { return mask[i][0] == 0 }))
		test := all.subset(indices(all.n(), func(i int) bool { return mask[i][0] == 1 }))
		var mean, ss float64
		for _, y := range train.y {
			mean += y
		}
		mean /= float64(train.n())
		for _, y := range train.y {
			ss += (y - mean) * (y - mean)
		}
		std := math.Sqrt(ss / float64(train.n()-1))
		for _, t := range []*table{train, test} {
			for i := range t.y {
				t.y[i] = (t.y[i] - mean) / std
			}
		}
		return train, test, nil
	}
}

// loadCalifornia derives scikit-learn's eight features and y = value/1e5,
// and splits 80/20 with the same permutation as `falkon-ooc demo --seed`.
func loadCalifornia(e *env) (*table, *table, error) {
	path := filepath.Join(e.dataDir, "california_housing", "537_houses.tsv.gz")
	rows, err := readDelimited(path, "\t", true)
	if err != nil {
		return nil, nil, err
	}
	all := &table{features: []string{"MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude", "Longitude"}, target: "value"}
	for _, v := range rows {
		inc, age, rooms, beds, pop, hh, lat, lon, val := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]
		all.x = append(all.x, inc, age, rooms/hh, beds/hh, pop, pop/hh, lat, lon)
		all.y = append(all.y, val/1e5)
	}
	// The demo shuffles its rows with this generator: the same swaps on
	// indices give the same permutation.
	perm := make([]int, all.n())
	for i := range perm {
		perm[i] = i
	}
	rng := rand.New(rand.NewPCG(e.seed, 0x64656d6f))
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	cut := len(perm) * 8 / 10
	return all.subset(perm[:cut]), all.subset(perm[cut:]), nil
}

// loadSkin reads the skin segmentation data (B, G, R, label 1 = skin,
// 2 = not) and splits it 80/20 at random.
func loadSkin(e *env) (*table, *table, error) {
	rows, err := readDelimited(filepath.Join(e.dataDir, "skin_nonskin", "Skin_NonSkin.txt.gz"), "", false)
	if err != nil {
		return nil, nil, err
	}
	all := fromRows(rows, []string{"B", "G", "R"}, "label")
	a, b := randomSplit(all.n(), 0.2, e.seed, 0x736b696e)
	return all.subset(a), all.subset(b), nil
}

// loadFlights ingests the Parquet file (date as days since 1970-01-01,
// distance, delay) into a chunk store, reads it back and derives numeric
// features from the date: day of the year, day of the week and, when the
// date carries a time, the hour of the day. 80/20 random split.
func loadFlights(e *env) (*table, *table, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "falkon-accuracy-flights-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "raw.store")
	src := filepath.Join(e.dataDir, "flights", "flights-3m.parquet")
	res, err := ingest.Run(ctx, []string{src}, ingest.Config{Out: out, Features: []string{"date", "distance"}, Targets: []string{"delay"}, Nulls: "drop", Workers: e.workers})
	if err != nil {
		return nil, nil, err
	}
	if res.Dropped > 0 {
		logf("flights: %d rows with a NULL dropped by ingest", res.Dropped)
	}
	r, err := chunkstore.Open(out)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var x, y []float64
	hasTime := false
	for i := range r.NumChunks() {
		n := r.ChunkRows(i)
		cx, cy := make([]float64, n*2), make([]float64, n)
		if err := r.ReadChunk(ctx, i, cx, cy); err != nil {
			return nil, nil, err
		}
		for j := range n {
			if cx[2*j] != math.Floor(cx[2*j]) {
				hasTime = true
			}
		}
		x, y = append(x, cx...), append(y, cy...)
	}
	all := &table{target: "delay", y: y}
	all.features = []string{"day_of_year", "day_of_week", "distance"}
	if hasTime {
		all.features = []string{"day_of_year", "day_of_week", "hour", "distance"}
	}
	n := len(y)
	if e.quick {
		n = min(n, 200_000)
		all.y = all.y[:n]
	}
	for i := range n {
		days, dist := x[2*i], x[2*i+1]
		day := math.Floor(days)
		// 1970-01-01 was a Thursday (3 with Monday = 0).
		dow := math.Mod(day+3, 7)
		doy := time.Unix(int64(day)*86400, 0).UTC().YearDay()
		all.x = append(all.x, float64(doy), dow)
		if hasTime {
			all.x = append(all.x, (days-day)*24)
		}
		all.x = append(all.x, dist)
	}
	a, b := randomSplit(n, 0.2, e.seed, 0x666c69)
	return all.subset(a), all.subset(b), nil
}

// readIDX reads a gzip-compressed IDX file of unsigned bytes: its
// dimensions and data.
func readIDX(path string) ([]int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, nil, err
	}
	if len(b) < 4 || b[0] != 0 || b[1] != 0 || b[2] != 0x08 {
		return nil, nil, fmt.Errorf("%s: not an unsigned-byte IDX file", path)
	}
	nd := int(b[3])
	if len(b) < 4+4*nd {
		return nil, nil, fmt.Errorf("%s: short header", path)
	}
	dims := make([]int, nd)
	size := 1
	for i := range dims {
		dims[i] = int(binary.BigEndian.Uint32(b[4+4*i:]))
		size *= dims[i]
	}
	data := b[4+4*nd:]
	if len(data) != size {
		return nil, nil, fmt.Errorf("%s: %d data bytes, want %d", path, len(data), size)
	}
	return dims, data, nil
}

// loadFashion reads the IDX files; pixels are scaled to [0, 1].
func loadFashion(e *env) (*table, *table, error) {
	read := func(prefix string) (*table, error) {
		dims, img, err := readIDX(filepath.Join(e.fashionDir, prefix+"-images-idx3-ubyte.gz"))
		if err != nil {
			return nil, err
		}
		_, lab, err := readIDX(filepath.Join(e.fashionDir, prefix+"-labels-idx1-ubyte.gz"))
		if err != nil {
			return nil, err
		}
		n, d := dims[0], dims[1]*dims[2]
		if len(lab) != n {
			return nil, fmt.Errorf("%s: %d labels for %d images", prefix, len(lab), n)
		}
		t := &table{features: make([]string, d), target: "label", x: make([]float64, n*d), y: make([]float64, n)}
		for j := range d {
			t.features[j] = fmt.Sprintf("p%d", j)
		}
		for i, v := range img {
			t.x[i] = float64(v) / 255
		}
		for i, v := range lab {
			t.y[i] = float64(v)
		}
		return t, nil
	}
	train, err := read("train")
	if err != nil {
		return nil, nil, err
	}
	test, err := read("t10k")
	return train, test, err
}

func uciFiles(name string) func(*env) []string {
	return func(e *env) []string {
		d := filepath.Join(e.dataDir, "uci_gp_wilson", name)
		return []string{filepath.Join(d, "data.csv.gz"), filepath.Join(d, "test_mask.csv.gz")}
	}
}

// Grids. Features are z-scored by the solver (except Fashion-MNIST), so
// σ is in units of one feature's standard deviation.
var (
	smallSigmas  = []float64{0.5, 1, 2, 3, 4, 6, 8}
	smallLambdas = []float64{1e-4, 1e-5, 1e-6, 1e-7, 1e-8}
)

func regression(label, published string, finalM int) func(*env) []task {
	return func(e *env) []task {
		t := task{label: label, kind: ooc.TaskRegression, targetName: "y",
			sigmas: smallSigmas, lambdas: smallLambdas, gridM: 1000, finalM: finalM,
			gridIters: 20, iters: 30, published: published}
		if e.quick {
			t.sigmas, t.lambdas, t.gridM, t.finalM, t.iters = []float64{1, 4}, []float64{1e-4, 1e-6}, 300, 1000, 20
		}
		return []task{t}
	}
}

// classifyDatasets are read by -classify only.
var classifyDatasets = []*dataset{
	{name: "susy", valFrac: 0.2,
		files: susyFiles,
		load:  loadSusy,
		tasks: func(*env) []task { return nil }},
}

// loadSusy reads the susy shape of bench/paper (-susy: its data directory,
// train/ and test/ Parquet parts of 18 features f00…f17 and a 0/1 target
// y): the first two training parts (about 1.1 M of its 4.5 M rows) and the
// test part.
func susyFiles(e *env) []string {
	return []string{filepath.Join(e.susyDir, "train", "part-000.parquet"), filepath.Join(e.susyDir, "train", "part-001.parquet"),
		filepath.Join(e.susyDir, "test", "part-000.parquet")}
}

func loadSusy(e *env) (*table, *table, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "falkon-accuracy-susy-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	files := susyFiles(e)
	read := func(name string, in []string) (*table, error) {
		out := filepath.Join(dir, name+".store")
		if _, err := ingest.Run(ctx, in, ingest.Config{Out: out, Targets: []string{"y"}, Workers: e.workers}); err != nil {
			return nil, err
		}
		r, err := chunkstore.Open(out)
		if err != nil {
			return nil, err
		}
		defer r.Close()
		feats, _ := stream.ColumnsOf(r)
		t := &table{target: "y", features: feats}
		d := len(feats)
		for i := range r.NumChunks() {
			n := r.ChunkRows(i)
			cx, cy := make([]float64, n*d), make([]float64, n)
			if err := r.ReadChunk(ctx, i, cx, cy); err != nil {
				return nil, err
			}
			t.x, t.y = append(t.x, cx...), append(t.y, cy...)
		}
		return t, nil
	}
	train, err := read("train", files[:2])
	if err != nil {
		return nil, nil, err
	}
	test, err := read("test", files[2:])
	return train, test, err
}

var datasets = []*dataset{
	{name: "protein", files: uciFiles("protein"), load: loadUCI("protein"), valFrac: 0.2,
		tasks: regression("", "RMSE 0.536 (exact GP)", 10000)},
	{name: "kin40k", files: uciFiles("kin40k"), load: loadUCI("kin40k"), valFrac: 0.2,
		tasks: regression("", "RMSE 0.099 (exact GP)", 10000)},
	{name: "elevators", files: uciFiles("elevators"), load: loadUCI("elevators"), valFrac: 0.2,
		tasks: regression("", "RMSE 0.394 (exact GP)", 10000)},
	{name: "bike", files: uciFiles("bike"), load: loadUCI("bike"), valFrac: 0.2,
		tasks: regression("", "RMSE 0.220 (exact GP)", 10000)},
	{name: "california", valFrac: 0.2,
		files: func(e *env) []string {
			return []string{filepath.Join(e.dataDir, "california_housing", "537_houses.tsv.gz")}
		},
		load: loadCalifornia,
		tasks: func(e *env) []task {
			pub := task{label: "(published settings)", kind: ooc.TaskRegression, targetName: "value",
				fixed: &hp{1, 1e-5}, finalM: 5000, iters: ooc.DefaultIterations, published: "RMSE 0.578 (Falkon tutorial)"}
			tuned := task{label: "(validation-tuned)", kind: ooc.TaskRegression, targetName: "value",
				sigmas: smallSigmas, lambdas: smallLambdas, gridM: 1000, finalM: 5000,
				gridIters: 20, iters: 30, published: "RMSE 0.578 (Falkon tutorial)"}
			if e.quick {
				pub.finalM = 1000
				tuned.sigmas, tuned.lambdas, tuned.gridM, tuned.finalM, tuned.iters = []float64{1, 4}, []float64{1e-4, 1e-6}, 300, 1000, 20
			}
			return []task{pub, tuned}
		}},
	{name: "skin", valFrac: 0.2,
		files: func(e *env) []string {
			return []string{filepath.Join(e.dataDir, "skin_nonskin", "Skin_NonSkin.txt.gz")}
		},
		load: loadSkin,
		tasks: func(e *env) []task {
			t := task{kind: ooc.TaskBinary, classify: true, targetName: "label",
				sigmas: []float64{0.125, 0.25, 0.5, 1, 2}, lambdas: []float64{1e-5, 1e-7, 1e-9},
				gridM: 1000, finalM: 5000, gridIters: 20, iters: 20, gridTrain: 50_000, gridVal: 20_000,
				published: "— (no published number here)"}
			if e.quick {
				t.sigmas, t.lambdas, t.gridM, t.finalM = []float64{0.25, 1}, []float64{1e-6}, 300, 1000
			}
			return []task{t}
		}},
	{name: "flights", valFrac: 0.2,
		files: func(e *env) []string {
			return []string{filepath.Join(e.dataDir, "flights", "flights-3m.parquet")}
		},
		load: loadFlights,
		tasks: func(e *env) []task {
			reg := task{label: "delay", kind: ooc.TaskRegression, targetName: "delay",
				sigmas: []float64{0.25, 0.5, 1, 2}, lambdas: []float64{1e-3, 1e-5, 1e-7},
				gridM: 1000, finalM: 3000, gridIters: 10, iters: 10, gridTrain: 100_000, gridVal: 50_000,
				published: "— (no published number here)"}
			bin := reg
			bin.label, bin.kind, bin.classify, bin.targetName = "delay > 15", ooc.TaskBinary, true, "late"
			bin.targetFn = func(d float64) float64 {
				if d > 15 {
					return 1
				}
				return 0
			}
			if e.quick {
				for _, t := range []*task{&reg, &bin} {
					t.sigmas, t.lambdas, t.gridM, t.finalM, t.gridTrain, t.gridVal = []float64{0.5, 2}, []float64{1e-5}, 300, 1000, 20_000, 10_000
				}
			}
			return []task{reg, bin}
		}},
	{name: "fashion-mnist", valFrac: 1.0 / 6,
		files: func(e *env) []string {
			return []string{filepath.Join(e.fashionDir, "train-images-idx3-ubyte.gz"), filepath.Join(e.fashionDir, "t10k-labels-idx1-ubyte.gz")}
		},
		load: loadFashion,
		tasks: func(e *env) []task {
			t := task{kind: ooc.TaskMulticlass, classify: true, multiclass: true, targetName: "label",
				sigmas: []float64{5, 7, 10, 14}, lambdas: []float64{1e-6, 1e-8},
				gridM: 1000, finalM: 5000, gridIters: 15, iters: 20, gridTrain: 20_000, gridVal: 5_000,
				precision: kernel.Float32, noStandardize: true,
				published: "accuracy 0.897 (RBF SVC)"}
			if e.quick {
				t.sigmas, t.lambdas, t.gridM, t.finalM, t.gridTrain, t.gridVal, t.iters = []float64{7}, []float64{1e-6}, 300, 500, 5000, 2000, 5
			}
			return []task{t}
		}},
}
