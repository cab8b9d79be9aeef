package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

type env struct {
	dataDir, fashionDir string
	susyDir             string // -susy: bench/paper's susy data
	quick               bool
	workers             int
	seed                uint64
}

// table holds rows in memory, row-major: x is n × len(features).
type table struct {
	x        []float64
	y        []float64
	features []string
	target   string
}

func (t *table) n() int { return len(t.y) }
func (t *table) d() int { return len(t.features) }

// subset returns the rows idx of t (copied).
func (t *table) subset(idx []int) *table {
	d := t.d()
	s := &table{features: t.features, target: t.target, x: make([]float64, 0, len(idx)*d), y: make([]float64, 0, len(idx))}
	for _, i := range idx {
		s.x = append(s.x, t.x[i*d:(i+1)*d]...)
		s.y = append(s.y, t.y[i])
	}
	return s
}

// randomSplit permutes 0..n-1 with a seeded generator and cuts it so that
// the second part has frac of the rows.
func randomSplit(n int, frac float64, seed uint64, stream uint64) (a, b []int) {
	rng := rand.New(rand.NewPCG(seed, stream))
	p := rng.Perm(n)
	cut := n - int(math.Round(frac*float64(n)))
	a, b = p[:cut], p[cut:]
	return a, b
}

// hp is one choice of hyper-parameters.
type hp struct {
	sigma, lambda float64
}

// task is one fitted model on a data set: a target, a grid and a final M.
type task struct {
	label      string
	kind       ooc.Task
	classify   bool
	multiclass bool
	// label transforms the loaded target (e.g. delay → delay > 15); nil keeps it.
	targetFn   func(float64) float64
	targetName string
	// grid: sigmas × lambdas at gridM on the validation split; fixed skips it.
	sigmas, lambdas []float64
	fixed           *hp
	gridM, finalM   int
	gridIters       int
	iters           int
	// gridTrain, gridVal > 0 subsample the grid's training and validation
	// rows (big data sets); the final fit always uses the whole training part.
	gridTrain, gridVal int
	precision          kernel.Precision
	noStandardize      bool
	published          string
	note               string
}

type dataset struct {
	name  string
	files func(*env) []string
	// load returns the training and test parts.
	load  func(*env) (train, test *table, err error)
	tasks func(*env) []task
	// valFrac is the share of the training part held out for validation.
	valFrac float64
}

func (ds *dataset) missing(e *env) string {
	for _, f := range ds.files(e) {
		if _, err := os.Stat(f); err != nil {
			return f
		}
	}
	return ""
}

type gridPoint struct {
	hp
	metric float64
	auc    float64
	secs   float64
}

type result struct {
	data, task                string
	nTrain, nTest, d, m       int
	kernel                    string
	hp                        hp
	iters                     int
	precision                 string
	metric                    string
	published                 string
	fitSecs                   float64
	grid                      []gridPoint
	gridM, gridTrain, gridVal int
	note                      string
	classify                  bool
}

const tableHeader = "| data | n_train | n_test | d | M | kernel | σ | λ | iterations | precision | test metric | published | fit s |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"

func (r result) row() string {
	name := r.data
	if r.task != "" {
		name += " " + r.task
	}
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %s | %.3g | %.0e | %d | %s | %s | %s | %.1f |",
		name, r.nTrain, r.nTest, r.d, r.m, r.kernel, r.hp.sigma, r.hp.lambda, r.iters, r.precision, r.metric, r.published, r.fitSecs)
}

