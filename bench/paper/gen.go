package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// shape is one of the paper's workloads, as a shape: rows, features,
// task, and the function the data comes from.
type shape struct {
	Name     string `json:"name"`
	Rows     int64  `json:"rows"` // train + test
	Test     int64  `json:"test"`
	D        int    `json:"d"`
	Relevant int    `json:"relevant"` // features the target depends on (the first ones)
	Binary   bool   `json:"binary"`
	// Kappa scales the standardised latent function into the logit
	// (binary); Scale and Noise make the regression target
	// Offset + Scale·h(x) + N(0, Noise²).
	Kappa float64 `json:"kappa,omitempty"`
	// Terms and Freq shape h: Terms sine terms (default 16) whose
	// frequency vectors have norm about Freq (default 1.5).
	Terms int     `json:"terms,omitempty"`
	Freq  float64 `json:"freq,omitempty"`
	// Rough adds RoughTerms sine terms of frequency norm about RoughFreq
	// on the first RoughDims features only, whose amplitudes are Rough
	// times the smooth terms': local structure in a few dimensions, which
	// plenty of rows can resolve but few centres cannot represent.
	Rough                float64 `json:"rough,omitempty"`
	RoughDims            int     `json:"rough_dims,omitempty"`
	RoughTerms           int     `json:"rough_terms,omitempty"`
	RoughFreq            float64 `json:"rough_freq,omitempty"`
	Offset, Scale, Noise float64 `json:"-"`
	// Files and RowGroups: the training rows go into Files Parquet files
	// of RowGroups row groups each.
	Files, RowGroups int `json:"-"`
	// Paper's setting and result, for the table.
	PaperM      int    `json:"paper_m"`
	PaperResult string `json:"paper_result"`
	PaperTime   string `json:"paper_time"`
}

var shapes = map[string]shape{
	"msd": {Name: "msd", Rows: 515_345, Test: 51_630, D: 90, Relevant: 30, Offset: 1998, Scale: 10, Noise: 8,
		Files: 4, RowGroups: 4, PaperM: 10_000, PaperResult: "MSE 80.10 (σ = 6, λ = 1e-6)", PaperTime: "55 s"},
	"susy": {Name: "susy", Rows: 5_000_000, Test: 500_000, D: 18, Relevant: 12, Binary: true, Kappa: 2.2,
		Files: 8, RowGroups: 4, PaperM: 10_000, PaperResult: "error 19.6 %, AUC 0.877 (σ = 4, λ = 1e-6)", PaperTime: "4 min"},
	"higgs": {Name: "higgs", Rows: 11_000_000, Test: 500_000, D: 28, Relevant: 14, Binary: true, Kappa: 1.6,
		Files: 16, RowGroups: 4, PaperM: 100_000, PaperResult: "AUC 0.833 (ARD; one σ = 5: 0.825), λ = 1e-8", PaperTime: "3 h"},
	// higgs-rough: the higgs shape with a rougher function (more terms of
	// higher frequency), which 10⁴ centres do not represent well: on the
	// real HIGGS more centres buy AUC (the paper: M = 10⁵), on the smooth
	// higgs function above they do not.
	"higgs-rough": {Name: "higgs-rough", Rows: 11_000_000, Test: 500_000, D: 28, Relevant: 14, Binary: true, Kappa: 2.5,
		Rough: 1.5, RoughDims: 3, RoughTerms: 64, RoughFreq: 6,
		Files: 16, RowGroups: 4, PaperM: 100_000, PaperResult: "AUC 0.833 (ARD; one σ = 5: 0.825), λ = 1e-8", PaperTime: "3 h"},
	// tiny: the default tests' size.
	"tiny": {Name: "tiny", Rows: 6000, Test: 1000, D: 6, Relevant: 4, Binary: true, Kappa: 2.2,
		Files: 2, RowGroups: 2, PaperM: 0, PaperResult: "-", PaperTime: "-"},
	"tinyreg": {Name: "tinyreg", Rows: 6000, Test: 1000, D: 6, Relevant: 4, Offset: 10, Scale: 3, Noise: 0.5,
		Files: 2, RowGroups: 2, PaperM: 0, PaperResult: "-", PaperTime: "-"},
}

// truth is the function of a shape: h(x) = Σₖ aₖ sin(wₖᵀx_rel + bₖ) on
// the first Relevant features of x (standard normal, AR(1)-correlated
// with ρ = 0.6), divided by its standard deviation; the stored columns
// are offset and scaled per column so that standardisation matters.
type truth struct {
	sh          shape
	a, b        []float64
	w           [][]float64
	hStd        float64
	colMu, colS []float64
}

