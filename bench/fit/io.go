package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// memCgroup creates a memory cgroup limited to limit and returns the file
// a process writes its pid to in order to join it, and a cleanup.
func memCgroup(limit string) (procs string, cleanup func()) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(b), "memory") {
		dir := "/sys/fs/cgroup/falkon-bench-io"
		os.Mkdir(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(limit), 0o644); err != nil {
			fail(fmt.Errorf("cgroup v2 memory.max: %w", err))
		}
		return filepath.Join(dir, "cgroup.procs"), func() { os.Remove(dir) }
	}
	// cgroup v1: a child of this process's own memory cgroup.
	dir := filepath.Join("/sys/fs/cgroup/memory", ownCgroup("memory"), "falkon-bench-io")
	if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
		fail(fmt.Errorf("no cgroup v2 memory controller, and cgroup v1: %w", err))
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(limit), 0o644); err != nil {
		fail(fmt.Errorf("cgroup v1 memory.limit_in_bytes: %w", err))
	}
	return filepath.Join(dir, "cgroup.procs"), func() { os.Remove(dir) }
}

// ownCgroup returns this process's cgroup v1 path for controller, from
// /proc/self/cgroup ("/" if unknown).
func ownCgroup(controller string) string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "/"
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) == 3 && f[1] == controller {
			return f[2]
		}
	}
	return "/"
}

// storeFiles lists the regular files of a store directory and their total size.
func storeFiles(store string) ([]string, int64) {
	ents, err := os.ReadDir(store)
	if err != nil {
		fail(err)
	}
	var files []string
	var total int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			files = append(files, filepath.Join(store, e.Name()))
			total += info.Size()
		}
	}
	return files, total
}

// evict drops the files' pages from the page cache (posix_fadvise
// DONTNEED through dd), without touching anyone else's cache.
func evict(files []string) {
	for _, f := range files {
		if err := exec.Command("dd", "if="+f, "iflag=nocache", "count=0", "status=none").Run(); err != nil {
			fail(fmt.Errorf("evict %s: %w", f, err))
		}
	}
}

func cachedBytes(files []string) string {
	out, err := exec.Command("fincore", append([]string{"--bytes", "--noheadings", "--output", "RES"}, files...)...).Output()
	if err != nil {
		return "?"
	}
	var total int64
	for _, l := range strings.Fields(string(out)) {
		v, _ := strconv.ParseInt(l, 10, 64)
		total += v
	}
	return mib(total)
}

// readRate reads the files sequentially (buffered, the kernel's
// read-ahead as the fit gets it) and returns bytes per second.
func readRate(files []string, direct bool) float64 {
	start := time.Now()
	var total int64
	for _, f := range files {
		args := []string{"if=" + f, "of=/dev/null", "bs=16M", "status=none"}
		if direct {
			args = append(args, "iflag=direct")
		}
		if err := exec.Command("dd", args...).Run(); err != nil {
			fail(fmt.Errorf("dd %s: %w", f, err))
		}
		info, _ := os.Stat(f)
		total += info.Size()
	}
	return float64(total) / time.Since(start).Seconds()
}

// ioRun is one fit of the io mode: s/iter and the CPU seconds of the
// fit's process (user and system), which show where a cold pass spends
// what a cached pass does not.
type ioRun struct {
	perIter, user, sys float64
}

