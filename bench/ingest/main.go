// Command ingest benchmarks chunkstore/ingest on a large Parquet file.
//
// It writes (once; kept for later runs) a deterministic Parquet file of 28
// float64 columns with arrow's pqarrow writer, then ingests it into a
// chunk store in a fresh child process per store codec, so that each
// child's peak RSS (VmHWM from /proc/self/status) is the ingest's alone.
// It prints GB/s of float64 (rows × 28 × 8 bytes per wall second) and peak
// RSS for each codec. It is not part of the test suite:
//
//	go run ./bench/ingest -dir /tmp/falkon-bench-ingest
//
// The file is 2.15 GB of float64 by default (9.6 M rows); -rows changes it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
)

const cols = 28

func main() {
	dir := flag.String("dir", filepath.Join(os.TempDir(), "falkon-bench-ingest"), "work `directory` for the Parquet file and the stores (not the repository)")
	rows := flag.Int("rows", 9_600_000, "rows of the Parquet file")
	pqCodec := flag.String("parquet-codec", "snappy", "Parquet page codec: snappy, zstd or none")
	codecs := flag.String("codecs", "none,s2,zstd", "store codecs to measure, comma-separated")
	workers := flag.Int("workers", 0, "ingest workers (0: GOMAXPROCS)")
	storeDir := flag.String("store-dir", "", "write the stores here (default: -dir); /dev/shm takes the disk out of the measurement")
	child := flag.String("child", "", "internal: ingest with this store codec and print a JSON result")
	cpuProfile := flag.String("cpuprofile", "", "with -child: write a CPU profile to this `file`")
	flag.Parse()
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	path := filepath.Join(*dir, fmt.Sprintf("bench-%d-%s.parquet", *rows, *pqCodec))
	if *child != "" {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				fail(err)
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		sd := *storeDir
		if sd == "" {
			sd = *dir
		}
		runChild(path, sd, *child, *workers)
		return
	}
	if _, err := os.Stat(path); err != nil {
		start := time.Now()
		if err := generate(path, *rows, *pqCodec); err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "wrote %s in %.0fs\n", path, time.Since(start).Seconds())
	}
	st, err := os.Stat(path)
	if err != nil {
		fail(err)
	}
	host, _ := os.Hostname()
	fmt.Printf("Parquet %s: %d rows × %d float64, %.2f GB of float64, %.2f GB on disk (%s pages)\n",
		filepath.Base(path), *rows, cols, float64(*rows)*cols*8/1e9, float64(st.Size())/1e9, *pqCodec)
	if *storeDir != "" {
		fmt.Printf("stores written to %s\n", *storeDir)
	}
	fmt.Printf("machine: %s, %d CPUs (GOMAXPROCS %d), %s, load average %s\n", host, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), loadavg())
	fmt.Printf("%-6s %8s %8s %10s %12s %10s %9s %14s\n", "codec", "seconds", "GB/s", "Mrows/s", "store GB", "peak RSS", "CPU s", "GB per CPU-s")
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	for _, c := range strings.Split(*codecs, ",") {
		args := []string{"-dir", *dir, "-rows", fmt.Sprint(*rows), "-parquet-codec", *pqCodec, "-child", c, "-workers", fmt.Sprint(*workers), "-store-dir", *storeDir}
		out, err := exec.Command(self, args...).Output()
		if err != nil {
			fail(fmt.Errorf("child %s: %v: %s", c, err, out))
		}
		var r childResult
		if err := json.Unmarshal(out, &r); err != nil {
			fail(fmt.Errorf("child %s: %v: %s", c, err, out))
		}
		gb := float64(r.Rows) * cols * 8 / 1e9
		fmt.Printf("%-6s %8.2f %8.3f %10.2f %12.3f %7.0f MB %9.2f %14.3f\n", c, r.Seconds, gb/r.Seconds,
			float64(r.Rows)/1e6/r.Seconds, float64(r.BytesOut)/1e9, float64(r.PeakRSS)/1e6, r.CPU, gb/r.CPU)
	}
}

type childResult struct {
	Rows     int64   `json:"rows"`
	Seconds  float64 `json:"seconds"`
	BytesOut int64   `json:"bytes_out"`
	PeakRSS  int64   `json:"peak_rss"`
	CPU      float64 `json:"cpu"` // user + system CPU seconds of the child
}

func runChild(path, dir, codec string, workers int) {
	out := filepath.Join(dir, "store-"+codec)
	os.RemoveAll(out)
	res, err := ingest.Run(context.Background(), []string{path}, ingest.Config{Out: out, Codec: codec, Workers: workers})
	if err != nil {
		fail(err)
	}
	os.RemoveAll(out)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	json.NewEncoder(os.Stdout).Encode(childResult{Rows: res.Rows, Seconds: res.Seconds, BytesOut: res.BytesOut, PeakRSS: vmHWM(), CPU: cpu})
}

// generate writes rows × 28 float64 columns, in row groups of 1 Mi rows.
// Even columns are rounded to 3 decimals (measurements), odd columns keep
// full mantissas; the seed is fixed, so the file is the same every time.
func generate(path string, rows int, codec string) error {
	fields := make([]arrow.Field, cols)
	for j := range fields {
		fields[j] = arrow.Field{Name: fmt.Sprintf("x%02d", j), Type: arrow.PrimitiveTypes.Float64}
	}
	sc := arrow.NewSchema(fields, nil)
	c := compress.Codecs.Snappy
	switch codec {
	case "zstd":
		c = compress.Codecs.Zstd
	case "none":
		c = compress.Codecs.Uncompressed
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 4<<20)
	props := parquet.NewWriterProperties(parquet.WithCompression(c), parquet.WithDictionaryDefault(false),
		parquet.WithMaxRowGroupLength(1<<20), parquet.WithStats(true))
	w, err := pqarrow.NewFileWriter(sc, bw, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(2017, 28))
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	const batch = 1 << 16
	vals := make([]float64, batch)
	for done := 0; done < rows; done += batch {
		n := min(batch, rows-done)
		for j := range cols {
			mean, sd := float64(j)-10, 1+float64(j%5)
			for i := range n {
				v := mean + sd*rng.NormFloat64()
				if j%2 == 0 {
					v = math.Round(v*1000) / 1000
				}
				vals[i] = v
			}
			bld.Field(j).(*array.Float64Builder).AppendValues(vals[:n], nil)
		}
		rec := bld.NewRecordBatch()
		err := w.WriteBuffered(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// vmHWM reads the peak resident set size from /proc/self/status.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb)
			return kb * 1024
		}
	}
	return -1
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench/ingest:", err)
	os.Exit(1)
}
