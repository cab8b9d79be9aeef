package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rowsGen is an endless JSON body {"rows": [{"a": 1, "b": 2}, … made on
// the fly, limited to n bytes (then it just stops): a body of any size
// that no one holds in memory.
type rowsGen struct {
	n, done int64
	row     []byte
	pos     int
	started bool
}

func newRowsGen(n int64) *rowsGen { return &rowsGen{n: n, row: []byte(`{"a": 1.5, "b": -2},`)} }

func (g *rowsGen) Read(p []byte) (int, error) {
	if g.done >= g.n {
		return 0, io.EOF
	}
	i := 0
	if !g.started {
		i = copy(p, `{"rows": [`)
		g.started = true
	}
	for i < len(p) && g.done+int64(i) < g.n {
		c := copy(p[i:], g.row[g.pos:])
		i += c
		g.pos = (g.pos + c) % len(g.row)
	}
	if rem := g.n - g.done; int64(i) > rem {
		i = int(rem)
	}
	g.done += int64(i)
	return i, nil
}

// hostileServer is a real http.Server with the command's timeouts.
func hostileServer(t *testing.T, opt Options, read time.Duration) (*Handler, string) {
	t.Helper()
	h, err := New(newLin([]string{"a", "b"}, []float64{2, -1}, 0.5), "A", opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: read, ReadTimeout: read, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close(); h.Close() })
	return h, "http://" + ln.Addr().String()
}

func postReader(url string, body io.Reader) (int, string, error) {
	req, err := http.NewRequest("POST", url+"/v1/predict", body)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// TestHugeBody: a 1 GB body is refused once MaxBody bytes have been
// read, never held: 413.
func TestHugeBody(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB through loopback")
	}
	_, url := hostileServer(t, Options{MaxRows: 1 << 30}, 30*time.Second)
	code, out, err := postReader(url, newRowsGen(1<<30))
	if err != nil {
		t.Fatal(err)
	}
	if code != 413 || !strings.Contains(out, "the request body exceeds 67108864 bytes (--max-body)") {
		t.Errorf("%d %s", code, out)
	}
}

// TestMillionRows: 10⁶ rows in one request pass MaxRows: 413.
func TestMillionRows(t *testing.T) {
	_, url := hostileServer(t, Options{}, 30*time.Second)
	g := newRowsGen(1 << 40)
	code, out, err := postReader(url, io.MultiReader(io.LimitReader(g, int64(len(`{"rows": [`))+20*1_000_000-1), strings.NewReader("]}")))
	if err != nil {
		t.Fatal(err)
	}
	if code != 413 || !strings.Contains(out, "the request holds more than 100000 rows (--max-rows); split it") {
		t.Errorf("%d %s", code, out)
	}
}

// TestSlowClients: a client that sends its headers or its body too
// slowly (slowloris) is cut off by the read timeouts, and the server
// goes on answering others.
func TestSlowClients(t *testing.T) {
	_, url := hostileServer(t, Options{}, 300*time.Millisecond)
	addr := strings.TrimPrefix(url, "http://")
	// Headers a byte at a time.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	closed := false
	for _, b := range []byte("POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n") {
		if _, err := c.Write([]byte{b}); err != nil {
			closed = true
			break
		}
		time.Sleep(20 * time.Millisecond)
		if time.Since(start) > 3*time.Second {
			break
		}
	}
	if !closed {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		closed = err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	if !closed || time.Since(start) > 3*time.Second {
		t.Errorf("slow headers: the connection was not closed within 3 s")
	}
	// A body that trickles: 408 once the read timeout passes.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"rows\": [")
	go func() {
		for range 100 {
			if _, err := c2.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 408 || !strings.Contains(string(b), "the request body did not arrive in time (--read-timeout)") {
			t.Errorf("slow body: %d %s", resp.StatusCode, b)
		}
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("slow body: no answer and no close within 5 s")
	}
	// The server still answers.
	code, _, err := postReader(url, strings.NewReader(`{"rows": [{"a": 1, "b": 2}]}`))
	if err != nil || code != 200 {
		t.Errorf("after the slow clients: %d %v", code, err)
	}
}

// TestHostileRSS runs the hostile requests (a 1 GB body, 10⁶ rows, slow
// clients, 64 concurrent large requests) against a server in a child
// process and checks its peak resident memory (VmHWM).
func TestHostileRSS(t *testing.T) {
	if os.Getenv("SERVE_HOSTILE_CHILD") == "1" {
		hostileChild(t)
		return
	}
	if testing.Short() {
		t.Skip("a child process reads 1 GB bodies")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHostileRSS$", "-test.v")
	cmd.Env = append(os.Environ(), "SERVE_HOSTILE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	i := strings.Index(string(out), "VmHWM ")
	if i < 0 {
		t.Fatalf("child reported no VmHWM:\n%s", out)
	}
	var kb int64
	fmt.Sscan(string(out[i+len("VmHWM "):]), &kb)
	t.Logf("peak RSS under hostile load: %d MiB", kb>>10)
	// The budget: MaxMemory 256 MiB of rows, 64 MiB bodies read in 32 KiB
	// pieces, the Go runtime and the test binary.
	if kb > 600<<10 {
		t.Errorf("peak RSS %d MiB, want at most 600 MiB", kb>>10)
	}
}

func hostileChild(t *testing.T) {
	_, url := hostileServer(t, Options{MaxMemory: 256 << 20, MaxRows: 1 << 30}, 30*time.Second)
	var wg sync.WaitGroup
	var fails atomic.Int64
	check := func(want int, code int, err error) {
		if err != nil || code != want {
			fails.Add(1)
			t.Errorf("want %d, got %d %v", want, code, err)
		}
	}
	for range 2 {
		wg.Go(func() {
			code, _, err := postReader(url, newRowsGen(1<<30))
			// The server answers 413 and closes the connection after
			// MaxBody bytes; a client still writing may see the reset
			// before it reads the answer.
			if code != 503 && (err == nil || !strings.Contains(err.Error(), "connection reset")) {
				check(413, code, err)
			}
		})
	}
	// Many large requests at once: the memory budget answers 503 to
	// those past it.
	body := "{\"rows\": [" + strings.Repeat(`{"a": 1.5, "b": -2},`, 200_000) + `{"a": 1, "b": 2}]}`
	for range 32 {
		wg.Go(func() {
			code, _, err := postReader(url, strings.NewReader(body))
			if code != 503 {
				check(200, code, err)
			}
		})
	}
	for range 16 {
		wg.Go(func() {
			c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
			if err != nil {
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/predict HTTP/1.1\r\nHost: x\r\n")
			time.Sleep(3 * time.Second)
		})
	}
	wg.Wait()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			fmt.Printf("VmHWM %d\n", kb)
		}
	}
	_ = context.Background
}
