// Command serveload measures falkon-ooc serve on loopback against the
// in-process Predictor on the same rows (bench/SERVE.md).
//
//	serveload model -m 2000 -d 28 -out m2000.falkon   a synthetic model
//	serveload inproc -model F -rows R -clients C       the Predictor's limit
//	serveload load -url U -model F -rows R -clients C  requests to a server
//	serveload grid -bin falkon-ooc -models F,F …       the whole grid, pinned
//
// inproc and load print one JSON object: latency percentiles and rows/s.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/model"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: serveload model|inproc|load|grid [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	m := fs.Int("m", 2000, "model: centres")
	d := fs.Int("d", 28, "model: features")
	out := fs.String("out", "", "model: the file to write")
	modelPath := fs.String("model", "", "the model file")
	models := fs.String("models", "", "grid: model files, comma-separated")
	url := fs.String("url", "http://127.0.0.1:8080", "load: the server")
	rows := fs.Int("rows", 1, "rows per request (per Predictor call)")
	clients := fs.Int("clients", 1, "concurrent clients (goroutines)")
	dur := fs.Duration("duration", 3*time.Second, "how long to measure")
	bin := fs.String("bin", "falkon-ooc", "grid: the falkon-ooc binary")
	reps := fs.Int("reps", 2, "grid: repetitions, interleaved; the best is kept")
	clientList := fs.String("clients-list", "1,16,256", "grid: clients")
	rowList := fs.String("rows-list", "1,256", "grid: rows per request")
	serverCPU := fs.String("server-cpu", "0", "grid: taskset CPU list of the server and the in-process run")
	clientCPU := fs.String("client-cpu", "1", "grid: taskset CPU list of the load generator")
	maxDelay := fs.String("max-delay", "0s", "grid: the server's --max-delay")
	form := fs.String("form", "json", "load: the body, json (rows keyed by name) or arrow (an Arrow IPC stream)")
	formList := fs.String("forms", "json,arrow", "grid: the body forms (arrow only for more than one row)")
	fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "model":
		err = makeModel(*m, *d, *out)
	case "inproc":
		err = inproc(*modelPath, *rows, *clients, *dur)
	case "load":
		err = load(*url, *modelPath, *rows, *clients, *dur, *form)
	case "grid":
		err = grid(*bin, strings.Split(*models, ","), ints(*clientList), ints(*rowList), strings.Split(*formList, ","), *reps, *dur, *serverCPU, *clientCPU, *maxDelay)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

func ints(s string) []int {
	var v []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			panic(err)
		}
		v = append(v, n)
	}
	return v
}

// makeModel writes a Gaussian-kernel regression model with m random
// centres in d features: what a fit at that M and d would write, for
// timing.
func makeModel(m, d int, out string) error {
	rng := rand.New(rand.NewPCG(uint64(m), uint64(d)))
	rnd := func(n int, s float64) []float64 {
		a := make([]float64, n)
		for i := range a {
			a[i] = s * rng.NormFloat64()
		}
		return a
	}
	feats := make([]string, d)
	mean, std := make([]float64, d), make([]float64, d)
	for j := range feats {
		feats[j] = fmt.Sprintf("x%d", j)
		std[j] = 1
	}
	mod, err := model.New(model.Params{
		Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: math.Sqrt(float64(d))}, Precision: kernel.Float64,
		Task: model.TaskRegression, Features: feats, Targets: []string{"y"}, FeatureMean: mean, FeatureStd: std,
		TargetMean: []float64{0.5}, M: m, D: d, K: 1, Centers: rnd(m*d, 1), Alpha: rnd(m, 0.01),
	})
	if err != nil {
		return err
	}
	return mod.Save(out)
}

// result is one measurement.
type result struct {
	Mode       string  `json:"mode"`
	Rows       int     `json:"rows"`
	Clients    int     `json:"clients"`
	Requests   int     `json:"requests"`
	Failed     int     `json:"failed"`
	P50        float64 `json:"p50_ms"`
	P99        float64 `json:"p99_ms"`
	P999       float64 `json:"p999_ms"`
	RowsPerSec float64 `json:"rows_per_s"`
}