func (r result) gridSummary() string {
	name := r.data
	if r.task != "" {
		name += " " + r.task
	}
	what := "RMSE"
	if r.classify {
		what = "error rate"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- %s: M = %d, %d training / %d validation rows, validation %s (best marked *):", name, r.gridM, r.gridTrain, r.gridVal, what)
	best := r.hp
	for _, g := range r.grid {
		mark := ""
		if g.hp == best {
			mark = "*"
		}
		fmt.Fprintf(&b, " σ=%g λ=%.0e: %.4f%s;", g.sigma, g.lambda, g.metric, mark)
	}
	return strings.TrimSuffix(b.String(), ";") + "\n"
}

// writeParquet writes t (with target transformed by fn) as a Parquet file.
func writeParquet(path string, t *table, targetName string, fn func(float64) float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cols := append(append([]string(nil), t.features...), targetName)
	bw := bufio.NewWriterSize(f, 1<<20)
	pw, err := tabular.NewWriter(bw, tabular.Parquet, nil, cols)
	if err != nil {
		f.Close()
		return err
	}
	d := t.d()
	const batch = 1 << 16
	buf := make([][]float64, d+1)
	for lo := 0; lo < t.n(); lo += batch {
		hi := min(lo+batch, t.n())
		for j := range buf {
			buf[j] = buf[j][:0]
		}
		for i := lo; i < hi; i++ {
			for j := range d {
				buf[j] = append(buf[j], t.x[i*d+j])
			}
			y := t.y[i]
			if fn != nil {
				y = fn(y)
			}
			buf[d] = append(buf[d], y)
		}
		if err := pw.Write(nil, buf); err != nil {
			f.Close()
			return err
		}
	}
	if err := pw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// store writes t as Parquet and ingests it into a chunk store under dir.
func makeStore(ctx context.Context, e *env, dir, name string, t *table, tk *task) (*chunkstore.Reader, error) {
	pq := filepath.Join(dir, name+".parquet")
	if err := writeParquet(pq, t, tk.targetName, tk.targetFn); err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	out := filepath.Join(dir, name+".store")
	chunk := 4096
	if t.n() > 500_000 {
		chunk = 0 // the store's default
	}
	// The features by name: ingest drops columns it finds constant unless
	// named, and a small test part can be constant where training is not.
	if _, err := ingest.Run(ctx, []string{pq}, ingest.Config{Out: out, Features: t.features, Targets: []string{tk.targetName}, ChunkRows: chunk, Workers: e.workers}); err != nil {
		return nil, fmt.Errorf("ingest %s: %w", name, err)
	}
	os.Remove(pq)
	return chunkstore.Open(out)
}

func fitEval(ctx context.Context, e *env, tk *task, train, eval *chunkstore.Reader, m, iters int, h hp) (*ooc.Model, *ooc.Metrics, error) {
	if rows := int(train.Rows()); m > rows {
		m = rows
	}
	cfg := ooc.Config{
		Centers:       m,
		Kernel:        kernel.Kernel{Kind: kernel.Gaussian, Sigma: h.sigma},
		Lambda:        h.lambda,
		Iterations:    iters,
		Precision:     tk.precision,
		Seed:          e.seed,
		Task:          tk.kind,
		NoStandardize: tk.noStandardize,
	}
	// The reader reports its columns and statistics (stream.Columner,
	// stream.Statser), so the fit needs no statistics pass.
	model, err := ooc.Fit(ctx, train, cfg, ooc.RunOptions{Workers: e.workers})
	if err != nil {
		return nil, nil, fmt.Errorf("fit σ=%g λ=%g M=%d: %w", h.sigma, h.lambda, m, err)
	}
	met, err := model.Evaluate(ctx, eval, ooc.PredictOptions{Workers: e.workers})
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate: %w", err)
	}
	return model, met, nil
}

func score(tk *task, met *ooc.Metrics) float64 {
	if tk.classify {
		return *met.ErrorRate
	}
	return *met.RMSE
}

func run(ctx context.Context, e *env, ds *dataset) ([]result, error) {
	t0 := time.Now()
	train, test, err := ds.load(e)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	logf("%s: loaded %d training and %d test rows, %d features in %.1f s", ds.name, train.n(), test.n(), train.d(), time.Since(t0).Seconds())
	dir, err := os.MkdirTemp("", "falkon-accuracy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	// The validation split is carved from the training part only.
	subIdx, valIdx := randomSplit(train.n(), ds.valFrac, e.seed, 0x76616c)

	var out []result
	for i, tk := range ds.tasks(e) {
		tdir := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(tdir, 0o755); err != nil {
			return out, err
		}
		res := result{
			data: ds.name, task: tk.label, nTrain: train.n(), nTest: test.n(), d: train.d(),
			kernel: "gaussian", precision: tk.precision.String(), published: tk.published,
			classify: tk.classify, note: tk.note,
		}
		best := hp{}
		if tk.fixed != nil {
			best = *tk.fixed
		} else {
			gi, vi := subIdx, valIdx
			if tk.gridTrain > 0 && tk.gridTrain < len(gi) {
				gi = gi[:tk.gridTrain]
			}
			if tk.gridVal > 0 && tk.gridVal < len(vi) {
				vi = vi[:tk.gridVal]
			}
			res.gridM, res.gridTrain, res.gridVal = tk.gridM, len(gi), len(vi)
			gs, err := makeStore(ctx, e, tdir, "gridtrain", train.subset(gi), &tk)
			if err != nil {
				return out, err
			}
			vs, err := makeStore(ctx, e, tdir, "val", train.subset(vi), &tk)
			if err != nil {
				gs.Close()
				return out, err
			}
			bestScore, bestAUC := math.Inf(1), 0.0
			for _, s := range tk.sigmas {
				for _, l := range tk.lambdas {
					ts := time.Now()
					_, met, err := fitEval(ctx, e, &tk, gs, vs, tk.gridM, tk.gridIters, hp{s, l})
					if err != nil {
						gs.Close()
						vs.Close()
						return out, err
					}
					g := gridPoint{hp: hp{s, l}, metric: score(&tk, met), secs: time.Since(ts).Seconds()}
					if met.AUC != nil {
						g.auc = *met.AUC
					}
					res.grid = append(res.grid, g)
					logf("%s %s grid σ=%g λ=%.0e: validation %.4f (%.1f s)", ds.name, tk.label, s, l, g.metric, g.secs)
					if g.metric < bestScore || (g.metric == bestScore && g.auc > bestAUC) {
						bestScore, bestAUC, best = g.metric, g.auc, g.hp
					}
				}
			}
			gs.Close()
			vs.Close()
			logf("%s %s: best σ=%g λ=%.0e (validation %.4f)", ds.name, tk.label, best.sigma, best.lambda, bestScore)
		}
		trs, err := makeStore(ctx, e, tdir, "train", train, &tk)
		if err != nil {
			return out, err
		}
		tes, err := makeStore(ctx, e, tdir, "test", test, &tk)
		if err != nil {
			trs.Close()
			return out, err
		}
		model, met, err := fitEval(ctx, e, &tk, trs, tes, tk.finalM, tk.iters, best)
		trs.Close()
		tes.Close()
		if err != nil {
			return out, err
		}
		res.hp, res.m, res.iters, res.fitSecs = best, model.M(), model.Training().Iterations, model.Training().Seconds
		switch {
		case tk.multiclass:
			res.metric = fmt.Sprintf("accuracy %.4f", 1-*met.ErrorRate)
		case tk.classify:
			res.metric = fmt.Sprintf("error %.4f, AUC %.4f", *met.ErrorRate, *met.AUC)
		default:
			res.metric = fmt.Sprintf("RMSE %.4f", *met.RMSE)
		}
		if n := len(model.Training().Residuals); n > 0 {
			logf("%s %s: final residual %.3g after %d iterations", ds.name, tk.label, model.Training().Residuals[n-1], model.Training().Iterations)
		}
		out = append(out, res)
		os.RemoveAll(tdir)
	}
	return out, nil
}
