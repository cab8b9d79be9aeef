package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	fbeam "github.com/falkon-ooc/falkon-ooc/beam"
	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/kernel"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// bootWrapper starts Beam's Go boot program (sdks/go/container), which
// asks Prism's provision service for the job and execs the staged worker
// binary (falkon-ooc-beam --worker). Prism's PROCESS environment passes
// the worker id as --id='ID', quotes included (internal/environments.go,
// Beam v2.77.0), which the boot program would send back verbatim and
// Prism would not recognise: the wrapper strips them.
const bootWrapper = `#!/bin/sh
for a in "$@"; do
  case "$a" in
    --id=\'*\') a="--id=$(printf '%s' "$a" | sed "s/^--id='\(.*\)'\$/\1/")";;
  esac
  set -- "$@" "$a"
  shift
done
exec BOOT "$@" --semi_persist_dir=STAGE
`

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// worker is a Beam worker process of our Prism.
type worker struct {
	pid, job int
	cpu      int // user + system clock ticks
}

// workers lists the worker processes (falkon-ooc-beam --worker) whose
// logging endpoint is Prism's port.
func workers(port int) []worker {
	var out []worker
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmd), "\x00")
		if !slices.Contains(args, "--worker=true") || !slices.Contains(args, fmt.Sprintf("--logging_endpoint=localhost:%d", port)) {
			continue
		}
		w := worker{pid: pid}
		for _, a := range args {
			if id, ok := strings.CutPrefix(a, "--id=job-"); ok {
				w.job, _ = strconv.Atoi(strings.TrimLeft(id[:strings.IndexByte(id+"[", '[')], "0"))
			}
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 {
				f := strings.Fields(string(st[i+1:]))
				if len(f) > 12 {
					u, _ := strconv.Atoi(f[11])
					s, _ := strconv.Atoi(f[12])
					w.cpu = u + s
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// TestAcrossProcesses runs falkon-ooc-beam fit with Prism as its own
// process (Beam's cmd/prism) and the workers in processes of their own
// (Prism's PROCESS environment: Beam's boot program, then the staged
// falkon-ooc-beam binary), the driver a third process, the store and
// --temp reached by path, everything through localhost. One worker is
// killed (SIGKILL) while it computes a CG pass: the pass job fails, is
// run again, and the model is the one an in-process Prism fit gives, bit
// for bit.
func TestAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prism, Beam's boot program and this command, and runs ~10 Beam jobs across processes")
	}
	if runtime.GOOS != "linux" {
		t.Skip("finds the worker processes in /proc")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build Prism with")
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := func(name, pkg string) string {
		out := filepath.Join(dir, name)
		cmd := exec.CommandContext(ctx, goCmd, "build", "-o", out, pkg)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return out
	}
	prism := bin("prism", "github.com/apache/beam/sdks/v2/go/cmd/prism")
	boot := bin("boot", "github.com/apache/beam/sdks/v2/go/container")
	self := bin("falkon-ooc-beam", ".")
	wrapper := filepath.Join(dir, "boot.sh")
	stage := filepath.Join(dir, "stage") // the staged worker binary, per job
	if err := os.WriteFile(wrapper, []byte(strings.NewReplacer("BOOT", boot, "STAGE", stage).Replace(bootWrapper)), 0o755); err != nil {
		t.Fatal(err)
	}
	// The boot program copies the worker binary to a new /tmp/bin* for
	// every worker (a fixed /tmp in Beam v2.77.0): remove ours.
	before, _ := filepath.Glob("/tmp/bin*")
	defer func() {
		after, _ := filepath.Glob("/tmp/bin*")
		for _, b := range after {
			if slices.Contains(before, b) {
				continue
			}
			if _, err := os.Stat(filepath.Join(b, "worker")); err == nil {
				os.RemoveAll(b)
			}
		}
	}()
	built := time.Since(start)

	// A free port on the loopback interface for Prism's job service (it
	// listens on every interface: Beam's jobservices.NewServer binds
	// ":port"; we connect through localhost only).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var prismLog syncBuffer
	pc := exec.CommandContext(ctx, prism, fmt.Sprintf("--job_port=%d", port), "--serve_http=false", "--log_level=warn")
	pc.Stdout, pc.Stderr = &prismLog, &prismLog
	pc.Dir = dir // the boot program writes pipeline_options.json in its working directory
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	pc.WaitDelay = 5 * time.Second // its workers hold its stderr open
	defer func() {
		pc.Process.Kill()
		for _, w := range workers(port) { // workers of our Prism left running
			syscall.Kill(w.pid, syscall.SIGKILL)
		}
		pc.Wait()
		if t.Failed() {
			t.Logf("prism's log:\n%s", prismLog.String())
		}
	}()
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("localhost:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatal("prism does not listen")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A store long enough to pass (200 000 rows, 6 features, M = 1000:
	// 2·10⁸ kernel entries a pass) that a worker is caught computing.
	st := filepath.Join(dir, "s.store")
	const n, d = 200_000, 6
	cols := make([][]float64, d+1)
	for j := range cols {
		cols[j] = make([]float64, n)
	}
	for i := range n {
		s := 0.0
		for j := range d {
			v := float64((i*(7+2*j)+j*13)%100003)/100003*4 - 2
			cols[j][i] = v
			s += v * float64(j%3-1)
		}
		cols[d][i] = s * s / 4
	}
	var feats []chunkstore.ColumnSpec
	for j := range d {
		feats = append(feats, chunkstore.ColumnSpec{Name: fmt.Sprintf("x%d", j), Type: "float64"})
	}
	w, err := chunkstore.Create(st, feats, []chunkstore.ColumnSpec{{Name: "y", Type: "float64"}}, chunkstore.Options{ChunkRows: 5000})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(cols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	const iters, parts = 5, 4
	cfg := ooc.Config{Centers: 1000, Iterations: iters, Lambda: 1e-5, Kernel: kernel.Kernel{Kind: kernel.Gaussian, Sigma: 2}, Seed: 3}
	want, err := fbeam.Fit(ctx, cfg, ooc.RunOptions{}, fbeam.Options{Store: st, Partitions: parts, Temp: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}

	// The driver: falkon-ooc-beam fit, a process of its own.
	model := filepath.Join(dir, "m.falkon")
	temp := filepath.Join(dir, "temp")
	if err := os.Mkdir(temp, 0o777); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	drv := exec.CommandContext(ctx, self, "fit", "--out", model, "--centers", "1000", "--iters", strconv.Itoa(iters),
		"--lambda", "1e-5", "--sigma", "2", "--seed", "3", "--partitions", strconv.Itoa(parts), "--attempts", "3",
		"--no-checkpoint", "--runner", "universal", "--endpoint", fmt.Sprintf("localhost:%d", port), "--temp", temp,
		"--job-opts", fmt.Sprintf(`environment_type=PROCESS,environment_config={"command":"%s"},worker_binary=%s`, wrapper, self), st)
	drv.Stderr = &stderr
	drv.Dir = dir
	drv.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	drv.Stdout = &stdout
	if err := drv.Start(); err != nil {
		t.Fatal(err)
	}
	// Once the first CG pass is done, kill the first worker of a later
	// job that has used 0.1 s of CPU: it is computing its ranges.
	killed := make(chan worker, 1)
	done := make(chan struct{})
	go func() {
		defer close(killed)
		seen := 0
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			ws := workers(port)
			trigger := strings.Contains(stderr.String(), "iteration 1/")
			for _, w := range ws {
				if !trigger {
					seen = max(seen, w.job)
				} else if w.job > seen && w.cpu >= 10 {
					if syscall.Kill(w.pid, syscall.SIGKILL) == nil {
						killed <- w
					}
					return
				}
			}
		}
	}()
	// A job whose worker died must end, failed, soon: give it 2 minutes.
	hung := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			close(hung)
			drv.Process.Kill()
		}
	}()
	err = drv.Wait()
	close(done)
	select {
	case <-hung:
		t.Fatalf("the driver still waited 2 minutes after the worker was killed; its stderr:\n%s", stderr.String())
	default:
	}
	k, ok := <-killed
	t.Logf("binaries built in %.1f s; the fit across processes took %.1f s; in all %.1f s", built.Seconds(),
		time.Since(start).Seconds()-built.Seconds(), time.Since(start).Seconds())
	if !ok {
		t.Fatalf("no worker was killed (exit %v); the driver's stderr:\n%s", err, stderr.String())
	}
	t.Logf("killed worker %d of job %d after %d CPU ticks", k.pid, k.job, k.cpu)
	if err != nil {
		// Failing is allowed, with a clear error; a wrong model is not.
		if !strings.Contains(stderr.String(), "job failed") && !strings.Contains(stderr.String(), "pass failed") {
			t.Fatalf("the fit failed without saying why (%v):\n%s", err, stderr.String())
		}
		t.Fatalf("the fit failed after the kill, though 3 attempts were allowed (%v):\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "attempt 1, failed") {
		t.Fatalf("no job failed after the kill:\n%s", stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, "failed") {
			t.Logf("driver: %.300s", line)
		}
	}
	got, err := ooc.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Alpha(), want.Alpha()) || !slices.Equal(got.Centers(), want.Centers()) {
		t.Fatal("the model differs from the in-process Prism fit's")
	}
}