const rho = 0.6

func newTruth(sh shape, seed uint64) *truth {
	rng := rand.New(rand.NewPCG(seed, 0x7472757468))
	t := &truth{sh: sh, hStd: 1}
	terms, freq := sh.Terms, sh.Freq
	if terms == 0 {
		terms = 16
	}
	if freq == 0 {
		freq = 1.5
	}
	for range terms {
		t.a = append(t.a, rng.NormFloat64()/math.Sqrt(float64(terms)))
		t.b = append(t.b, rng.Float64()*2*math.Pi)
		w := make([]float64, sh.Relevant)
		for j := range w {
			w[j] = freq * rng.NormFloat64() / math.Sqrt(float64(sh.Relevant))
		}
		t.w = append(t.w, w)
	}
	for range sh.RoughTerms {
		t.a = append(t.a, sh.Rough*rng.NormFloat64()/math.Sqrt(float64(sh.RoughTerms)))
		t.b = append(t.b, rng.Float64()*2*math.Pi)
		w := make([]float64, sh.Relevant)
		for j := range sh.RoughDims {
			w[j] = sh.RoughFreq * rng.NormFloat64() / math.Sqrt(float64(sh.RoughDims))
		}
		t.w = append(t.w, w)
	}
	for j := range sh.D {
		t.colMu = append(t.colMu, float64(j%7)-3)
		t.colS = append(t.colS, 0.5+float64(j%5))
	}
	// The standard deviation of h, on 200 000 draws.
	x := make([]float64, sh.D)
	var s, s2 float64
	const n = 200_000
	r := rand.New(rand.NewPCG(seed, 0x737464))
	for range n {
		t.draw(r, x)
		v := t.h(x)
		s += v
		s2 += v * v
	}
	mean := s / n
	t.hStd = math.Sqrt(s2/n - mean*mean)
	return t
}

// draw sets x to a row of standard-normal AR(1) features.
func (t *truth) draw(r *rand.Rand, x []float64) {
	x[0] = r.NormFloat64()
	c := math.Sqrt(1 - rho*rho)
	for j := 1; j < len(x); j++ {
		x[j] = rho*x[j-1] + c*r.NormFloat64()
	}
}

func (t *truth) h(x []float64) float64 {
	v := 0.0
	for k := range t.a {
		z := t.b[k]
		for j, w := range t.w[k] {
			z += w * x[j]
		}
		v += t.a[k] * math.Sin(z)
	}
	return v / t.hStd
}

// row draws a row: the stored features, the target, and the Bayes
// prediction (P(y = 1 | x), or E[y | x]).
func (t *truth) row(r *rand.Rand, x, out []float64) (y, bayes float64) {
	t.draw(r, x)
	h := t.h(x)
	for j := range x {
		out[j] = t.colMu[j] + t.colS[j]*x[j]
	}
	if t.sh.Binary {
		p := 1 / (1 + math.Exp(-t.sh.Kappa*h))
		if r.Float64() < p {
			y = 1
		}
		return y, p
	}
	f := t.sh.Offset + t.sh.Scale*h
	return f + t.sh.Noise*r.NormFloat64(), f
}

// meta is what gen writes beside the data: the shape and the Bayes
// optimum on the test rows.
type meta struct {
	Shape shape  `json:"shape"`
	Seed  uint64 `json:"seed"`
	Train int64  `json:"train_rows"`
	Test  int64  `json:"test_rows"`
	// Bayes: on the test rows, the metric of the true function
	// (regression: MSE of E[y|x]; binary: AUC and error rate of P(y=1|x)).
	BayesMSE   float64 `json:"bayes_mse,omitempty"`
	BayesAUC   float64 `json:"bayes_auc,omitempty"`
	BayesError float64 `json:"bayes_error,omitempty"`
	// Baseline: predicting the mean (MSE) or the majority class.
	BaselineMSE   float64 `json:"baseline_mse,omitempty"`
	BaselineError float64 `json:"baseline_error,omitempty"`
}