func summarise(mode string, rows, clients int, lat [][]time.Duration, failed int, wall time.Duration) result {
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	q := func(p float64) float64 {
		if len(all) == 0 {
			return math.NaN()
		}
		return float64(all[min(int(p*float64(len(all))), len(all)-1)]) / 1e6
	}
	return result{Mode: mode, Rows: rows, Clients: clients, Requests: len(all), Failed: failed,
		P50: q(0.5), P99: q(0.99), P999: q(0.999), RowsPerSec: float64(len(all)*rows) / wall.Seconds()}
}

// features returns rows × d random raw features.
func features(rows, d int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, rows*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// inproc calls Predictor.PredictTo on rows rows from clients goroutines,
// each with its own Predictor.
func inproc(path string, rows, clients int, dur time.Duration) error {
	m, err := model.Load(path)
	if err != nil {
		return err
	}
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for c := range clients {
		wg.Go(func() {
			p := m.NewPredictor()
			x := features(rows, m.D(), uint64(c))
			var pred model.Prediction
			l := make([]time.Duration, 0, 1<<16)
			for {
				t := time.Now()
				if t.After(deadline) {
					break
				}
				if err := p.PredictTo(&pred, x, rows, 0); err != nil {
					panic(err)
				}
				l = append(l, time.Since(t))
			}
			lat[c] = l
		})
	}
	wg.Wait()
	return json.NewEncoder(os.Stdout).Encode(summarise("inproc", rows, clients, lat, 0, time.Since(start)))
}

// load sends requests of rows rows from clients goroutines for dur: JSON
// ({"rows": [{"x0": …}, …]}) or an Arrow IPC stream of float64 columns.
func load(url, path string, rows, clients int, dur time.Duration, form string) error {
	m, err := model.Load(path)
	if err != nil {
		return err
	}
	feats := m.Features()
	bodies := make([][]byte, clients)
	ct := "application/json"
	for c := range clients {
		x := features(rows, len(feats), uint64(c))
		if form == "arrow" {
			ct = "application/vnd.apache.arrow.stream"
			if bodies[c], err = arrowBody(feats, x, rows); err != nil {
				return err
			}
			continue
		}
		var b bytes.Buffer
		b.WriteString(`{"rows":[`)
		for i := range rows {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('{')
			for j, f := range feats {
				if j > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%q:%s", f, strconv.FormatFloat(x[i*len(feats)+j], 'g', -1, 64))
			}
			b.WriteByte('}')
		}
		b.WriteString("]}")
		bodies[c] = b.Bytes()
	}
	tr := &http.Transport{MaxIdleConnsPerHost: clients + 1, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	lat := make([][]time.Duration, clients)
	fails := make([]int, clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for c := range clients {
		wg.Go(func() {
			l := make([]time.Duration, 0, 1<<16)
			for {
				t := time.Now()
				if t.After(deadline) {
					break
				}
				req, _ := http.NewRequestWithContext(context.Background(), "POST", url+"/v1/predict", bytes.NewReader(bodies[c]))
				req.Header.Set("Content-Type", ct)
				resp, err := hc.Do(req)
				if err != nil {
					fails[c]++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					fails[c]++
					continue
				}
				l = append(l, time.Since(t))
			}
			lat[c] = l
		})
	}
	wg.Wait()
	failed := 0
	for _, f := range fails {
		failed += f
	}
	return json.NewEncoder(os.Stdout).Encode(summarise("serve "+form, rows, clients, lat, failed, time.Since(start)))
}

// arrowBody is an Arrow IPC stream of rows rows of x, one float64 column
// per feature.
func arrowBody(feats []string, x []float64, rows int) ([]byte, error) {
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(feats))
	cols := make([]arrow.Array, len(feats))
	col := make([]float64, rows)
	for j, f := range feats {
		for i := range rows {
			col[i] = x[i*len(feats)+j]
		}
		b := array.NewFloat64Builder(mem)
		b.AppendValues(col, nil)
		fields[j] = arrow.Field{Name: f, Type: arrow.PrimitiveTypes.Float64}
		cols[j] = b.NewArray()
	}
	schema := arrow.NewSchema(fields, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	if err := w.Write(array.NewRecordBatch(schema, cols, int64(rows))); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// grid runs, for each model, a server pinned to serverCPU and, for each
// rows × clients, the load generator pinned to clientCPU, then the
// in-process Predictor pinned to serverCPU, reps times interleaved; it
// prints a Markdown table of the best repetition of each.
func grid(bin string, models []string, clients, rowsList []int, forms []string, reps int, dur time.Duration, serverCPU, clientCPU, maxDelay string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	run := func(cpu string, args ...string) (result, error) {
		cmd := exec.Command("taskset", append([]string{"-c", cpu, self}, args...)...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return result{}, fmt.Errorf("%v: %w", args, err)
		}
		var r result
		return r, json.Unmarshal(out, &r)
	}
	fmt.Println("| M | body | rows/request | clients | serve p50 ms | p99 ms | p99.9 ms | serve rows/s | in-process rows/s (same rows, clients) | serve / in-process | failed |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|")
	for i, path := range models {
		mod, err := model.Load(path)
		if err != nil {
			return err
		}
		port := 18400 + i
		url := fmt.Sprintf("http://127.0.0.1:%d", port)
		srv := exec.Command("taskset", "-c", serverCPU, bin, "serve", "--model", path, "--addr", fmt.Sprintf("127.0.0.1:%d", port),
			"--max-inflight", "4096", "--max-delay", maxDelay, "--log-level", "warn")
		srv.Stderr = os.Stderr
		if err := srv.Start(); err != nil {
			return err
		}
		for t := 0; ; t++ {
			resp, err := http.Get(url + "/readyz")
			if err == nil {
				resp.Body.Close()
				break
			}
			if t > 200 {
				srv.Process.Kill()
				return fmt.Errorf("the server did not start")
			}
			time.Sleep(50 * time.Millisecond)
		}
		type key struct {
			form          string
			rows, clients int
		}
		best := map[key][2]result{}
		for range reps {
			for _, form := range forms {
				for _, rows := range rowsList {
					if form == "arrow" && rows == 1 {
						continue
					}
					for _, c := range clients {
						args := []string{"-model", path, "-rows", strconv.Itoa(rows), "-clients", strconv.Itoa(c), "-duration", dur.String()}
						s, err := run(clientCPU, append([]string{"load", "-form", form, "-url", url}, args...)...)
						if err != nil {
							srv.Process.Kill()
							return err
						}
						p, err := run(serverCPU, append([]string{"inproc"}, args...)...)
						if err != nil {
							srv.Process.Kill()
							return err
						}
						k := key{form, rows, c}
						b, ok := best[k]
						if !ok || s.RowsPerSec > b[0].RowsPerSec {
							b[0] = s
						}
						if !ok || p.RowsPerSec > b[1].RowsPerSec {
							b[1] = p
						}
						best[k] = b
					}
				}
			}
		}
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
		for _, form := range forms {
			for _, rows := range rowsList {
				for _, c := range clients {
					b, ok := best[key{form, rows, c}]
					if !ok {
						continue
					}
					s, p := b[0], b[1]
					fmt.Printf("| %d | %s | %d | %d | %.3f | %.3f | %.3f | %.0f | %.0f | %.0f %% | %d |\n",
						mod.M(), form, rows, c, s.P50, s.P99, s.P999, s.RowsPerSec, p.RowsPerSec, 100*s.RowsPerSec/p.RowsPerSec, s.Failed)
				}
			}
		}
	}
	return nil
}
