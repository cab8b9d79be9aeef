package onnx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"google.golang.org/protobuf/proto"

	pb "github.com/falkon-ooc/falkon-ooc/export/onnx/internal/onnxpb"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
)

// Opset is the version of the default ONNX operator set ("ai.onnx") the
// graphs use, and IRVersion the ONNX IR version of the files: opset 13's
// (ONNX 1.8), read by every ONNX Runtime since 1.6.
const (
	Opset     = 13
	IRVersion = 7
)

// Names of the graph's input and outputs.
const (
	// Input is the features, N × D, raw (the graph standardises them),
	// in the order of Model.Features.
	Input = "features"
	// OutputValue is a regression model's predictions, N × K.
	OutputValue = "value"
	// OutputStd is the predictive standard deviation of each value, N ×
	// K (Options.Std): the deviation of a new target around the value,
	// noise included, as Model.PredictStdTo gives it.
	OutputStd = "std"
	// OutputScores is a classifier's scores, N × K: one column for a
	// binary model, one per class otherwise.
	OutputScores = "scores"
	// OutputProbabilities is a classifier's class probabilities, N × C
	// in the order of Classes (each row sums to 1), when the model has
	// them (Model.HasProba).
	OutputProbabilities = "probabilities"
	// OutputClassIndex is a classifier's predicted class, as an index
	// into Classes: int64, N.
	OutputClassIndex = "class_index"
	// OutputLabel is a classifier's predicted class, N: its name (a
	// string tensor) when the classes are string labels
	// (Model.Labeled), else its value in the graph's float type.
	OutputLabel = "label"
)

// ErrUnsupported marks a model or option that has no ONNX form; the
// error names it.
var ErrUnsupported = errors.New("cannot be exported to ONNX")

// Options configures an export. The zero value exports the model as it
// predicts: in its own precision, without standard deviations.
type Options struct {
	// Precision is the float type of the graph's input, constants,
	// arithmetic and float outputs; nil means the model's precision
	// (Model.Precision).
	Precision *kernel.Precision
	// Std adds OutputStd; the model must have an Uncertainty.
	Std bool
	// Version is the falkon-ooc version written into the file
	// (producer_version and the metadata); "" writes "unknown".
	Version string
}

// Info describes an exported graph.
type Info struct {
	Precision kernel.Precision `json:"precision"`
	Opset     int              `json:"opset"`
	Input     string           `json:"input"`
	Outputs   []string         `json:"outputs"`
}

