package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

type runOpts struct {
	bin, dir, extra, tag string
	centers              int
	ard, resume          bool
}

// step is one command of the job and what it cost.
type step struct {
	Name    string   `json:"name"`
	Args    []string `json:"args"`
	Wall    float64  `json:"wall_seconds"`
	CPU     float64  `json:"cpu_seconds"`
	PeakRSS int64    `json:"peak_rss_bytes"`
	// Load is /proc/loadavg's 1-minute figure before and after.
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
	Skipped    bool    `json:"skipped,omitempty"`
	Resumed    bool    `json:"resumed,omitempty"`
}

// result is the record of one run of the job.
type result struct {
	Shape     string          `json:"shape"`
	Commit    string          `json:"commit"`
	Started   time.Time       `json:"started"`
	Centers   int             `json:"centers"`
	ARD       bool            `json:"ard"`
	Steps     []step          `json:"steps"`
	DiskStore int64           `json:"disk_store_bytes"`
	DiskModel int64           `json:"disk_model_bytes"`
	DiskInput int64           `json:"disk_input_bytes"`
	Meta      meta            `json:"data"`
	Fit       json.RawMessage `json:"fit"`
	Predict   json.RawMessage `json:"predict"`
	Wall      float64         `json:"wall_seconds"`
	CPU       float64         `json:"cpu_seconds"`
	PeakRSS   int64           `json:"peak_rss_bytes"`
	MaxLoad   float64         `json:"max_load"`
	// TestMetric is the test MSE (regression) or AUC and error rate
	// (binary) of the predictions.
	TestMSE, TestAUC, TestError float64
}

func runJob(ctx context.Context, o runOpts, logf func(string, ...any)) (*result, error) {
	b, err := os.ReadFile(filepath.Join(o.dir, "paper.json"))
	if err != nil {
		return nil, fmt.Errorf("no data in %s (run gen first): %w", o.dir, err)
	}
	res := &result{Started: time.Now().UTC(), Centers: o.centers, ARD: o.ard}
	if err := json.Unmarshal(b, &res.Meta); err != nil {
		return nil, err
	}
	res.Shape = res.Meta.Shape.Name
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		res.Commit = strings.TrimSpace(string(out))
	}
	if o.bin == "" {
		o.bin = filepath.Join(o.dir, "falkon-ooc")
		logf("paper: building %s", o.bin)
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", o.bin, "./cmd/falkon-ooc").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/falkon-ooc (run from the repository's root, or give -bin): %v\n%s", err, out)
		}
	}
	store := filepath.Join(o.dir, "train.store")
	tag := fmt.Sprintf("%s-M%d", res.Shape, o.centers)
	if o.ard {
		tag += "-ard"
	}
	if o.tag != "" {
		tag += "-" + o.tag
	}
	model := filepath.Join(o.dir, "model-"+tag+".falkon")
	pred := filepath.Join(o.dir, "pred-"+tag+".parquet")

	// 1. ingest the training files.
	if _, err := os.Stat(filepath.Join(store, "meta.json")); o.resume && err == nil {
		res.Steps = append(res.Steps, step{Name: "ingest", Skipped: true})
	} else {
		st, _, err := runStep(ctx, o.bin, "ingest", logf, "ingest", "--out", store, "--target", "y", "--force", filepath.Join(o.dir, "train"))
		if err != nil {
			return nil, err
		}
		res.Steps = append(res.Steps, st)
	}
	// 2. fit --tune.
	fitArgs := []string{"fit", "--tune", "--out", model, "--centers", fmt.Sprint(o.centers), "--precision", "float32", "--json"}
	if o.ard {
		fitArgs = append(fitArgs, "--ard")
	}
	fitArgs = append(fitArgs, strings.Fields(o.extra)...)
	resumed := false
	if _, err := os.Stat(model + ".ckpt"); o.resume && err == nil {
		fitArgs, resumed = append(fitArgs, "--resume"), true
	}
	fitArgs = append(fitArgs, store)
	var st step
	if st, res.Fit, err = runStep(ctx, o.bin, "fit --tune", logf, fitArgs...); err != nil {
		return nil, err
	}
	st.Resumed = resumed
	res.Steps = append(res.Steps, st)
	// 3. predict the test files.
	if st, res.Predict, err = runStep(ctx, o.bin, "predict", logf, "predict", "--model", model, "--out", pred, "--json",
		filepath.Join(o.dir, "test")); err != nil {
		return nil, err
	}
	res.Steps = append(res.Steps, st)
	var pm struct {
		MSE       *float64 `json:"mse"`
		AUC       *float64 `json:"auc"`
		ErrorRate *float64 `json:"error_rate"`
	}
	if err := json.Unmarshal(res.Predict, &pm); err != nil {
		return nil, fmt.Errorf("predict --json: %w", err)
	}
	for _, p := range []struct {
		dst *float64
		src *float64
	}{{&res.TestMSE, pm.MSE}, {&res.TestAUC, pm.AUC}, {&res.TestError, pm.ErrorRate}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	res.DiskStore, res.DiskModel = duBytes(store), duBytes(model)
	res.DiskInput = duBytes(filepath.Join(o.dir, "train")) + duBytes(filepath.Join(o.dir, "test"))
	for _, s := range res.Steps {
		res.Wall += s.Wall
		res.CPU += s.CPU
		res.PeakRSS = max(res.PeakRSS, s.PeakRSS)
		res.MaxLoad = max(res.MaxLoad, s.LoadBefore, s.LoadAfter)
	}
	out, _ := json.MarshalIndent(res, "", "  ")
	path := filepath.Join(o.dir, "result-"+tag+".json")
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		return nil, err
	}
	logf("paper: wrote %s", path)
	return res, nil
}

