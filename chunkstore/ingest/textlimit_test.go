package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// writeBomb writes a .csv.gz whose second line is n bytes of digits with
// no newline: a few hundred kB that expand to one n-byte line.
func writeBomb(t testing.TB, path string, n int) {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte("a,y\n"))
	block := bytes.Repeat([]byte("1"), 1<<20)
	for n > 0 {
		k := min(n, len(block))
		zw.Write(block[:k])
		n -= k
	}
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBombHelperProcess is run by TestDecompressionBombMemory in a child
// process, so that the child's peak RSS is the ingest's alone.
func TestBombHelperProcess(t *testing.T) {
	path := os.Getenv("FALKON_BOMB")
	if path == "" {
		t.Skip("helper process")
	}
	limit, _ := strconv.Atoi(os.Getenv("FALKON_BOMB_LIMIT"))
	_, err := Run(context.Background(), []string{path}, Config{Out: path + ".store", Targets: []string{"y"}, MaxLine: limit})
	fmt.Fprintln(os.Stderr, "ERR:", err)
	// The peak RSS of this process image (rusage's maxrss would include
	// the parent's at the fork).
	status, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			fmt.Fprintln(os.Stderr, "HWM:", strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "VmHWM:"), "kB")))
		}
	}
}

// TestDecompressionBombMemory (issue 15 item 1): a .csv.gz expanding to
// one 256 MiB line (before: 9× the line in RSS) is refused at the limit,
// naming the file and line, with a peak RSS that is a small multiple of
// the limit.
func TestDecompressionBombMemory(t *testing.T) {
	if runtime.GOOS != "linux" || testing.Short() {
		t.Skip("needs Linux rusage; writes a 256 MiB-line bomb")
	}
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.csv.gz")
	const line = 256 << 20
	writeBomb(t, bomb, line)
	st, _ := os.Stat(bomb)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{4 << 20, 16 << 20} {
		cmd := exec.Command(exe, "-test.run=^TestBombHelperProcess$")
		cmd.Env = append(os.Environ(), "FALKON_BOMB="+bomb, "FALKON_BOMB_LIMIT="+strconv.Itoa(limit), "GOMAXPROCS=2")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("helper: %v\n%s", err, stderr.String())
		}
		want := fmt.Sprintf("ERR: %s: line 2 is longer than %d MiB (--max-line)", bomb, limit>>20)
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("helper said\n%s\nwant %s", stderr.String(), want)
		}
		_, hwm, ok := strings.Cut(stderr.String(), "HWM: ")
		kb, err := strconv.ParseInt(strings.TrimSpace(hwm), 10, 64)
		if !ok || err != nil {
			t.Fatalf("no VmHWM from the helper: %s", stderr.String())
		}
		rss := kb << 10
		t.Logf("bomb %d kB → one %d MiB line; --max-line %d MiB: peak RSS %.1f MiB (%.1f× the limit)",
			st.Size()/1000, line>>20, limit>>20, float64(rss)/(1<<20), float64(rss)/float64(limit))
		// The test binary alone is ~25 MiB resident; encoding/csv keeps
		// the record and its fields (2×), bufio and arrow a copy more.
		if rss > 40<<20+6*int64(limit) {
			t.Errorf("peak RSS %d MiB for a %d MiB limit", rss>>20, limit>>20)
		}
	}
}

