package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// TestRunLeavesNoTempFiles: a run leaves nothing in $TMPDIR, where Beam's
// loopback runner used to leave an empty beamloopbackworker-* file per
// job.
func TestRunLeavesNoTempFiles(t *testing.T) {
	st := store(t, 300)
	out := filepath.Join(t.TempDir(), "m.falkon")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if code, _, e := runCmd("fit", "--quiet", "--out", out, "--centers", "10", "--iters", "2", st); code != exitOK {
		t.Fatalf("fit: exit %d\n%s", code, e)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left in $TMPDIR: %s", e.Name())
	}
	if os.Getenv("TMPDIR") != tmp {
		t.Errorf("TMPDIR is %q after the run, want %q", os.Getenv("TMPDIR"), tmp)
	}
}

// TestExternalPrism: --endpoint with the default runner (prism) runs the
// jobs on that Prism, the work in this process, where Beam tried to
// compile a worker binary from source.
func TestExternalPrism(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := prism.CreateJobServer(ctx, prism.Options{Port: port}); err != nil {
		t.Skip("cannot start Prism:", err)
	}
	oldEndpoint, oldEnv := *jobopts.Endpoint, *jobopts.EnvironmentType
	t.Cleanup(func() { *jobopts.Endpoint, *jobopts.EnvironmentType = oldEndpoint, oldEnv })
	*jobopts.EnvironmentType = ""
	st := store(t, 300)
	out := filepath.Join(t.TempDir(), "m.falkon")
	code, _, e := runCmd("fit", "--quiet", "--out", out, "--centers", "10", "--iters", "2", "--endpoint", "localhost:"+strconv.Itoa(port), st)
	if code != exitOK {
		t.Fatalf("fit --endpoint: exit %d\n%s", code, e)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
