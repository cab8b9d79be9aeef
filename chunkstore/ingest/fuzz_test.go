package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzInput feeds arbitrary bytes to ingest as a Parquet file (when they
// start with PAR1) or as text: the result is a store or an error, never a
// panic. The seeds are the interop fixtures, whole and cut short.
func FuzzInput(f *testing.F) {
	for _, name := range []string{"duckdb_v2_zstd.parquet", "polars_zstd.parquet", "duckdb.csv"} {
		b, err := os.ReadFile(interop + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(append(append([]byte{}, b[:len(b)-100]...), b[len(b)-8:]...)) // footer length kept, metadata cut
	}
	f.Add([]byte("a,b\n1,2\n"))
	f.Add([]byte("\x1f\x8b\x08\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := Run(ctx, []string{in}, Config{Out: filepath.Join(dir, "s"), Nulls: "drop", BatchRows: 1000})
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ingest of %d bytes took more than 10s", len(data))
		}
		if err == nil && res.Rows < 0 {
			t.Fatalf("negative rows %d", res.Rows)
		}
	})
}