// runStep runs the command, passing its stderr through, and returns its
// cost and its stdout (one JSON document with --json).
func runStep(ctx context.Context, bin, name string, logf func(string, ...any), args ...string) (step, json.RawMessage, error) {
	st := step{Name: name, Args: args, LoadBefore: load1()}
	logf("paper: %s %s", bin, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, io.MultiWriter(os.Stderr)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) } // let fit checkpoint
	t0 := time.Now()
	err := cmd.Run()
	st.Wall = time.Since(t0).Seconds()
	st.LoadAfter = load1()
	if ps := cmd.ProcessState; ps != nil {
		st.CPU = (ps.UserTime() + ps.SystemTime()).Seconds()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			st.PeakRSS = int64(ru.Maxrss) << 10
		}
	}
	if err != nil {
		return st, nil, fmt.Errorf("%s: %w", name, err)
	}
	logf("paper: %s: %.1f s wall, %.1f s CPU, peak RSS %.2f GiB", name, st.Wall, st.CPU, float64(st.PeakRSS)/(1<<30))
	return st, json.RawMessage(bytes.TrimSpace(stdout.Bytes())), nil
}

func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	fmt.Sscan(string(b), &l)
	return l
}

// duBytes is the disk space of the files under path.
func duBytes(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if s, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += s.Blocks * 512
				} else {
					n += fi.Size()
				}
			}
		}
		return nil
	})
	return n
}

// markdown is the README table's row, then a line per step.
func (r *result) markdown() string {
	sh := r.Meta.Shape
	metric := ""
	if sh.Binary {
		metric = fmt.Sprintf("AUC %.4f (Bayes %.4f), error %.2f %% (Bayes %.2f %%)", r.TestAUC, r.Meta.BayesAUC,
			100*r.TestError, 100*r.Meta.BayesError)
	} else {
		metric = fmt.Sprintf("MSE %.4g (Bayes %.4g, predicting the mean %.4g)", r.TestMSE, r.Meta.BayesMSE, r.Meta.BaselineMSE)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | %.2g × %d | %d | %s | %s | %s | %.2f GiB | %s |\n", sh.Name, float64(r.Meta.Train), sh.D, r.Centers,
		sh.PaperTime, seconds(r.Wall), seconds(r.CPU),
		float64(r.PeakRSS)/(1<<30), metric)
	for _, s := range r.Steps {
		if s.Skipped {
			fmt.Fprintf(&b, "  - %s: skipped (-resume)\n", s.Name)
			continue
		}
		fmt.Fprintf(&b, "  - %s: %.1f s wall, %.1f s CPU, peak RSS %.2f GiB, load %.2f → %.2f\n", s.Name, s.Wall, s.CPU,
			float64(s.PeakRSS)/(1<<30), s.LoadBefore, s.LoadAfter)
	}
	fmt.Fprintf(&b, "  - disk: input %.2f GiB, store %.2f GiB, model %.1f MiB; commit %s, started %s\n",
		float64(r.DiskInput)/(1<<30), float64(r.DiskStore)/(1<<30), float64(r.DiskModel)/(1<<20), r.Commit, r.Started.Format(time.RFC3339))
	return b.String()
}

// seconds formats a duration for the table: 4.2 s, 3 min 12 s, 1 h 52 min.
func seconds(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1f s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %02d s", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%d h %02d min", int(s)/3600, int(s)%3600/60)
}
