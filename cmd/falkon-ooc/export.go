package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/export/onnx"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

func init() {
	register(&command{
		Name:  "export",
		Short: "write a model as an ONNX graph, for ONNX Runtime and other ONNX tools",
		Usage: "--format onnx --out FILE.onnx [--precision float32|float64] [--std] MODEL",
		Long: `
Export writes MODEL, a model made by 'falkon-ooc fit' or 'tune', as an
ONNX graph that ONNX Runtime (servers, Triton, browsers, phones) and other
ONNX tools run without falkon-ooc. The graph uses standard operators at
opset 13, no custom ones, and computes what predict computes: it takes
the raw features (input "features", N × D, in the model's feature order)
and standardises them itself.

Its outputs: for regression "value" (N × outputs) and, with --std, "std",
the predictive standard deviation (models fitted with fit --uncertainty);
for classification "scores" (as predict writes them), "probabilities"
(N × classes, calibrated as predict --proba gives them; absent for a
model without calibration), "class_index" (int64) and "label" (the class
name for a string target, else the class value). The model's features,
targets, task, classes, kernel, σ, λ, M, precision and calibration, and
this program's version, are in the file's metadata (metadata_props).

--precision float32 makes the input and outputs float32 and computes the
N × M kernel block in float32, as a model fitted with --precision float32
predicts; the default is the model's own precision. A batch of N rows
needs N × M kernel values in memory: feed large models a few thousand
rows at a time. NaN or ±Inf features give NaN outputs, where predict
refuses the row.`,
		Flags: exportFlags,
	})
}

type exportOpts struct {
	format, out, precision string
	std, jsonOut           bool
}

func exportFlags(fs *flag.FlagSet) func(context.Context, *env, []string) error {
	o := &exportOpts{}
	fs.StringVar(&o.format, "format", "", "the `format` to write: onnx (required)")
	fs.StringVar(&o.out, "out", "", "the `file` to write (required)")
	fs.StringVar(&o.precision, "precision", "", "the graph's float `type`: float32 or float64 (default: the model's precision)")
	fs.BoolVar(&o.std, "std", false, "add the output std, the predictive standard deviation (models fitted with fit --uncertainty)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the summary as one JSON object")
	return func(ctx context.Context, e *env, args []string) error {
		return runExport(e, o, args)
	}
}

// exportResult is the summary of export (--json).
type exportResult struct {
	Version string `json:"version"`
	Model   string `json:"model"`
	Out     string `json:"out"`
	Format  string `json:"format"`
	Bytes   int64  `json:"bytes"`
	onnx.Info
}

func runExport(e *env, o *exportOpts, args []string) error {
	switch {
	case o.format == "":
		return usagef("--format is required: onnx")
	case o.format != "onnx":
		return usagef("--format %s: the formats are onnx", clipArg(o.format))
	case o.out == "":
		return usagef("--out FILE is required")
	case o.out == "-":
		return usagef("--out -: the graph is binary; name a file")
	case len(args) == 0:
		return usagef("no MODEL given")
	case len(args) > 1:
		return usagef("one MODEL, got %d arguments: %s", len(args), clipArg(strings.Join(args, " ")))
	}
	var opt onnx.Options
	if o.precision != "" {
		p, err := kernel.ParsePrecision(o.precision)
		if err != nil {
			return usagef("--precision must be float32 or float64, not %q", clipArg(o.precision))
		}
		opt.Precision = &p
	}
	path := args[0]
	if err := prepareOut(e, "--out", o.out, false, inputPaths(path)...); err != nil {
		return err
	}
	m, err := loadModel(path)
	if err != nil {
		return err
	}
	if o.std {
		switch {
		case m.Task() != ooc.TaskRegression:
			return fmt.Errorf("--std: %s is a %s model; predictive standard deviations are for regression (the graph has the calibrated probabilities)", path, m.Task())
		case m.Uncertainty() == nil:
			return fmt.Errorf("--std: model %s has no predictive standard deviations: it was fitted without --uncertainty; refit with fit --uncertainty", path)
		}
		opt.Std = true
	}
	opt.Version = version
	data, info, err := onnx.Marshal(m.Model, opt)
	if err != nil {
		return fmt.Errorf("model %s: %w", path, err)
	}
	if err := writeFileAtomic(o.out, data); err != nil {
		return fmt.Errorf("--out %s: %w", clipArg(o.out), err)
	}
	res := exportResult{Version: version, Model: path, Out: o.out, Format: o.format, Bytes: int64(len(data)), Info: info}
	if o.jsonOut {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s): ONNX opset %d, %s, input %s [N × %d], outputs %s\n",
		o.out, mb(res.Bytes), info.Opset, info.Precision, info.Input, m.D(), strings.Join(info.Outputs, ", "))
	return nil
}
