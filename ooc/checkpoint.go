package ooc

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/ooc/internal/engine"
	"github.com/falkon-ooc/falkon-ooc/precond"
)

const (
	checkpointMagic   = "FKCP"
	checkpointVersion = 1
)

// Checkpoint is the state of a fit after a CG iteration: with the same
// source and configuration, Fit with Config.Resume set to it continues
// exactly where the interrupted fit stopped, and ends with the same model
// as an uninterrupted fit.
type Checkpoint struct {
	// Fingerprint identifies the source, the resolved configuration and
	// the centres the state belongs to.
	Fingerprint string    `json:"fingerprint"`
	Iteration   int       `json:"iteration"`
	M           int       `json:"centers"`
	K           int       `json:"outputs"`
	TargetMean  []float64 `json:"target_mean"`
	// WeightSum is the sum of the row weights of a weighted fit (the n
	// of λ·n), 0 for an unweighted one.
	WeightSum float64 `json:"weight_sum,omitempty"`
	// ClassWeights are the balanced class weights (Config.ClassWeight).
	ClassWeights []float64 `json:"class_weights,omitempty"`
	// PrecondWeights are the weights at the centres a weighted fit's
	// preconditioner sees (the CG state is in its coordinates).
	PrecondWeights []float64 `json:"precond_weights,omitempty"`
	// NewtonSteps are the logistic loss's steps done (Iteration counts
	// them; Beta holds α, M × K, P the last step Δ, whose line search is
	// the next pass's (zero: none), and the other CG arrays are zero).
	NewtonSteps []NewtonStep `json:"newton_steps,omitempty"`
	Beta        []float64    `json:"-"`
	R           []float64    `json:"-"`
	P           []float64    `json:"-"`
	RS          []float64    `json:"-"`
	BN          []float64    `json:"-"`
	// With Config.Patience: the best validated iteration so far, its
	// metric, the metric of the last improvement by MinImprovement and
	// the validations since, and the best iteration's β (M × k). Absent from
	// checkpoints written without patience, and from older ones.
	BestIteration int       `json:"best_iteration,omitempty"`
	BestMetric    float64   `json:"best_metric,omitempty"`
	RefMetric     float64   `json:"ref_metric,omitempty"`
	Since         int       `json:"since,omitempty"`
	BestBeta      []float64 `json:"-"`
	// Validated is the last iteration whose validation the fields above
	// include (0: none, or a checkpoint that does not say). A fit that
	// scores its validation rows in the CG passes validates iteration i
	// in the pass after it, so its checkpoint after iteration i may not
	// include i yet: a resumed fit validates it first.
	Validated int `json:"validated,omitempty"`
	// Settings is the calling program's own record of how the fit was
	// asked for (falkon-ooc fit keeps its flags here, so that --resume
	// continues the fit as it was); ooc stores it and does not read it.
	Settings map[string]string `json:"settings,omitempty"`
}

// ErrCheckpointMismatch is matched by the error for a checkpoint from
// another source or configuration.
var ErrCheckpointMismatch = fmt.Errorf("checkpoint does not match this fit")

// checkpointWriter writes a fit's checkpoints, the squared loss's after
// each CG iteration and the logistic loss's after each Newton step alike:
// it completes the record with what identifies the fit (its fingerprint)
// and hands it to RunOptions.Checkpoint, naming the step in its error.
type checkpointWriter struct {
	save func(*Checkpoint) error // RunOptions.Checkpoint; nil writes none
	fp   string
}

// on reports whether checkpoints are written: the callers build no record
// otherwise.
func (w checkpointWriter) on() bool { return w.save != nil }

// write saves c, the state after step ("iteration", "Newton step")
// c.Iteration.
func (w checkpointWriter) write(c *Checkpoint, step string) error {
	if w.save == nil {
		return nil
	}
	c.Fingerprint = w.fp
	if c.TargetMean == nil {
		c.TargetMean = make([]float64, c.K)
	}
	if err := w.save(c); err != nil {
		return fmt.Errorf("checkpoint after %s %d: %w", step, c.Iteration, err)
	}
	return nil
}