// ioMode times the fit with the store in page cache and cold under a
// cgroup memory limit below the store's size, for bin and (if set)
// beforeBin, interleaved, and reads the store with dd for the disk's rate.
func ioMode(bin, beforeBin, dir string, n, d, m, iters, reps int, limit, precision string) {
	store := filepath.Join(dir, fmt.Sprintf("io-n%d-d%d.store", n, d))
	writeData(store, "", n, d, 0)
	files, size := storeFiles(store)
	fmt.Printf("io: store %s, %s on disk, n = %d, d = %d, M = %d, t = %d, %s, cgroup memory limit %s, read-ahead %s KiB\n",
		store, mib(size), n, d, m, iters, precision, limit, strings.TrimSpace(readFile("/sys/block/vda/queue/read_ahead_kb")))
	if reps < 1 {
		return // -reps 0: only write the store
	}
	procs, cleanup := memCgroup(limit)
	defer cleanup()
	fitArgs := []string{"fit", "--json", "--quiet", "--no-checkpoint", "--out", filepath.Join(dir, "io.model"),
		"--centers", strconv.Itoa(m), "--iters", strconv.Itoa(iters), "--precision", precision, store}
	run := func(bin string, cold bool) ioRun {
		var r childResult
		if cold {
			evict(files)
			fmt.Fprintf(os.Stderr, "  cached before the cold run: %s\n", cachedBytes(files))
			sh := fmt.Sprintf("echo $$ > %s && exec %s %s", procs, bin, strings.Join(fitArgs, " "))
			r = runChild(nil, "sh", "-c", sh)
		} else {
			readRate(files, false) // into the page cache
			r = runChild(nil, bin, fitArgs...)
		}
		var fj fitJSON
		if err := json.Unmarshal(r.stdout, &fj); err != nil {
			fail(fmt.Errorf("fit --json output: %w\n%s", err, r.stdout))
		}
		return ioRun{fj.SecondsPerIteration, r.user.Seconds(), r.sys.Seconds()}
	}
	type build struct{ label, bin string }
	builds := []build{{"after", bin}}
	if beforeBin != "" {
		builds = []build{{"before", beforeBin}, {"after", bin}}
	}
	load0 := loadavg()
	warm := map[string][]ioRun{}
	cold := map[string][]ioRun{}
	var buffered, direct []float64
	for rep := range reps {
		for _, b := range builds {
			w := run(b.bin, false)
			c := run(b.bin, true)
			warm[b.label], cold[b.label] = append(warm[b.label], w), append(cold[b.label], c)
			fmt.Fprintf(os.Stderr, "repetition %d, %s: cached %.3f s/iter (user %.1f s, sys %.1f s), cgroup-limited cold %.3f s/iter (user %.1f s, sys %.1f s) (load %s)\n",
				rep+1, b.label, w.perIter, w.user, w.sys, c.perIter, c.user, c.sys, loadavg())
		}
		evict(files)
		br := readRate(files, false)
		dr := readRate(files, true)
		buffered, direct = append(buffered, br), append(direct, dr)
		fmt.Fprintf(os.Stderr, "repetition %d: cold read %.0f MB/s (buffered), %.0f MB/s (O_DIRECT, 16 MiB) (load %s)\n", rep+1, br/1e6, dr/1e6, loadavg())
	}
	// best is the run with the least s/iter (its CPU times come with it).
	best := func(v []ioRun) ioRun {
		x := v[0]
		for _, y := range v[1:] {
			if y.perIter < x.perIter {
				x = y
			}
		}
		return x
	}
	mx := func(v []float64) float64 {
		x := v[0]
		for _, y := range v[1:] {
			x = max(x, y)
		}
		return x
	}
	fmt.Printf("load average before %s, after %s\n\n", load0, loadavg())
	fmt.Println("| build | store | M | precision | s/iter in page cache | s/iter, memory limit " + limit + " | cold ÷ cached | CPU user / sys, cached | CPU user / sys, cold | store bytes per cold s/iter | disk, buffered cold read | disk, O_DIRECT |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, b := range builds {
		w, c := best(warm[b.label]), best(cold[b.label])
		fmt.Printf("| %s | %s | %d | %s | %.3f | %.3f | %.2f | %.1f / %.1f s | %.1f / %.1f s | %.0f MB/s | %.0f MB/s | %.0f MB/s |\n",
			b.label, mib(size), m, precision, w.perIter, c.perIter, c.perIter/w.perIter, w.user, w.sys, c.user, c.sys,
			float64(size)/c.perIter/1e6, mx(buffered)/1e6, mx(direct)/1e6)
	}
	fmt.Println("\n(the minimum s/iter of the repetitions, with that run's CPU seconds of the whole fit process; the disk rates are the best dd of the store, evicted)")
}

func readFile(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "?"
	}
	return string(b)
}
