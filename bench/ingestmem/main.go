// Command ingestmem measures the peak memory of ingest on wide Parquet and
// on long text lines (issue 21 item 5), against the formula in
// chunkstore/ingest's doc.go.
//
// It writes its inputs under -dir (not the repository), in a child process
// (a child's ru_maxrss starts at its parent's RSS when forked): a Parquet
// file of -cols float64 columns × -rows rows, and a CSV with a data line
// of -line bytes (a string field fills it). Then it runs the falkon-ooc
// binary given by -bin on each, in a child process, and prints the
// child's peak RSS (getrusage ru_maxrss), wall time and the estimate that
// ingest printed ("memory needed"):
//
//	go build -o /tmp/falkon-ooc ./cmd/falkon-ooc
//	go run ./bench/ingestmem -bin /tmp/falkon-ooc -dir /tmp/ingestmem
//
// It is not part of the test suite.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func main() {
	bin := flag.String("bin", "falkon-ooc", "the falkon-ooc `binary` to measure")
	dir := flag.String("dir", filepath.Join(os.TempDir(), "falkon-ingestmem"), "work `directory`")
	cols := flag.Int("cols", 10000, "columns of the wide Parquet file")
	rows := flag.Int("rows", 3000, "rows of the wide Parquet file")
	line := flag.Int("line", 100<<20, "bytes of the long CSV line")
	gen := flag.String("gen", "", "internal: write this input (wide or line) and exit")
	flag.Parse()
	wide := filepath.Join(*dir, fmt.Sprintf("wide-%dx%d.parquet", *cols, *rows))
	long := filepath.Join(*dir, fmt.Sprintf("line-%d.csv", *line))
	switch *gen {
	case "wide":
		writeWide(wide, *cols, *rows)
		return
	case "line":
		writeLongLine(long, *line)
		return
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fail(err)
	}
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	for what, path := range map[string]string{"wide": wide, "line": long} {
		if _, err := os.Stat(path); err != nil {
			args := append([]string{"-gen", what}, os.Args[1:]...)
			if out, err := exec.Command(self, args...).CombinedOutput(); err != nil {
				fail(fmt.Errorf("write %s: %v\n%s", path, err, out))
			}
		}
	}
	measure(*bin, "wide Parquet", wide, "ingest", "--out", filepath.Join(*dir, "wide.store"), "--force", "--target", "c0", wide)
	measure(*bin, "long line", long, "ingest", "--out", filepath.Join(*dir, "long.store"), "--force", "--target", "y",
		"--max-line", strconv.Itoa(*line+1024), long)
	measure(*bin, "refused line", long, "ingest", "--out", filepath.Join(*dir, "refused.store"), "--force", "--target", "y",
		"--max-line", strconv.Itoa(*line/2), long)
}

func measure(bin, what, input string, args ...string) {
	st, err := os.Stat(input)
	if err != nil {
		fail(err)
	}
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start)
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss << 10
	}
	est, last := "-", ""
	for _, l := range strings.Split(stderr.String(), "\n") {
		if i := strings.Index(l, "memory needed ≈ "); i >= 0 {
			est = strings.Fields(l[i+len("memory needed ≈ "):])[0] + " " + strings.Fields(l[i+len("memory needed ≈ "):])[1]
		}
		if strings.HasPrefix(l, "falkon-ooc ") {
			last = l
		}
	}
	if len(last) > 140 {
		last = last[:140] + "…"
	}
	fmt.Printf("%-13s input %7.1f MB  peak RSS %7.1f MiB  estimate %-10s  wall %6.2f s  exit %d  %s\n",
		what, float64(st.Size())/1e6, float64(rss)/(1<<20), est, wall.Seconds(), exitCode(err), last)
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// writeWide writes cols float64 columns c0… of rows random values, one
// row group, snappy pages.
func writeWide(path string, cols, rows int) {
	fields := make([]arrow.Field, cols)
	for j := range fields {
		fields[j] = arrow.Field{Name: "c" + strconv.Itoa(j), Type: arrow.PrimitiveTypes.Float64}
	}
	schema := arrow.NewSchema(fields, nil)
	rng := rand.New(rand.NewPCG(5, 21))
	arrs := make([]arrow.Array, cols)
	for j := range arrs {
		b := array.NewFloat64Builder(memory.DefaultAllocator)
		for range rows {
			b.Append(rng.NormFloat64())
		}
		arrs[j] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(schema, arrs, int64(rows))
	tbl := array.NewTableFromRecords(schema, []arrow.Record{rec})
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(int64(rows)))
	// WriteTable closes f.
	if err := pqarrow.WriteTable(tbl, f, int64(rows), props, pqarrow.DefaultWriterProps()); err != nil {
		fail(err)
	}
}

// writeLongLine writes a CSV of columns a, s, y whose first data line
// holds a string field s of n bytes, then 1000 short lines.
func writeLongLine(path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("a,s,y\n1,")
	w.WriteString(strings.Repeat("x", n))
	w.WriteString(",2\n")
	for i := range 1000 {
		fmt.Fprintf(w, "%d,x,%d\n", i, 2*i)
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ingestmem:", err)
	os.Exit(1)
}
