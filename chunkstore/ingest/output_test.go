package ingest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
)

// ParquetWriter leaves the file it writes to open (the caller owns it),
// and what it writes reads back through ingest.
func TestParquetWriterLeavesFileOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := ingest.NewParquetWriter(f, []string{"a", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Write([][]float64{{3, 1, 2}, {4, 5, 6}}); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("the file was closed by ParquetWriter.Close: %v", err)
	}
	res, err := ingest.Run(t.Context(), []string{path}, ingest.Config{Out: filepath.Join(dir, "s"), Targets: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 || len(res.Features) != 1 {
		t.Fatalf("read back %d rows, features %v", res.Rows, res.Features)
	}
}
