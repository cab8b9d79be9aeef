// Package ortrun runs exported ONNX graphs in ONNX Runtime for the tests
// and benchmarks of export/onnx and the command: it writes the rows to a
// file, runs export/onnx/testdata/ort/run.js under node (onnxruntime-node,
// the CPU runtime), and reads back every output.
//
// The runtime is installed by `npm ci --ignore-scripts` in
// export/onnx/testdata/ort; Available says why it cannot run when it is
// missing, so that tests skip with that reason.
package ortrun

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Dir returns the directory of run.js and its package.json.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "export", "onnx", "testdata", "ort")
}

// Available returns nil when node and onnxruntime-node can run, else why
// not (with the command that installs the runtime).
func Available() error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("node is not installed")
	}
	dir := Dir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "onnxruntime-node", "package.json")); err != nil {
		return fmt.Errorf("onnxruntime-node is not installed: run npm ci --ignore-scripts in %s", dir)
	}
	return nil
}

// Request is one graph to run on rows × cols float64 rows (row-major).
type Request struct {
	Model      string
	X          []float64
	Rows, Cols int
	// Float32 feeds the rows as float32 (a float32 graph).
	Float32 bool
	// Batch is the rows per run; 0 runs all at once.
	Batch int
	// Repeat, when > 0, times Repeat runs of the first Batch rows (after
	// three warm-up runs) instead of returning outputs.
	Repeat  int
	Threads int
}

// Output is one output of a graph, over all rows: Data holds numbers
// (float and int64 outputs) or Strings (string outputs).
type Output struct {
	Type    string
	Dims    []int
	Data    []float64
	Strings []string
}

// Result is the outputs of one Request by name, or its timing.
type Result struct {
	Outputs       map[string]*Output
	SecondsPerRun float64
}

// Run runs the requests in one node process, in order, using dir for its
// files.
func Run(dir string, reqs []Request) ([]Result, error) {
	type jsonReq struct {
		Model   string `json:"model"`
		Input   string `json:"input"`
		Rows    int    `json:"rows"`
		Cols    int    `json:"cols"`
		Float32 bool   `json:"float32"`
		Batch   int    `json:"batch,omitempty"`
		Out     string `json:"out"`
		Threads int    `json:"threads,omitempty"`
		Repeat  int    `json:"repeat,omitempty"`
	}
	jr := make([]jsonReq, len(reqs))
	for i, r := range reqs {
		if len(r.X) != r.Rows*r.Cols {
			return nil, fmt.Errorf("request %d: %d values for %d × %d rows", i, len(r.X), r.Rows, r.Cols)
		}
		in := filepath.Join(dir, fmt.Sprintf("rows%d.f64", i))
		buf := make([]byte, 8*len(r.X))
		for j, v := range r.X {
			binary.LittleEndian.PutUint64(buf[8*j:], math.Float64bits(v))
		}
		if err := os.WriteFile(in, buf, 0o644); err != nil {
			return nil, err
		}
		model, err := filepath.Abs(r.Model)
		if err != nil {
			return nil, err
		}
		jr[i] = jsonReq{Model: model, Input: in, Rows: r.Rows, Cols: r.Cols, Float32: r.Float32, Batch: r.Batch,
			Out: filepath.Join(dir, fmt.Sprintf("out%d.json", i)), Threads: r.Threads, Repeat: r.Repeat}
	}
	reqPath := filepath.Join(dir, "requests.json")
	b, err := json.Marshal(jr)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(reqPath, b, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command("node", filepath.Join(Dir(), "run.js"), reqPath)
	cmd.Dir = Dir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node run.js: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	res := make([]Result, len(reqs))
	for i, r := range jr {
		data, err := os.ReadFile(r.Out)
		if err != nil {
			return nil, err
		}
		var out struct {
			Outputs map[string]struct {
				Type string            `json:"type"`
				Dims []int             `json:"dims"`
				Data []json.RawMessage `json:"data"`
			} `json:"outputs"`
			SecondsPerRun float64 `json:"seconds_per_run"`
		}
		if err := json.Unmarshal(data, &out); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Out, err)
		}
		res[i] = Result{Outputs: map[string]*Output{}, SecondsPerRun: out.SecondsPerRun}
		for name, o := range out.Outputs {
			ro := &Output{Type: o.Type, Dims: o.Dims}
			for _, v := range o.Data {
				if o.Type == "string" {
					var s string
					if err := json.Unmarshal(v, &s); err != nil {
						return nil, fmt.Errorf("%s: output %s: %w", r.Out, name, err)
					}
					ro.Strings = append(ro.Strings, s)
					continue
				}
				var f *float64 // null: NaN
				if err := json.Unmarshal(v, &f); err != nil {
					return nil, fmt.Errorf("%s: output %s: %w", r.Out, name, err)
				}
				if f == nil {
					ro.Data = append(ro.Data, math.NaN())
				} else {
					ro.Data = append(ro.Data, *f)
				}
			}
			res[i].Outputs[name] = ro
		}
	}
	return res, nil
}
