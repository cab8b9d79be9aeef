package predictfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/falkon-ooc/falkon-ooc/featenc"
	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/stream"
	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// Options says what a Predictor writes.
type Options struct {
	// Workers is the number of goroutines that predict a batch; 0: one
	// per CPU.
	Workers int
	// Proba writes calibrated class probabilities instead of the scores.
	Proba bool
	// Std computes the predictive standard deviations (regression models
	// fitted with uncertainty); ShowStd writes them (TARGET_std), Z > 0
	// writes the central interval of that many standard deviations
	// (TARGET_lower, TARGET_upper).
	Std, ShowStd bool
	Z            float64
	// Interval > 0 (a level in (0, 1)) sets the multipliers to the
	// model's of that level by IntervalMethod, one per output
	// (model.Model.IntervalMultipliers: by default the conformal ones when
	// the model has them), in place of Z, and implies Std. The method
	// used is Predictor.IntervalMethod, the multipliers Predictor.Z.
	Interval       float64
	IntervalMethod model.IntervalMethod
	// Keep names the input columns copied beside the predictions
	// (tabular.Options.Keep); none may have the name of an output column.
	Keep []string
	// Progress, if set, is called after each batch with the rows so far.
	Progress func(rows int64)
}

// Predictor predicts batches of rows and keeps the counts and metrics.
// It is not safe for concurrent use (it runs its own workers).
type Predictor struct {
	m   *model.Model
	opt Options
	// Ev holds the metrics of the rows with targets (WithTargets).
	Ev          *model.Evaluator
	WithTargets bool
	// Rows counts the rows predicted, Dropped the rows left out for a bad
	// feature, Unscored the predicted rows whose target is bad.
	Rows, Dropped, Unscored int64
	// Std holds the residuals and standard deviations of the rows with
	// targets (Options.Std).
	Std *StdMetrics
	// IntervalMethod is how Z was chosen for Options.Interval.
	IntervalMethod model.IntervalMethod

	cols     [][]float64        // output columns of a batch
	preds    []*model.Predictor // one per part of a batch
	parts    []model.Prediction
	scores   []float64
	x        []float64
	tgt      []float64
	okScores []float64
	prob     []float64 // one row's probabilities
	sd       []float64
	asm      *featenc.Assembler // the model's features from the columns read
	z        []float64          // the intervals' multipliers, per output (nil: none)
}

// New returns a Predictor of m. It is an error to ask for what the model
// cannot give (Proba of a regression model, Std of a model without an
// Uncertainty: model.ErrNoUncertainty), or to keep a column under the
// name of an output column (CheckKeep).
func New(m *model.Model, opt Options) (*Predictor, error) {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Proba && m.Task() == model.TaskRegression {
		return nil, errors.New("a regression model has no class probabilities")
	}
	var method model.IntervalMethod
	var zs []float64
	switch {
	case opt.Interval != 0:
		z, used, err := m.IntervalMultipliers(opt.Interval, opt.IntervalMethod)
		if err != nil {
			return nil, err
		}
		opt.Std, zs, method = true, z, used
	case opt.Z > 0:
		zs = make([]float64, m.K())
		for j := range zs {
			zs[j] = opt.Z
		}
	}
	if opt.Std && m.Uncertainty() == nil {
		return nil, model.ErrNoUncertainty
	}
	p := &Predictor{m: m, opt: opt, Ev: m.NewEvaluator(), IntervalMethod: method, z: zs}
	if err := CheckKeep(opt.Keep, p.Columns()); err != nil {
		return nil, err
	}
	// TableOptions checks the encoding against the features.
	p.asm, _ = featenc.NewAssembler(m.Encoding(), m.Features())
	if opt.Std {
		p.Std = &StdMetrics{resVar: m.Uncertainty().ResidualVar, k: m.K(), m: m, method: opt.IntervalMethod}
	}
	return p, nil
}

// Z returns the multipliers of the standard deviation of the intervals
// written, one per output (nil: none).
func (p *Predictor) Z() []float64 { return slices.Clone(p.z) }

// CheckKeep returns an error when the output would have two columns of
// one name: a kept input column named like one of the output columns
// cols, or named twice. The error names the --keep flag and the column.
func CheckKeep(keep []string, cols []tabular.Column) error {
	for i, c := range keep {
		if slices.Contains(keep[:i], c) {
			return fmt.Errorf("--keep: the column %q is named twice", c)
		}
		for _, o := range cols {
			if o.Name == c {
				return fmt.Errorf("--keep: the input column %q has the name of an output column of predict; the output would have two columns %q (leave it out of --keep, or rename it in the input)", c, c)
			}
		}
	}
	return nil
}