// cgCheckpoint returns the record of the CG state st with target means mu.
func cgCheckpoint(st *cgState, mu []float64) *Checkpoint {
	return &Checkpoint{
		Iteration: st.Iter, M: len(st.Beta) / len(st.RS), K: len(st.RS),
		TargetMean: slices.Clone(mu),
		Beta:       slices.Clone(st.Beta), R: slices.Clone(st.R), P: slices.Clone(st.P),
		RS: slices.Clone(st.RS), BN: slices.Clone(st.BN),
	}
}

// setWeights records the sum of the row weights (the n of λ·n), the
// balanced class weights and the preconditioner's weights at the centres
// of a weighted fit. The slices are copied.
func (c *Checkpoint) setWeights(sum float64, class, precond []float64) {
	c.WeightSum, c.ClassWeights, c.PrecondWeights = sum, slices.Clone(class), slices.Clone(precond)
}

// setStop records the stopping rule's state t and the β of its best
// iterate (M × k; nil: the fit keeps none, as without patience): the
// best iterate only once there is one and its β is kept.
func (c *Checkpoint) setStop(t *engine.Tracker, best []float64) {
	c.Validated = t.Validated
	if t.BestIter > 0 && best != nil {
		c.BestIteration, c.BestMetric, c.RefMetric, c.Since, c.BestBeta = t.BestIter, t.Best, t.Ref, t.Since, slices.Clone(best)
	}
}

// stop returns the stopping rule's state c saved and its best iterate's β
// (nil when it saved none).
func (c *Checkpoint) stop() (engine.Tracker, []float64) {
	t := engine.NewTracker()
	t.Validated = c.Validated
	if c.BestIteration > 0 {
		t.Best, t.BestIter, t.Ref, t.Since = c.BestMetric, c.BestIteration, c.RefMetric, c.Since
		return t, slices.Clone(c.BestBeta)
	}
	return t, nil
}

func (c *Checkpoint) state() *cgState {
	return &cgState{Iter: c.Iteration, Beta: slices.Clone(c.Beta), R: slices.Clone(c.R),
		P: slices.Clone(c.P), RS: slices.Clone(c.RS), BN: slices.Clone(c.BN)}
}

func (c *Checkpoint) matches(fp string, m, k int) error {
	if c.Fingerprint != fp {
		return fmt.Errorf("%w: it was written for other data, centres or settings "+
			"(fingerprint %.12s…, this fit %.12s…); resume with the same data and Config, or start afresh without RunOptions.Resume",
			ErrCheckpointMismatch, c.Fingerprint, fp)
	}
	if c.M != m || c.K != k || len(c.Beta) != m*k || len(c.RS) != k {
		return fmt.Errorf("%w: shapes M=%d k=%d, this fit M=%d k=%d", ErrCheckpointMismatch, c.M, c.K, m, k)
	}
	return nil
}

// WriteFile saves the checkpoint atomically.
func (c *Checkpoint) WriteFile(path string) error {
	return fileutil.WriteFile(path, 0o644, c.encode)
}

// encode writes the checkpoint's bytes, as WriteFile stores them, to w.
func (c *Checkpoint) encode(w io.Writer) error {
	arrays := [][]float64{c.Beta, c.R, c.P, c.RS, c.BN}
	if c.BestIteration > 0 {
		arrays = append(arrays, c.BestBeta)
	}
	return writeContainer(w, checkpointMagic, checkpointVersion, c, arrays...)
}

// ReadCheckpoint reads a checkpoint written by WriteFile.
func ReadCheckpoint(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	return decodeCheckpoint(path, data)
}

