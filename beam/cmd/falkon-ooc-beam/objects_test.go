package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/falkon-ooc/falkon-ooc/internal/storecmp"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// s3Env points the AWS SDK at the S3 server at endpoint (loopback), with
// test credentials and no AWS configuration files.
func s3Env(endpoint string) map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE":           os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	}
}

// putObject writes the local file src to the object name.
func putObject(t *testing.T, src, name string) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
}

// getObject reads the object name.
func getObject(t *testing.T, name string) []byte {
	t.Helper()
	ctx := context.Background()
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := fs.OpenRead(ctx, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fetchStore copies the store at the URL loc to the local directory dir.
func fetchStore(t *testing.T, loc, dir string) {
	t.Helper()
	meta := getObject(t, loc+"/meta.json")
	var m struct {
		Segments []struct {
			Name string `json:"name"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, s := range m.Segments {
		if err := os.WriteFile(filepath.Join(dir, s.Name), getObject(t, loc+"/"+s.Name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
}

// objectsRoundTrip runs ingest → fit → tune → predict with cli on objects
// under s3://bucket/PREFIX/ and the same commands in this process on
// local files, and checks that they agree: the same store content (but
// the sources' names), models bit for bit, the same predictions' bytes;
// then the messages of a store without manifest and of a taken store
// URL.
func objectsRoundTrip(t *testing.T, prefix string, cli func(args ...string) (int, string, string)) {
	t.Helper()
	dir := t.TempDir()
	ins := csvInputs(t, dir)
	base := "s3://bucket/" + prefix
	for _, in := range ins {
		putObject(t, in, base+"/in/"+filepath.Base(in))
	}
	flags := []string{"--target", "y", "--weight", "w", "--chunk-rows", "16", "--partitions", "3", "--quiet"}
	must := func(code int, stdout, stderr string) string {
		t.Helper()
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return stdout
	}
	local := filepath.Join(dir, "local.store")
	must(runCmd(append(append([]string{"ingest", "--out", local}, flags...), ins...)...))
	store := base + "/store"
	out := must(cli(append(append([]string{"ingest", "--out", store, "--json"}, flags...), base+"/in/")...))
	var doc struct {
		Rows  int64    `json:"rows"`
		Files []string `json:"files"`
		Store string   `json:"store"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if doc.Rows != 80 || len(doc.Files) != 3 || doc.Files[0] != base+"/in/part-0.csv" || doc.Store != store {
		t.Fatalf("ingest --json: %+v", doc)
	}
	fetched := filepath.Join(dir, "fetched.store")
	fetchStore(t, store, fetched)
	if d, err := storecmp.DiffIgnoring(local, fetched, "sources"); err != nil || d != "" {
		t.Fatalf("the store at %s differs from the local ingest's: %v %s", store, err, d)
	}

	fitFlags := []string{"--centers", "20", "--iters", "3", "--sigma", "2", "--partitions", "2", "--quiet"}
	ml, mr := filepath.Join(dir, "local.falkon"), filepath.Join(dir, "remote.falkon")
	must(runCmd(append([]string{"fit", local, "--out", ml}, fitFlags...)...))
	must(cli(append([]string{"fit", store, "--out", mr}, fitFlags...)...))
	sameAlpha(t, "fit", ml, mr)
	tl, tr := filepath.Join(dir, "tl.falkon"), filepath.Join(dir, "tr.falkon")
	tuneFlags := []string{"--centers", "20", "--iters", "3", "--sigma", "1,3", "--lambda", "1e-3,1e-5", "--partitions", "2", "--quiet"}
	must(runCmd(append([]string{"tune", local, "--out", tl}, tuneFlags...)...))
	must(cli(append([]string{"tune", store, "--out", tr}, tuneFlags...)...))
	sameAlpha(t, "tune", tl, tr)

	must(runCmd("predict", "--beside", "--model", ml, "--keep", "id", "--quiet", ins[1]))
	must(cli("predict", "--beside", "--model", mr, "--keep", "id", "--quiet", base+"/in/part-1.csv"))
	want, err := os.ReadFile(strings.TrimSuffix(ins[1], ".csv") + ".pred.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if got := getObject(t, base+"/in/part-1.pred.parquet"); !bytes.Equal(got, want) {
		t.Fatalf("the predictions' object (%d bytes) differs from the local predictions (%d bytes)", len(got), len(want))
	}

	code, _, stderr := cli("fit", base+"/nothing", "--out", filepath.Join(dir, "x.falkon"), "--quiet")
	msg := "falkon-ooc-beam fit: store " + base + "/nothing: no manifest " + base + "/nothing/meta.json (not a store, or one still being written: its manifest is written last): "
	if code != exitFailure || !strings.HasPrefix(stderr, msg) {
		t.Fatalf("a store without manifest: exit %d, %q", code, stderr)
	}
	code, _, stderr = cli(append(append([]string{"ingest", "--out", store}, flags...), base+"/in/")...)
	if code != exitFailure || stderr != "falkon-ooc-beam ingest: "+store+" already exists; remove it or choose another --out\n" {
		t.Fatalf("a taken store URL: exit %d, %q", code, stderr)
	}
}

func sameAlpha(t *testing.T, what, a, b string) {
	t.Helper()
	ma, err := ooc.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := ooc.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	x, y := ma.Alpha(), mb.Alpha()
	if len(x) != len(y) {
		t.Fatalf("%s: %d coefficients, want %d", what, len(y), len(x))
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
			t.Fatalf("%s: α[%d] = %v over the objects, %v over the local store", what, i, y[i], x[i])
		}
	}
}

// TestObjectsInProcess: the commands on s3:// objects, served by gofakes3
// (a small S3 implementation, not a production server) in this process
// on a loopback port, give the local commands' results.
func TestObjectsInProcess(t *testing.T) {
	backend := s3mem.New()
	if err := backend.CreateBucket("bucket"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	for k, v := range s3Env(srv.URL) {
		t.Setenv(k, v)
	}
	objectsRoundTrip(t, "inproc", runCmd)
}

// s3Server returns the S3 server binary the tests may start: the
// FALKON_OOC_S3_SERVER environment variable, else gofakes3 on PATH
// (beam/scripts/s3server.sh installs it).
func s3Server() string {
	if p := os.Getenv("FALKON_OOC_S3_SERVER"); p != "" {
		return p
	}
	p, _ := exec.LookPath("gofakes3")
	return p
}

// TestS3ServerProcess: the same round trip with the S3 server its own
// process on a loopback port and every command a process of its own
// (the built falkon-ooc-beam, configured by the AWS environment
// variables only), bounded in time. It needs a server binary (s3Server)
// and skips without one.
func TestS3ServerProcess(t *testing.T) {
	server := s3Server()
	if server == "" {
		t.Skip("no S3 server binary: set FALKON_OOC_S3_SERVER, or put gofakes3 on PATH (beam/scripts/s3server.sh installs it)")
	}
	if testing.Short() {
		t.Skip("builds this command and starts an S3 server")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build falkon-ooc-beam with")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	self := filepath.Join(dir, "falkon-ooc-beam")
	if b, err := exec.CommandContext(ctx, goCmd, "build", "-o", self, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var log bytes.Buffer
	srv := exec.CommandContext(ctx, server, "-backend", "memory", "-initialbucket", "bucket", "-host", addr, "-quiet")
	srv.Stdout, srv.Stderr = &log, &log
	if err := srv.Start(); err != nil {
		t.Fatalf("start %s: %v", server, err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the S3 server did not listen on %s: %s", addr, log.String())
		}
	}
	env := os.Environ()
	for k, v := range s3Env("http://" + addr) {
		t.Setenv(k, v)
		env = append(env, k+"="+v)
	}
	cli := func(args ...string) (int, string, string) {
		var o, e bytes.Buffer
		cmd := exec.CommandContext(ctx, self, args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s: %v", args[0], err)
		}
		return code, o.String(), e.String()
	}
	start := time.Now()
	objectsRoundTrip(t, "process", cli)
	t.Logf("server %s; the round trip across processes took %.1f s", server, time.Since(start).Seconds())
	if ctx.Err() != nil {
		t.Fatal(fmt.Errorf("over time: %w", ctx.Err()))
	}
}
