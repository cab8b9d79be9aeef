package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FuzzText feeds arbitrary bytes to the text path only: sniffing (gzip,
// delimiter, header), type inference and the full record reader with its
// limit, with batches discarded and no store written, so it runs
// thousands of inputs a second (FuzzInput writes a store for each). The
// result is an error or batches, never a panic.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		"a,b,y\n1,2,3\n4,5,6\n",
		"a\tb\n1\t2\n",
		"x;y\n1,5;2\n",
		"a,b\n\"1\n2\",3\n",
		"a,b\n1,\"unclosed\n",
		"\xef\xbb\xbfa,b\n1,2\n",
		"a,b\nNULL,2\nNaN,Inf\n",
		"d,t\n2024-01-02,true\n",
		"a,a\n1,2\n",
		"a,b\n1,2,3\n",
	} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile(interop + "duckdb.csv"); err == nil {
		f.Add(b)
	}
	var gz []byte
	{
		var buf bytesBuffer
		zw := newGzip(&buf)
		zw.Write([]byte("a,y\n1,2\n3,4\n"))
		zw.Close()
		gz = buf.b
	}
	f.Add(gz)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		in := filepath.Join(dir, "in.csv")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := &session{cfg: Config{Nulls: "drop", MaxLine: 1 << 16}, mem: memory.DefaultAllocator, workers: 1}
		fi, err := s.inspect(in)
		if err != nil {
			return
		}
		s.files = []*fileInfo{fi}
		if err := s.choose(); err != nil {
			return
		}
		s.batchRows = 64
		out := make(chan *batch, 4)
		done := make(chan int64)
		go func() {
			var rows int64
			for b := range out {
				rows += int64(b.n)
			}
			done <- rows
		}()
		err = s.readText(context.Background(), fi, out)
		close(out)
		rows := <-done
		if err == nil && rows < 0 {
			t.Fatal("negative rows")
		}
	})
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