// Files predicts the rows of r, writing them to w in format (w nil:
// metrics only). Reading runs one batch ahead of prediction.
func (p *Predictor) Files(ctx context.Context, r *tabular.Reader, w io.Writer, format tabular.Format) error {
	var tw *tabular.Writer
	if w != nil {
		var err error
		if tw, err = tabular.NewColumnWriter(w, format, r, p.Columns()); err != nil {
			return err
		}
		if err := tw.MarkPredictions(); err != nil {
			return err
		}
	}
	p.WithTargets = r.HasOptional()
	g, gctx := errgroup.WithContext(ctx)
	batches := make(chan *tabular.Batch, 1)
	g.Go(func() error {
		defer close(batches)
		for r.Next(gctx) {
			select {
			case batches <- r.Batch():
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return r.Err()
	})
	g.Go(func() error {
		for b := range batches {
			if err := p.batch(gctx, b, tw); err != nil {
				return err
			}
			b.Release()
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return err
	}
	if tw != nil {
		return tw.Close()
	}
	return nil
}

// batch predicts one batch: its rows split among the workers.
func (p *Predictor) batch(ctx context.Context, b *tabular.Batch, tw *tabular.Writer) error {
	m := p.m
	n, d, k := b.Rows, m.D(), m.K()
	p.Dropped += int64(b.Dropped)
	p.x = grow(p.x, n*d)
	p.asm.Assemble(p.x, b.Cols, n)
	p.scores = grow(p.scores, n*k)
	if p.opt.Std {
		p.sd = grow(p.sd, n*k)
	}
	per := max((n+p.opt.Workers-1)/p.opt.Workers, 64)
	parts := (n + per - 1) / per
	for len(p.preds) < parts {
		p.preds = append(p.preds, m.NewPredictor())
		p.parts = append(p.parts, model.Prediction{})
	}
	want := model.Want(0)
	if p.opt.Std {
		want = model.WantStd
	}
	var g errgroup.Group
	for i := range parts {
		lo, hi := i*per, min((i+1)*per, n)
		// The part's Prediction writes in place into the batch's
		// scores and standard deviations (capacity exactly its rows).
		dst := &p.parts[i]
		dst.Scores = p.scores[lo*k : hi*k : hi*k]
		if p.opt.Std {
			dst.Std = p.sd[lo*k : hi*k : hi*k]
		}
		g.Go(func() error {
			if err := p.preds[i].PredictTo(dst, p.x[lo*d:hi*d], hi-lo, want); err != nil {
				var ve *stream.ValueError
				if errors.As(err, &ve) {
					ve.Row += lo
				}
				return fmt.Errorf("%s: %w", b.File, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.WithTargets {
		if err := p.score(b, n); err != nil {
			return fmt.Errorf("%s: %w", b.File, err)
		}
	}
	p.Rows += int64(n)
	if p.opt.Progress != nil {
		p.opt.Progress(p.Rows)
	}
	if tw == nil {
		return nil
	}
	return tw.Write(b, p.Output(p.scores, p.sd, n))
}

// score adds the batch's rows with finite targets to the metrics.
func (p *Predictor) score(b *tabular.Batch, n int) error {
	m := p.m
	d, k, nt := m.D(), m.K(), len(m.Targets())
	p.tgt = p.tgt[:0]
	p.okScores = p.okScores[:0]
	ok := 0
	var classes []float64
	if m.Labeled() {
		classes = m.Classes()
	}
	d = len(b.Cols) - nt // the columns read before the targets
	for i := range n {
		finite := true
		for t := range nt {
			v := b.Cols[d+t][i]
			finite = finite && !math.IsNaN(v) && !math.IsInf(v, 0)
		}
		if !finite {
			p.Unscored++
			continue
		}
		for t := range nt {
			v := b.Cols[d+t][i]
			if classes != nil { // the label's index among the classes
				j := int(v)
				if float64(j) != v || j < 0 || j >= len(classes) {
					return fmt.Errorf("target %q holds the number %v; the model's classes are the labels %q", m.Targets()[t], v, m.ClassNames())
				}
				v = classes[j]
			}
			p.tgt = append(p.tgt, v)
			if p.Std != nil {
				p.Std.Add(v-p.scores[i*k+t], p.sd[i*k+t])
			}
		}
		p.okScores = append(p.okScores, p.scores[i*k:(i+1)*k]...)
		ok++
	}
	if ok == 0 {
		return nil
	}
	return p.Ev.Add(p.okScores, p.tgt, ok)
}

// Unseen returns, per categorical column with any, the values predicted
// so far whose level the model's encoding does not know: they count as
// the column's "(other)" level (all its features 0 without one).
func (p *Predictor) Unseen() []featenc.Unseen { return p.asm.Unseen() }

// Output returns the output columns of n rows of scores (n × K) and, with
// Options.Std, their standard deviations sd. The columns are reused by the
// next call.
func (p *Predictor) Output(scores, sd []float64, n int) [][]float64 {
	m := p.m
	ncol := len(p.Columns())
	if len(p.cols) != ncol {
		p.cols = make([][]float64, ncol)
	}
	for j := range p.cols {
		p.cols[j] = grow(p.cols[j], n)
	}
	var row []float64
	k := m.K()
	for i := range n {
		row = p.outputRow(scores[i*k:(i+1)*k], row)
		if p.opt.Std {
			row = appendStd(row, scores[i*k:(i+1)*k], sd[i*k:(i+1)*k], p.opt.ShowStd, p.z)
		}
		for j, v := range row {
			p.cols[j][i] = v
		}
	}
	return p.cols
}

// Columns are the output columns: OutputColumns, then those of the
// standard deviations and intervals.
func (p *Predictor) Columns() []tabular.Column {
	cols := OutputColumns(p.m, p.opt.Proba)
	z := 0.0
	if p.z != nil {
		z = 1
	}
	for _, c := range StdColumns(p.m.Targets(), p.opt.Std && p.opt.ShowStd, z) {
		cols = append(cols, tabular.Column{Name: c})
	}
	return cols
}

func grow(s []float64, n int) []float64 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float64, n)
}

// OutputColumns names the prediction columns: the prediction (a label
// column for a model with string classes), then the scores or, with
// proba, the probabilities.
func OutputColumns(m *model.Model, proba bool) []tabular.Column {
	if m.Task() == model.TaskRegression {
		cols := make([]tabular.Column, len(m.Targets()))
		for j, t := range m.Targets() {
			cols[j].Name = t + "_pred"
		}
		return cols
	}
	pred := tabular.Column{Name: m.Targets()[0] + "_pred"}
	if m.Labeled() {
		pred.Labels = m.ClassNames()
	}
	cols := []tabular.Column{pred}
	switch {
	case proba:
		for _, c := range m.ClassNames() {
			cols = append(cols, tabular.Column{Name: "p_" + c})
		}
	case m.Task() == model.TaskBinary:
		cols = append(cols, tabular.Column{Name: "score"})
	default:
		for _, c := range m.ClassNames() {
			cols = append(cols, tabular.Column{Name: "score_" + c})
		}
	}
	return cols
}

// outputRow returns one row of output values for scores (length K): the
// prediction (the class index for a model with string classes, else the
// class value), then the scores or the probabilities.
func (p *Predictor) outputRow(scores []float64, dst []float64) []float64 {
	m := p.m
	dst = dst[:0]
	if m.Task() == model.TaskRegression {
		return append(dst, scores...)
	}
	if m.Labeled() {
		dst = append(dst, float64(m.ClassIndex(scores)))
	} else {
		dst = append(dst, m.Label(scores))
	}
	if !p.opt.Proba {
		return append(dst, scores...)
	}
	p.prob = grow(p.prob, m.NumClasses())
	m.ProbaTo(p.prob, scores, 1)
	return append(dst, p.prob...)
}

// StdColumns are the extra output columns of a regression with --std
// and --interval: TARGET_std per target, then TARGET_lower and
// TARGET_upper per target.
func StdColumns(targets []string, std bool, interval float64) []string {
	var cols []string
	if std {
		for _, t := range targets {
			cols = append(cols, t+"_std")
		}
	}
	if interval > 0 {
		for _, t := range targets {
			cols = append(cols, t+"_lower", t+"_upper")
		}
	}
	return cols
}

// appendStd appends one row's extra columns (see StdColumns) for its
// scores and standard deviations; z holds the intervals' multipliers per
// output (nil: no interval).
func appendStd(dst, scores, sd []float64, std bool, z []float64) []float64 {
	if std {
		dst = append(dst, sd...)
	}
	if z != nil {
		for j, s := range scores {
			dst = append(dst, s-z[j]*sd[j], s+z[j]*sd[j])
		}
	}
	return dst
}

// MetricsLine is the one-line text of m that falkon-ooc and
// falkon-ooc-beam print ("rmse 0.12, mse 0.0144, …").
func MetricsLine(m *model.Metrics) string {
	var parts []string
	add := func(name string, v *float64) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s %.6g", name, *v))
		}
	}
	add("rmse", m.RMSE)
	add("mae", m.MAE)
	add("r2", m.R2)
	add("mse", m.MSE)
	add("rel_error", m.RelErr)
	add("error_rate", m.ErrorRate)
	add("accuracy", m.Accuracy)
	add("balanced_accuracy", m.BalancedAccuracy)
	add("auc", m.AUC)
	add("pr_auc", m.PRAUC)
	add("log_loss", m.LogLoss)
	add("ece", m.ECE)
	return strings.Join(parts, ", ")
}