// generate writes dir/train/part-NNN.parquet, dir/test/part-000.parquet
// and dir/meta.json for sh (rows scaled by frac when frac > 0).
func generate(dir string, sh shape, seed uint64, logf func(string, ...any)) (*meta, error) {
	t := newTruth(sh, seed)
	train := sh.Rows - sh.Test
	md := &meta{Shape: sh, Seed: seed, Train: train, Test: sh.Test}
	for _, sub := range []string{"train", "test"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	// Files are independent streams (seed, file number): written on all
	// cores.
	type job struct {
		path       string
		rows       int64
		groups     int
		stream     uint64
		test       bool
		ys, bayess []float64
	}
	var jobs []*job
	per := train / int64(sh.Files)
	for f := range sh.Files {
		rows := per
		if f == sh.Files-1 {
			rows = train - per*int64(sh.Files-1)
		}
		jobs = append(jobs, &job{path: filepath.Join(dir, "train", fmt.Sprintf("part-%03d.parquet", f)), rows: rows,
			groups: sh.RowGroups, stream: uint64(f + 1)})
	}
	jobs = append(jobs, &job{path: filepath.Join(dir, "test", "part-000.parquet"), rows: sh.Test, groups: 2, stream: 1 << 20, test: true})
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, 2)
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			var ys, bs *[]float64
			if j.test {
				ys, bs = &j.ys, &j.bayess
			}
			errs[i] = writeFile(j.path, t, seed, j.stream, j.rows, j.groups, ys, bs)
			logf("gen: wrote %s (%d rows)", j.path, j.rows)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	tj := jobs[len(jobs)-1]
	if sh.Binary {
		md.BayesAUC = auc(tj.bayess, tj.ys)
		wrong, ones := 0, 0
		for i, p := range tj.bayess {
			if (p >= 0.5) != (tj.ys[i] == 1) {
				wrong++
			}
			if tj.ys[i] == 1 {
				ones++
			}
		}
		n := float64(len(tj.ys))
		md.BayesError = float64(wrong) / n
		md.BaselineError = math.Min(float64(ones), n-float64(ones)) / n
	} else {
		var se, mean, v float64
		for i, f := range tj.bayess {
			se += (tj.ys[i] - f) * (tj.ys[i] - f)
			mean += tj.ys[i]
		}
		n := float64(len(tj.ys))
		mean /= n
		for _, y := range tj.ys {
			v += (y - mean) * (y - mean)
		}
		md.BayesMSE, md.BaselineMSE = se/n, v/n
	}
	b, _ := json.MarshalIndent(md, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "paper.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	return md, nil
}

// writeFile writes rows rows of t in groups row groups (float32 features,
// as the real HIGGS and SUSY files hold, and a float32 target).
func writeFile(path string, t *truth, seed, stream uint64, rows int64, groups int, ys, bayes *[]float64) error {
	d := t.sh.D
	fields := make([]arrow.Field, d+1)
	for j := range d {
		fields[j] = arrow.Field{Name: fmt.Sprintf("f%02d", j), Type: arrow.PrimitiveTypes.Float32}
	}
	fields[d] = arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float32}
	if !t.sh.Binary {
		fields[d].Type = arrow.PrimitiveTypes.Float64
	}
	sc := arrow.NewSchema(fields, nil)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 4<<20)
	perGroup := (rows + int64(groups) - 1) / int64(groups)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(perGroup), parquet.WithStats(true))
	w, err := pqarrow.NewFileWriter(sc, bw, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, stream))
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	x, out := make([]float64, d), make([]float64, d)
	const batch = 1 << 15
	for done := int64(0); done < rows; {
		// A batch never straddles a row group.
		n := min(int64(batch), rows-done, perGroup-done%perGroup)
		for range n {
			y, p := t.row(r, x, out)
			for j := range d {
				bld.Field(j).(*array.Float32Builder).Append(float32(out[j]))
			}
			if t.sh.Binary {
				bld.Field(d).(*array.Float32Builder).Append(float32(y))
			} else {
				bld.Field(d).(*array.Float64Builder).Append(y)
			}
			if ys != nil {
				*ys = append(*ys, y)
				*bayes = append(*bayes, p)
			}
		}
		rec := bld.NewRecordBatch()
		err := w.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			return err
		}
		done += n
		if done%perGroup == 0 && done < rows {
			w.NewBufferedRowGroup()
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// auc is the area under the ROC curve of scores s for labels y (0/1),
// with ties counted half.
func auc(s, y []float64) float64 {
	idx := make([]int, len(s))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case s[a] < s[b]:
			return -1
		case s[a] > s[b]:
			return 1
		}
		return 0
	})
	var pos, neg, sumRank float64
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && s[idx[j]] == s[idx[i]] {
			j++
		}
		rank := float64(i+j+1) / 2 // mean 1-based rank of the tie
		for k := i; k < j; k++ {
			if y[idx[k]] == 1 {
				pos++
				sumRank += rank
			} else {
				neg++
			}
		}
		i = j
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return (sumRank - pos*(pos+1)/2) / (pos * neg)
}
