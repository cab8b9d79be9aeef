// Package onnx exports a fitted falkon-ooc model as an ONNX graph, so that
// ONNX Runtime (servers, Triton, browsers, phones) can run it without
// falkon-ooc.
//
// # Overview
//
// A FALKON model predicts f(x) = Σⱼ αⱼ K(z(x), cⱼ) + μ (Rudi, Carratino,
// Rosasco, "FALKON: An Optimal Large Scale Kernel Method", NIPS 2017). The
// graph computes it with standard operators of the default domain at
// opset 13 (no custom operators), as the kernel package does:
//
//	z   = (x − mean)·invStd                       Sub, Mul
//	s   = z·diag(√a/σⱼ)                           Mul (distance kernels)
//	r²  = [s | ‖s‖²]·[−2Cᵀ; 1] + ‖c‖²            ReduceSumSquare, Concat, Gemm
//	K   = exp(min(−r², 0))                        Gaussian (a = 1/2; the Gemm gives −r²)
//	      exp(−r), r = √max(r², 0)                Laplacian, Matérn 1/2 (a = 1)
//	      (1 + r)·exp(−r)                         Matérn 3/2 (a = 3)
//	      (1 + r + r²/3)·exp(−r)                  Matérn 5/2 (a = 5)
//	      (z·(γC)ᵀ + c₀)^degree                   linear, polynomial (Gemm, Mul chain)
//	f   = K·α + μ                                 MatMul, Add
//
// with C the model's standardised centres scaled as s is. With
// Options.Std a regression graph adds the predictive standard deviation
// as Model.PredictStdTo computes it: K·[α | W] in one MatMul, then
// √(scale·max(prior − Σᵢ wᵢ·(K·W)ᵢ², 0) + noise). A classifier
// adds its probabilities as the model computes them (Platt: σ(A·f + B);
// temperature: softmax(f/T); a model of the logistic loss: σ(f),
// normalised over classes), its class index (binary: the probability of
// the second class at least the model's decision threshold, uncalibrated
// (f + 1)/2 clipped to [0, 1] for a model without probabilities;
// multiclass: the first largest score: GreaterOrEqual, Cast or ArgMax) and its label
// (Gather from the class names or values). docs/ONNX.md lists the inputs,
// outputs and metadata.
//
// A float64 graph reproduces Model.PredictTo to about 1e-13 of the
// outputs' magnitude. A float32 graph takes and returns float32 tensors
// and, like the model's float32 precision, computes the N × M kernel
// block in float32 but the standardisation and the products with α (and
// everything after) in float64: it is as near the exact values as the
// model's own float32 predictions are.
//
// The graph holds the centres and α as constants: about 8·M·(D + 2 + K)
// bytes in float64 (4·M·(D + 2) + 8·M·K in float32), and 8·M·r more for
// the factor of the standard deviation. Running it needs an N × M
// block per batch of N rows, so feed it batches of a few thousand rows
// at most when M is large.
//
// Rows are not checked: a NaN or ±Inf feature gives NaN outputs, where
// Model.Predict refuses the row.
//
// # Concurrency
//
// Marshal and WriteFile only read the model (which is immutable) and may
// run concurrently.
//
// # Invariants
//
//   - The graph's input is named Input; its outputs OutputValue (and
//     OutputStd) for regression, OutputScores, OutputProbabilities (when
//     the model has probabilities), OutputClassIndex and OutputLabel for
//     classifiers. Names and shapes do not depend on the data.
//   - Marshal is deterministic: the same model and options give the
//     same bytes.
//   - WriteFile never leaves a partial file under its final name.
package onnx
