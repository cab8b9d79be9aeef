package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// TestPredictMaxLine: predict reads CSV under --max-line as ingest does. A
// gzip file that decompresses to one 20 MB line fails, with a 1 MiB limit,
// with the file and line named and exit 1, having allocated well under the
// line's length (the reader stops at the limit instead of reading it whole).
func TestPredictMaxLine(t *testing.T) {
	_, model, _, _ := predictFixture(t, 5)
	bomb := filepath.Join(t.TempDir(), "bomb.csv.gz")
	f, err := os.Create(bomb)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	zw.Write([]byte("a,b,c\n1,2,3\n"))
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 20 {
		zw.Write(chunk)
	}
	zw.Write([]byte(",2,3\n4,5,6\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, _, e := runCLI("predict", "--model", model, "--quiet", "--max-line", "1048576", bomb)
	runtime.ReadMemStats(&after)
	want := "falkon-ooc predict: " + bomb + ": line 3 is longer than 1 MiB (--max-line); a text file this wide is more likely damaged or not a CSV file, else raise --max-line"
	if code != 1 || strings.TrimSpace(e) != want {
		t.Errorf("exit %d, stderr\n%s\nwant exit 1 and\n%s", code, e, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("predict allocated %.1f MiB on a 20 MiB line under --max-line 1 MiB: the line was read past the limit", float64(alloc)/(1<<20))
	} else {
		t.Logf("allocated %.1f MiB", float64(alloc)/(1<<20))
	}

	// The default limit (16 MiB) stops it too; a generous one reads it and
	// meets the value error the line is, its value
	// quoted clipped.
	code, _, e = runCLI("predict", "--model", model, "--quiet", bomb)
	if want := "line 3 is longer than 16 MiB (--max-line)"; code != 1 || !strings.Contains(e, want) {
		t.Errorf("default --max-line: exit %d, stderr %s; want %q", code, e, want)
	}
	runtime.ReadMemStats(&before)
	code, _, e = runCLI("predict", "--model", model, "--quiet", "--max-line", "33554432", bomb)
	runtime.ReadMemStats(&after)
	t.Logf("--max-line 32 MiB: allocated %.1f MiB", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
	if want := `column "a": "xxxxx`; code != 1 || !strings.Contains(e, want) || !strings.Contains(e, "… (20971520 bytes)") {
		t.Errorf("--max-line 32 MiB: exit %d, stderr %s; want the clipped value", code, e)
	}
}