// decodeCheckpoint decodes the bytes of the checkpoint file path.
func decodeCheckpoint(path string, data []byte) (*Checkpoint, error) {
	ferr := func(err error) error { return &FileError{Kind: "checkpoint", Path: path, Err: err} }
	_, meta, payload, err := readContainer(data, checkpointMagic, checkpointVersion, checkpointVersion)
	if err != nil {
		return nil, ferr(err)
	}
	c := &Checkpoint{}
	if err := json.Unmarshal(meta, c); err != nil {
		return nil, ferr(fmt.Errorf("%w: metadata: %v", ErrFormat, err))
	}
	const maxDim = 1 << 24
	if c.M < 1 || c.K < 1 || c.M > maxDim || c.K > maxDim || len(c.TargetMean) != c.K || c.Iteration < 0 {
		return nil, ferr(fmt.Errorf("%w: implausible shape M=%d k=%d", ErrFormat, c.M, c.K))
	}
	if c.BestIteration < 0 || c.BestIteration > c.Iteration || c.Since < 0 || math.IsNaN(c.BestMetric) || math.IsNaN(c.RefMetric) ||
		c.Validated < 0 || c.Validated > c.Iteration {
		return nil, ferr(fmt.Errorf("%w: implausible best iteration %d of %d", ErrFormat, c.BestIteration, c.Iteration))
	}
	mk := c.M * c.K
	lens := []int{mk, mk, mk, c.K, c.K}
	if c.BestIteration > 0 {
		lens = append(lens, mk)
	}
	arrs, err := decodeArrays(payload, lens...)
	if err != nil {
		return nil, ferr(err)
	}
	c.Beta, c.R, c.P, c.RS, c.BN = arrs[0], arrs[1], arrs[2], arrs[3], arrs[4]
	if c.BestIteration > 0 {
		c.BestBeta = arrs[5]
	}
	return c, nil
}

// fingerprint hashes what a resumed fit must share with the original,
// that is what changes the result: the source's shape and chunking (the
// order of the sums), its column names, the resolved Config except
// Iterations, Tolerance, Patience and MinImprovement (which only say when to stop, so a finished
// fit can be extended), the standardisation, the task and classes, and
// the centres and their weights (which depend on the data and the
// seed). Workers, progress, validation and the executor are not in it.
func fingerprint(plan *FitPlan, cs *centreSample, enc targetEncoding) string {
	h := sha256.New()
	w := func(v any) {
		b, _ := json.Marshal(v)
		h.Write(b)
	}
	cfg := plan.Config
	cfg.Iterations, cfg.Tolerance, cfg.Patience, cfg.MinImprovement, cfg.NewtonSteps = 0, 0, 0, 0, 0
	cfg.Uncertainty, cfg.UncertaintyRank = "", 0 // computed after CG, from its result
	cfg.Precision = 0                            // hashed on its own below, as before Config carried it
	// The memory plan's choices as a Config that left them to it spelled
	// them: a checkpoint of either resumes with the other.
	if cfg.Preconditioner == precond.MethodCholesky {
		cfg.Preconditioner = ""
	}
	if cfg.PrecondPrecision == precond.Float64 {
		cfg.PrecondPrecision = ""
	}
	src := plan.src
	w([]any{plan.N, plan.D, plan.TargetColumns, src.NumChunks(), cfg, plan.Config.Precision, plan.Features, plan.Targets,
		cs.std.mean, cs.std.std, enc.task, enc.classes})
	var buf [8]byte
	for i := range src.NumChunks() {
		binary.LittleEndian.PutUint64(buf[:], uint64(src.ChunkRows(i)))
		h.Write(buf[:])
	}
	for _, a := range [][]float64{cs.centres, cs.weights} {
		for _, v := range a {
			binary.LittleEndian.PutUint64(buf[:], math.Float64bits(v))
			h.Write(buf[:])
		}
	}
	if plan.Weight != "" {
		w(plan.Weight) // a weighted fit never resumes an unweighted one
		if plan.WeightExp != 0 {
			w(plan.WeightExp) // the scale of the checkpoint's sums
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
