//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalHelperProcess is the child of TestStopSignals: main's signal
// handling around run.
func TestSignalHelperProcess(t *testing.T) {
	if os.Getenv("FALKON_OOC_SIGNAL_HELPER") != "1" {
		t.Skip("helper process")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	code := run(ctx, args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// TestStopSignals (issue 21 item 6): SIGHUP, like SIGTERM and SIGINT,
// stops a fit at its next check with exit 130 and "interrupted", and
// leaves no temporary file (it exited 129 mid-write before).
func TestStopSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fits in child processes")
	}
	dir := t.TempDir()
	store := makeStore(t, dir, 3000, 5, "y")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		out := filepath.Join(dir, "m-"+strings.ToLower(sig.String()[:4])+".falkon")
		cmd := exec.Command(self, "-test.run=^TestSignalHelperProcess$", "--",
			"fit", "--out", out, "--centers", "100", "--iters", "1000000", "--quiet", store)
		cmd.Env = append(os.Environ(), "FALKON_OOC_SIGNAL_HELPER=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Signal once the first checkpoint exists: the fit is iterating
		// and writing a checkpoint after every iteration.
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(out + ".ckpt"); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != exitInterrupted || !strings.Contains(stderr.String(), "falkon-ooc fit: interrupted") {
			t.Errorf("%v: exit %d (want %d)\n%s", sig, code, exitInterrupted, stderr.String())
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), "falkon-tmp") {
				t.Errorf("%v: temporary file left: %s", sig, e.Name())
			}
		}
	}
}

// TestErrorOneLine (issue 21 item 6): a file name holding a newline or a
// byte that is not UTF-8 keeps the error on one line, escaped as %q
// escapes it.
func TestErrorOneLine(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a\nb.csv", "x\x1b[31m.csv", "caf\xe9.csv"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, e := runCLI("ingest", "--out", filepath.Join(dir, "o.store"), "--target", "y", p)
		q := strconv.Quote(p)
		want := "falkon-ooc ingest: " + q[1:len(q)-1] + ": empty file\n"
		if code != 1 || e != want {
			t.Errorf("%q: exit %d, stderr %q\nwant %q", name, code, e, want)
		}
	}
	if got := oneLine("plain café: ok"); got != "plain café: ok" {
		t.Errorf("oneLine changed a clean message: %q", got)
	}
}
