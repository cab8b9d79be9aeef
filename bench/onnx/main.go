// Command onnx measures the exported ONNX graph of a model at M = 10⁴
// centres: its size against the model file's, and the CPU latency per row
// of ONNX Runtime (onnxruntime-node, one intra-op thread) beside the
// model's own Predictor and, with -serve, falkon-ooc serve (--workers 1,
// one request at a time over a kept-alive local connection, JSON rows),
// for one row per call and for batches. It is not part of the test suite;
// bench/ONNX.md records its figures with the command, pinned to one core:
//
//	(cd export/onnx/testdata/ort && npm ci --ignore-scripts)
//	go build -o /tmp/falkon-ooc ./cmd/falkon-ooc
//	taskset -c 1 go run ./bench/onnx -m 10000 -d 8 -serve /tmp/falkon-ooc
//
// The model is synthetic: M standardised centres and coefficients drawn
// from N(0, 1), a Gaussian kernel (σ = √d) and, for -std, an uncertainty
// of rank 16. Size and latency depend only on M, d, the outputs and the
// rank, not on the values.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/falkon-ooc/falkon-ooc/export/onnx"
	"github.com/falkon-ooc/falkon-ooc/internal/ortrun"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
)

func main() {
	mFlag := flag.Int("m", 10000, "centres M")
	dFlag := flag.Int("d", 8, "features d")
	batch := flag.Int("batch", 1000, "rows per call of the batched runs")
	serveBin := flag.String("serve", "", "a falkon-ooc binary whose serve to time too")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	if err := ortrun.Available(); err != nil {
		log.Fatal(err)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("load at start: %s", load)
	dir, err := os.MkdirTemp("", "onnx-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	mm, d := *mFlag, *dFlag
	rows := make([]float64, *batch*d)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range rows {
		rows[i] = 10 + 3*rng.NormFloat64()
	}
	fmt.Printf("\n| model | precision | model file | .onnx | µs/row, 1 row: Predictor | serve | ONNX Runtime | µs/row, %d rows: Predictor | serve | ONNX Runtime |\n|---|---|---|---|---|---|---|---|---|---|\n", *batch)
	for _, c := range []struct {
		name string
		prec kernel.Precision
		std  bool
	}{
		{"regression", kernel.Float64, false},
		{"regression", kernel.Float32, false},
		{"regression, --std (rank 16)", kernel.Float64, true},
	} {
		m := synthetic(mm, d, c.prec, c.std)
		mpath := filepath.Join(dir, "m.falkon")
		if err := m.Save(mpath); err != nil {
			log.Fatal(err)
		}
		opath := filepath.Join(dir, "m.onnx")
		if _, err := onnx.WriteFile(opath, m, onnx.Options{Std: c.std}); err != nil {
			log.Fatal(err)
		}
		want := model.Want(0)
		if c.std {
			want = model.WantStd
		}
		p1 := predictorLatency(m, rows[:d], 1, want, 2000)
		pb := predictorLatency(m, rows, *batch, want, 20)
		res, err := ortrun.Run(dir, []ortrun.Request{
			{Model: opath, X: rows, Rows: *batch, Cols: d, Float32: c.prec == kernel.Float32, Batch: 1, Repeat: 2000, Threads: 1},
			{Model: opath, X: rows, Rows: *batch, Cols: d, Float32: c.prec == kernel.Float32, Batch: *batch, Repeat: 20, Threads: 1},
		})
		if err != nil {
			log.Fatal(err)
		}
		s1, sb := "–", "–"
		if *serveBin != "" {
			a, b := serveLatency(*serveBin, mpath, m.Features(), rows, *batch, c.std)
			s1, sb = fmt.Sprintf("%.1f", a*1e6), fmt.Sprintf("%.1f", b*1e6)
		}
		fmt.Printf("| %s | %s | %s | %s | %.1f | %s | %.1f | %.1f | %s | %.1f |\n", c.name, c.prec, size(mpath), size(opath),
			p1*1e6, s1, res[0].SecondsPerRun*1e6, pb*1e6, sb, res[1].SecondsPerRun/float64(*batch)*1e6)
	}
}

// serveLatency starts bin serve on the model file and returns the seconds
// per row of requests of one row and of batch rows, sent one at a time.
func serveLatency(bin, mpath string, features []string, x []float64, batch int, std bool) (one, many float64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "serve", "--model", mpath, "--addr", addr, "--workers", "1", "--log-level", "error")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	url := "http://" + addr
	for i := 0; ; i++ {
		if r, err := http.Get(url + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				break
			}
		}
		if i > 200 {
			log.Fatal("serve did not become ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	body := func(rows int) []byte {
		var b strings.Builder
		b.WriteString(`{"rows": [`)
		d := len(features)
		for r := range rows {
			if r > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('{')
			for j, f := range features {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q: %s", f, strconv.FormatFloat(x[r*d+j], 'g', -1, 64))
			}
			b.WriteByte('}')
		}
		b.WriteString("]}")
		return []byte(b.String())
	}
	q := "/v1/predict"
	if std {
		q += "?std=true"
	}
	time1 := func(rows, calls int) float64 {
		data := body(rows)
		post := func() {
			r, err := http.Post(url+q, "application/json", bytes.NewReader(data))
			if err != nil {
				log.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				log.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != 200 {
				log.Fatalf("serve answered %d", r.StatusCode)
			}
		}
		for range 3 {
			post()
		}
		t0 := time.Now()
		for range calls {
			post()
		}
		return time.Since(t0).Seconds() / float64(calls*rows)
	}
	return time1(1, 2000), time1(batch, 20)
}

// predictorLatency returns the seconds per row of the model's Predictor
// on calls of rows rows, after a warm-up call.
func predictorLatency(m *model.Model, x []float64, rows int, want model.Want, calls int) float64 {
	p := m.NewPredictor()
	var dst model.Prediction
	if err := p.PredictTo(&dst, x, rows, want); err != nil {
		log.Fatal(err)
	}
	t0 := time.Now()
	for range calls {
		if err := p.PredictTo(&dst, x, rows, want); err != nil {
			log.Fatal(err)
		}
	}
	return time.Since(t0).Seconds() / float64(calls*rows)
}

func size(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	return fmt.Sprintf("%.2f MB", float64(st.Size())/1e6)
}

// synthetic returns a regression model of M random centres in d
// features.
func synthetic(mm, d int, prec kernel.Precision, std bool) *model.Model {
	rng := rand.New(rand.NewPCG(3, 4))
	norm := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	features := make([]string, d)
	mean, sd := make([]float64, d), make([]float64, d)
	for j := range d {
		features[j] = fmt.Sprintf("x%d", j)
		mean[j], sd[j] = 10, 3
	}
	p := model.Params{
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(float64(d))}, Precision: prec,
		Task: model.TaskRegression, Features: features, Targets: []string{"y"},
		FeatureMean: mean, FeatureStd: sd, TargetMean: []float64{1},
		M: mm, D: d, K: 1, Centers: norm(mm * d), Alpha: norm(mm),
	}
	if std {
		const r = 16
		sigma := make([]float64, r)
		for i := range sigma {
			sigma[i] = float64(r - i)
		}
		p.Uncertainty = &model.Uncertainty{Method: model.UncertaintyPrecond, Rank: r, Prior: 1, Sigma: sigma,
			Lambda: 1e-3, FitLambda: 1e-6, Scale: []float64{1}, Noise: []float64{0.01}, ResidualVar: []float64{1}}
		w := norm(mm * r)
		for i := range w {
			w[i] /= math.Sqrt(float64(mm))
		}
		p.UncertaintyFactor = w
	}
	m, err := model.New(p)
	if err != nil {
		log.Fatal(strings.TrimSpace(err.Error()))
	}
	return m
}