// Marshal returns m as an ONNX model file and a description of its graph.
// A kernel, calibration or option without an ONNX form gives an error
// matching ErrUnsupported that names it.
func Marshal(m *model.Model, opt Options) ([]byte, Info, error) {
	mp, info, err := build(m, opt)
	if err != nil {
		return nil, Info{}, err
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(mp)
	if err != nil {
		return nil, Info{}, fmt.Errorf("onnx: encode: %w", err)
	}
	return data, info, nil
}

// WriteFile writes m as an ONNX model file to path atomically (a
// temporary name in the same directory, fsync, rename): path holds its
// old content or the complete new file.
func WriteFile(path string, m *model.Model, opt Options) (Info, error) {
	data, info, err := Marshal(m, opt)
	if err != nil {
		return Info{}, err
	}
	err = fileutil.WriteFile(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return Info{}, fmt.Errorf("onnx: write %s: %w", path, err)
	}
	return info, nil
}

// build assembles the ModelProto.
func build(m *model.Model, opt Options) (*pb.ModelProto, Info, error) {
	prec := m.Precision()
	if opt.Precision != nil {
		prec = *opt.Precision
	}
	if prec == kernel.BF16 {
		prec = kernel.Float32 // the graph computes in float32, which BF16's cross term approximates
	}
	if prec != kernel.Float64 && prec != kernel.Float32 {
		return nil, Info{}, fmt.Errorf("onnx: Options.Precision %v: want float64 or float32", prec)
	}
	if opt.Std && m.Uncertainty() == nil {
		return nil, Info{}, errors.New("onnx: Options.Std: the model has no predictive standard deviations (fit it with an uncertainty)")
	}
	for _, c := range m.Requires() {
		// decision: a binary threshold, which classify applies; conformal
		// and conformal-outputs (one calibration per output): they
		// calibrate intervals, which the graph does not compute.
		if c != "decision" && c != "conformal" && c != "conformal-outputs" {
			return nil, Info{}, fmt.Errorf("onnx: the model's capability %q: %w", c, ErrUnsupported)
		}
	}
	b := newBuilder(prec == kernel.Float32)
	kmat, err := kernelBlock(b, m)
	if err != nil {
		return nil, Info{}, err
	}
	elem := b.io
	k := m.K()
	var outputs []*pb.ValueInfoProto
	switch m.Task() {
	case model.TaskRegression:
		if opt.Std {
			stdOutputs(b, m, kmat)
			outputs = append(outputs,
				tensorInfo(OutputValue, "the predictions, one column per target", elem, "N", k),
				tensorInfo(OutputStd, "the predictive standard deviation of each prediction, noise included", elem, "N", k))
			break
		}
		b.output(OutputValue, "Add", []string{b.op("k_alpha", "MatMul", []string{kmat, alpha(b, m)}), targetMean(b, m)})
		outputs = append(outputs, tensorInfo(OutputValue, "the predictions, one column per target", elem, "N", k))
	case model.TaskBinary, model.TaskMulticlass:
		scores := b.output(OutputScores, "Add", []string{b.op("k_alpha", "MatMul", []string{kmat, alpha(b, m)}), targetMean(b, m)})
		outputs = append(outputs, tensorInfo(OutputScores, "the classifier's scores", elem, "N", k))
		proba, p1, err := probabilities(b, m, scores)
		if err != nil {
			return nil, Info{}, err
		}
		if proba {
			outputs = append(outputs, tensorInfo(OutputProbabilities, "the calibrated class probabilities, in the order of the classes", elem, "N", len(m.Classes())))
		}
		labelElem := classify(b, m, scores, p1)
		outputs = append(outputs,
			tensorInfo(OutputClassIndex, "the predicted class as an index into the classes", pb.TensorProto_INT64, "N"),
			tensorInfo(OutputLabel, "the predicted class", labelElem, "N"))
	default:
		return nil, Info{}, fmt.Errorf("onnx: task %q: %w", m.Task(), ErrUnsupported)
	}
	meta, err := metadata(m, opt, prec)
	if err != nil {
		return nil, Info{}, err
	}
	info := Info{Precision: prec, Opset: Opset, Input: Input}
	for _, o := range outputs {
		info.Outputs = append(info.Outputs, o.Name)
	}
	version := opt.Version
	if version == "" {
		version = "unknown"
	}
	mp := &pb.ModelProto{
		IrVersion:       IRVersion,
		OpsetImport:     []*pb.OperatorSetIdProto{{Domain: "", Version: Opset}},
		ProducerName:    "falkon-ooc",
		ProducerVersion: version,
		DocString:       "A FALKON kernel model f(x) = Σⱼ αⱼ K(z(x), cⱼ) + μ exported by falkon-model.",
		MetadataProps:   meta,
		Graph: &pb.GraphProto{
			Name:        "falkon_ooc",
			Node:        b.nodes,
			Initializer: b.inits,
			Input:       []*pb.ValueInfoProto{tensorInfo(Input, "the raw features, one row per example, in the order of the metadata's features", elem, "N", m.D())},
			Output:      outputs,
		},
	}
	return mp, info, nil
}

// kernelBlock adds the nodes that compute the N × M kernel block
// K(z(x), C) from the input and returns its name, a float64 tensor. It
// follows the kernel package's arithmetic: the standardisation
// (x − mean)·invStd, then for distance kernels the scaling by √a/σⱼ,
// r² = ‖x‖² + ‖c‖² − 2x·c clamped at 0, and the kernel's function of r²
// (kernel/doc.go, "Accuracy"). As the model's float32 precision does, a
// float32 graph maps the rows in float64, computes the block in float32
// and casts it to float64 for the products with α: so the N × M work is
// float32, and the sums over M centres keep float64's accuracy.
func kernelBlock(b *builder, m *model.Model) (string, error) {
	kern := m.Kernel()
	mm, d := m.M(), m.D()
	f32 := b.io == pb.TensorProto_FLOAT
	z := Input
	if f32 {
		z = b.cast("features_f64", Input, pb.TensorProto_DOUBLE)
	}
	// toBlock switches to the block's precision: float32 in a float32
	// graph.
	toBlock := func(v string) string {
		if !f32 {
			return v
		}
		b.cur = pb.TensorProto_FLOAT
		return b.cast(v+"_f32", v, pb.TensorProto_FLOAT)
	}
	kmat, err := kernelFunc(b, kern, mm, d, m.Centers(), z, m.FeatureMean(), m.FeatureStd(), toBlock)
	if err != nil || !f32 {
		return kmat, err
	}
	b.cur = pb.TensorProto_DOUBLE
	return b.cast("kernel_f64", kmat, pb.TensorProto_DOUBLE), nil
}

// kernelFunc adds the nodes of kernelBlock from the float64 rows z.
func kernelFunc(b *builder, kern kernel.Kernel, mm, d int, c []float64, z string, mean, std []float64, toBlock func(string) string) (string, error) {
	if mean != nil {
		z = b.op("centred", "Sub", []string{z, b.floats("feature_mean", []int64{int64(d)}, mean)})
		z = b.op("z", "Mul", []string{z, b.floats("feature_inv_std", []int64{int64(d)}, model.InvStd(std))})
	}
	ct := func(scale []float64, factor float64) []float64 { // factor·(C·diag(scale))ᵀ, D × M
		t := make([]float64, d*mm)
		for i := range mm {
			for j := range d {
				v := c[i*d+j]
				if scale != nil {
					v *= scale[j]
				}
				t[j*mm+i] = factor * v
			}
		}
		return t
	}
	if !kern.Kind.IsDistance() {
		switch kern.Kind {
		case kernel.Linear, kernel.Polynomial:
		default:
			return "", fmt.Errorf("onnx: kernel %q: %w", kern.Kind, ErrUnsupported)
		}
		gamma := kern.Gamma
		if gamma == 0 {
			gamma = 1
		}
		// γ·z·Cᵀ + c₀ in one pass: γ folded into the centres, c₀ as the
		// bias of a Gemm.
		z = toBlock(z)
		ctg := b.floats("centers_t", []int64{int64(d), int64(mm)}, ct(nil, gamma))
		g := b.op("dot", "Gemm", []string{z, ctg, b.scalar("coef0", kern.Coef0)})
		if kern.Kind == kernel.Linear || kern.Degree == 1 {
			return g, nil
		}
		return power(b, g, kern.Degree), nil
	}
	var a float64
	switch kern.Kind {
	case kernel.Gaussian:
		a = 0.5
	case kernel.Laplacian, kernel.Matern12:
		a = 1
	case kernel.Matern32:
		a = 3
	case kernel.Matern52:
		a = 5
	default:
		return "", fmt.Errorf("onnx: kernel %q: %w", kern.Kind, ErrUnsupported)
	}
	inv := make([]float64, d)
	for j := range inv {
		s := kern.Sigma
		if kern.Sigmas != nil {
			s = kern.Sigmas[j]
		}
		inv[j] = math.Sqrt(a) / s
	}
	zs := toBlock(b.op("z_scaled", "Mul", []string{z, b.floats("length_scale_inv", []int64{int64(d)}, inv)}))
	xn := b.op("row_norm2", "ReduceSumSquare", []string{zs}, attrInts("axes", 1), attrInt("keepdims", 1))
	// One Gemm gives r² = ‖x‖² + ‖c‖² − 2x·c (or −r² for the Gaussian)
	// from [s | ‖s‖²] and [∓2Cᵀ; ±1] with ±‖c‖² as its bias: a single
	// pass over the N × M block where MatMul, Add and Sub would take
	// three. (Scaling by 2 is exact, so the sum's rounding is that of the
	// kernel package's fma(−2, x·c, ‖x‖² + ‖c‖²) up to its order.)
	sign := 1.0 // r²
	if kern.Kind == kernel.Gaussian {
		sign = -1 // −r²
	}
	cs := ct(inv, -2*sign)
	for range mm {
		cs = append(cs, sign)
	}
	cn := centreNorms(c, inv, mm, d, b.f32())
	for i := range cn {
		cn[i] *= sign
	}
	aug := b.op("z_norm2", "Concat", []string{zs, xn}, attrInt("axis", 1))
	r2 := b.op("r2_raw", "Gemm", []string{aug,
		b.floats("centers_scaled_t2", []int64{int64(d + 1), int64(mm)}, cs),
		b.floats("center_norm2", []int64{int64(mm)}, cn)})
	if kern.Kind == kernel.Gaussian {
		return b.op("kernel", "Exp", []string{b.op("neg_r2", "Min", []string{r2, b.scalar("zero", 0)})}), nil
	}
	r2 = b.op("r2", "Max", []string{r2, b.scalar("zero", 0)})
	r := b.op("r", "Sqrt", []string{r2})
	e := b.op("exp_neg_r", "Exp", []string{b.op("neg_r", "Neg", []string{r})})
	switch kern.Kind {
	case kernel.Laplacian, kernel.Matern12:
		return e, nil
	case kernel.Matern32: // (1 + r)·e^(−r), r = √3‖x−c‖/σ
		one := b.scalar("one", 1)
		return b.op("kernel", "Mul", []string{b.op("poly", "Add", []string{r, one}), e}), nil
	default: // Matern52: (1 + r + r²/3)·e^(−r), r = √5‖x−c‖/σ
		t := b.op("poly_r2", "Mul", []string{r2, b.scalar("third", 1.0/3)})
		t = b.op("poly_r", "Add", []string{t, r})
		t = b.op("poly", "Add", []string{t, b.scalar("one", 1)})
		return b.op("kernel", "Mul", []string{t, e}), nil
	}
}

// power adds g^n (n ≥ 2) by binary powering, as the kernel package's
// polynomial kernel computes it: the result starts at g, never at 1.
func power(b *builder, g string, n int) string {
	r, base := g, g
	n--
	for step := 0; n > 0; step++ {
		if n&1 != 0 {
			r = b.op(fmt.Sprintf("pow_acc%d", step), "Mul", []string{r, base})
		}
		n >>= 1
		if n > 0 {
			base = b.op(fmt.Sprintf("pow_base%d", step), "Mul", []string{base, base})
		}
	}
	return b.op("kernel", "Identity", []string{r})
}

// centreNorms returns ‖cᵢ·diag(inv)‖² for the M centres, summed as the
// kernel package sums them (fused multiply-adds, in float32 from the
// rounded centres for a float32 graph).
func centreNorms(c, inv []float64, m, d int, f32 bool) []float64 {
	n := make([]float64, m)
	for i := range m {
		if f32 {
			var acc float32
			for j := range d {
				v := float32(c[i*d+j] * inv[j])
				acc = float32(float64(v)*float64(v) + float64(acc))
			}
			n[i] = float64(acc)
			continue
		}
		acc := 0.0
		for j := range d {
			v := c[i*d+j] * inv[j]
			acc = math.FMA(v, v, acc)
		}
		n[i] = acc
	}
	return n
}

func alpha(b *builder, m *model.Model) string {
	return b.floats("alpha", []int64{int64(m.M()), int64(m.K())}, m.Alpha())
}

func targetMean(b *builder, m *model.Model) string {
	return b.floats("target_mean", []int64{int64(m.K())}, m.TargetMean())
}

// stdOutputs adds OutputValue and OutputStd from the kernel block kmat,
// as the model computes them (Model.PredictStdTo): one product
// K·[α | W] with the M × r factor W, then
//
//	v   = max(prior − Σᵢ wᵢ·(K·W)ᵢ², 0),  wᵢ = σᵢ/(σᵢ + λ)
//	std = √(scale·v + noise)              (per output)
func stdOutputs(b *builder, m *model.Model, kmat string) {
	u := m.Uncertainty()
	mm, k, r := m.M(), m.K(), u.Rank
	al, w := m.Alpha(), m.UncertaintyFactor()
	aug := make([]float64, 0, mm*(k+r))
	for i := range mm {
		aug = append(aug, al[i*k:(i+1)*k]...)
		aug = append(aug, w[i*r:(i+1)*r]...)
	}
	p := b.op("k_alpha_w", "MatMul", []string{kmat, b.floats("alpha_w", []int64{int64(mm), int64(k + r)}, aug)})
	axis := b.ints("slice_axis", []int64{1}, []int64{1})
	at := func(name string, v int) string { return b.ints(name, []int64{1}, []int64{int64(v)}) }
	scores := b.op("k_alpha", "Slice", []string{p, at("slice_0", 0), at("slice_k", k), axis})
	b.output(OutputValue, "Add", []string{scores, targetMean(b, m)})
	g := b.op("proj", "Slice", []string{p, at("slice_k0", k), at("slice_kr", k+r), axis})
	wdir := make([]float64, r)
	for i, s := range u.Sigma {
		wdir[i] = s / (s + u.Lambda)
	}
	q := b.op("proj_sq", "Mul", []string{g, g})
	q = b.op("explained", "MatMul", []string{q, b.floats("direction_weights", []int64{int64(r), 1}, wdir)})
	v := b.op("variance_raw", "Sub", []string{b.scalar("prior", u.Prior), q})
	v = b.op("variance_unit", "Max", []string{v, b.scalar("zero", 0)})
	v = b.op("variance_scaled", "Mul", []string{v, b.floats("variance_scale", []int64{int64(k)}, u.Scale)})
	v = b.op("variance", "Add", []string{v, b.floats("noise_variance", []int64{int64(k)}, u.Noise)})
	b.output(OutputStd, "Sqrt", []string{v})
}

// probabilities adds OutputProbabilities from the scores s as the model
// computes them (Model.ProbaTo) and reports whether the model has them.
// For a binary model it also returns p1, the probability of Classes()[1]
// that its decision compares with the threshold: the uncalibrated
// min(max((s + 1)/2, 0), 1) when the model has no probabilities.
func probabilities(b *builder, m *model.Model, s string) (ok bool, p1 string, err error) {
	binary := m.Task() == model.TaskBinary
	if !m.HasProba() {
		if binary {
			p := b.op("p_uncalibrated_2", "Add", []string{s, b.scalar("one", 1)})
			p = b.op("p_uncalibrated_raw", "Mul", []string{p, b.scalar("half", 0.5)})
			p = b.op("p_uncalibrated_0", "Max", []string{p, b.scalar("zero", 0)})
			p1 = b.op("p_positive", "Min", []string{p, b.scalar("one", 1)})
		}
		return false, p1, nil
	}
	cal := m.Calibration()
	switch {
	case cal == nil && binary: // the logistic loss: σ(f)
		p1 = b.op("p_positive", "Sigmoid", []string{s})
		pairs(b, p1)
	case cal == nil: // the logistic loss, one against the rest: σ(f_c) normalised
		sg := b.op("sigmoid_scores", "Sigmoid", []string{s})
		sum := b.op("sigmoid_sum", "ReduceSum", []string{sg, b.ints("class_axis", []int64{1}, []int64{1})}, attrInt("keepdims", 1))
		b.output(OutputProbabilities, "Div", []string{sg, sum})
	case binary && cal.Method == model.CalibrationPlatt: // σ(A·s + B)
		l := b.op("platt_as", "Mul", []string{s, b.scalar("platt_a", cal.A)})
		l = b.op("platt_logit", "Add", []string{l, b.scalar("platt_b", cal.B)})
		p1 = b.op("p_positive", "Sigmoid", []string{l})
		pairs(b, p1)
	case !binary && cal.Method == model.CalibrationTemperature: // softmax(s/T)
		l := b.op("scores_over_t", "Mul", []string{s, b.scalar("inv_temperature", 1/cal.Temperature)})
		b.output(OutputProbabilities, "Softmax", []string{l}, attrInt("axis", 1))
	default:
		return false, "", fmt.Errorf("onnx: calibration %q of a %s model: %w", cal.Method, m.Task(), ErrUnsupported)
	}
	return true, p1, nil
}

// pairs adds OutputProbabilities = [1 − p, p] from a binary model's
// N × 1 probability p of Classes()[1].
func pairs(b *builder, p string) {
	q := b.op("p_negative", "Sub", []string{b.scalar("one", 1), p})
	b.output(OutputProbabilities, "Concat", []string{q, p}, attrInt("axis", 1))
}

// classify adds OutputClassIndex and OutputLabel from the scores s, as
// Model.ClassIndex decides (binary: the probability p1 of Classes()[1] at
// least the decision threshold, 1/2 unless the model stores one;
// multiclass: the first largest score), and returns the label's element
// type.
func classify(b *builder, m *model.Model, s, p1 string) pb.TensorProto_DataType {
	if m.Task() == model.TaskBinary {
		d, _ := m.Decision()
		pos := b.op("positive", "GreaterOrEqual", []string{p1, b.scalar("threshold", d.Threshold)})
		ci := b.op("class_index_col", "Cast", []string{pos}, attrInt("to", int64(pb.TensorProto_INT64)))
		b.op(OutputClassIndex, "Reshape", []string{ci, b.ints("flat", []int64{1}, []int64{-1})})
	} else {
		b.op(OutputClassIndex, "ArgMax", []string{s}, attrInt("axis", 1), attrInt("keepdims", 0), attrInt("select_last_index", 0))
	}
	var classes string
	elem := b.io
	if m.Labeled() {
		classes = b.strings("class_names", m.ClassNames())
		elem = pb.TensorProto_STRING
	} else {
		cl := m.Classes()
		classes = b.floatsOf(b.io, "class_values", []int64{int64(len(cl))}, cl)
	}
	b.op(OutputLabel, "Gather", []string{classes, OutputClassIndex}, attrInt("axis", 0))
	return elem
}

// metadata returns the model's description as metadata_props.
func metadata(m *model.Model, opt Options, prec kernel.Precision) ([]*pb.StringStringEntryProto, error) {
	var props []*pb.StringStringEntryProto
	add := func(k, v string) { props = append(props, &pb.StringStringEntryProto{Key: k, Value: v}) }
	addJSON := func(k string, v any) error {
		j, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("onnx: metadata %s: %w", k, err)
		}
		add(k, string(j))
		return nil
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	version := opt.Version
	if version == "" {
		version = "unknown"
	}
	kern := m.Kernel()
	add("falkon_ooc_version", version)
	add("task", string(m.Task()))
	if err := addJSON("features", m.Features()); err != nil {
		return nil, err
	}
	if err := addJSON("targets", m.Targets()); err != nil {
		return nil, err
	}
	if m.Task() != model.TaskRegression {
		if err := addJSON("classes", m.Classes()); err != nil {
			return nil, err
		}
		if err := addJSON("class_names", m.ClassNames()); err != nil {
			return nil, err
		}
	}
	if err := addJSON("kernel", kern); err != nil {
		return nil, err
	}
	if kern.Kind.IsDistance() {
		if kern.Sigmas != nil {
			if err := addJSON("sigma", kern.Sigmas); err != nil {
				return nil, err
			}
		} else {
			add("sigma", f(kern.Sigma))
		}
	}
	if lambda, ok := lambdaOf(m); ok {
		add("lambda", f(lambda))
	}
	add("centers", strconv.Itoa(m.M()))
	add("precision", prec.String())
	add("model_precision", m.Precision().String())
	if opt.Std {
		u := m.Uncertainty()
		add("std_method", string(u.Method))
		add("std_rank", strconv.Itoa(u.Rank))
	}
	if d, ok := m.Decision(); ok {
		add("threshold", f(d.Threshold))
	}
	if cal := m.Calibration(); cal != nil {
		if err := addJSON("calibration", cal); err != nil {
			return nil, err
		}
	}
	return props, nil
}

// lambdaOf returns λ from the trainer's record of the model's
// configuration (Model.Provenance), if it has one.
func lambdaOf(m *model.Model) (float64, bool) {
	cfg, _ := m.Provenance()
	var c struct {
		Lambda *float64 `json:"lambda"`
	}
	if json.Unmarshal(cfg, &c) != nil || c.Lambda == nil {
		return 0, false
	}
	return *c.Lambda, true
}