func TestLongHeader(t *testing.T) {
	dir := t.TempDir()
	// A header of 1.2 MiB: 80 000 columns. Once the sniff read only the
	// first 1 MiB and saw no y.
	const ncol = 80000
	var sb strings.Builder
	for i := range ncol {
		fmt.Fprintf(&sb, "column_number_%06d,", i)
	}
	sb.WriteString("y\n")
	for range 3 {
		for i := range ncol {
			fmt.Fprintf(&sb, "%d,", i%10)
		}
		sb.WriteString("7\n")
	}
	in := filepath.Join(dir, "wide.csv")
	os.WriteFile(in, []byte(sb.String()), 0o644)
	out := filepath.Join(dir, "wide.store")
	res, err := Run(context.Background(), []string{in}, Config{Out: out, Targets: []string{"y"}, Features: []string{"column_number_000003", "column_number_079999"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 || len(res.Features) != 2 {
		t.Fatalf("result %+v", res)
	}
	s := readStore(t, out)
	if got := s.col(t, "column_number_079999"); len(got) != 3 || got[0] != 9 {
		t.Fatalf("column_number_079999 = %v", got)
	}

	// A header beyond --max-line is refused clearly.
	_, err = Run(context.Background(), []string{in}, Config{Out: out + "2", Targets: []string{"y"}, MaxLine: 1 << 20})
	var le *LineTooLongError
	if !errors.As(err, &le) || err.Error() != in+": line 1 is longer than 1 MiB (--max-line); a text file this wide is more likely damaged or not a CSV file, else raise --max-line" {
		t.Fatalf("err = %v", err)
	}
}

func TestLongNameClipped(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "name.csv")
	name := strings.Repeat("n", 1<<20)
	os.WriteFile(in, []byte("a,"+name+",y\n1,2,3\n"), 0o644)
	_, err := Run(context.Background(), []string{in}, Config{Out: filepath.Join(dir, "o"), Targets: []string{"y"}})
	want := in + `: the name of column 2 is 1048576 bytes long, more than 4096: "` + strings.Repeat("n", 200) + `… (1048576 bytes)" (use --no-header if the file has no header)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %.400v", err)
	}
}

// TestUnclosedQuoteLongField (issue 15 item 6): an unclosed quote around a
// field of over 1 MiB once ended in a recovered nil dereference.
func TestUnclosedQuoteLongField(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, text, want string }{
		{"first.csv", "a,b,y\n1,\"" + strings.Repeat("x", 2<<20) + ",3\n",
			`: parse error on line 2, column 2097159: extraneous or missing " in quoted-field`},
		{"later.csv", "a,b,y\n1,2,3\n4,\"" + strings.Repeat("x", 2<<20) + ",3\n",
			`: parse error on line 3, column 2097159: extraneous or missing " in quoted-field`},
		{"limit.csv", "a,b,y\n1,2,3\n4,\"" + strings.Repeat("x\n", 3<<20) + ",3\n",
			": line 3 is longer than 4 MiB (--max-line)"},
	} {
		in := filepath.Join(dir, c.name)
		os.WriteFile(in, []byte(c.text), 0o644)
		_, err := Run(context.Background(), []string{in}, Config{Out: filepath.Join(dir, "o"), Targets: []string{"y"}, MaxLine: 4 << 20})
		if err == nil || !strings.Contains(err.Error(), in+c.want) || strings.Contains(err.Error(), "internal error") {
			t.Errorf("%s: err = %.300v\nwant %s", c.name, err, c.want)
		}
	}
}

// TestHostileFixtures (issue 15 item 6): the two inputs that once ended in
// a recovered panic ("internal error") give a clear error. The Parquet
// file is a 20-row file whose footer says its first column chunk has size
// -5 (built by patching the total_compressed_size varint).
func TestHostileFixtures(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"chunk-size-minus-5.parquet", `: damaged Parquet metadata: row group 0, column "x": negative compressed size -5`},
		{"unclosed-quote-2MiB.csv.gz", `: parse error on line 2, column 2097159: extraneous or missing " in quoted-field`},
	} {
		in := filepath.Join("testdata", "hostile", c.file)
		_, err := Run(context.Background(), []string{in}, Config{Out: filepath.Join(t.TempDir(), "o"), Targets: []string{"y"}})
		if err == nil || err.Error() != in+c.want {
			t.Errorf("%s: err = %.300v\nwant %s", c.file, err, in+c.want)
		}
	}
}
