package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// TestCrashSafety kills ingest, fit and predict with SIGKILL at random
// moments and checks that the output path then holds either the previous
// complete output or a new complete one — never a partial store, model or
// prediction file.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills it repeatedly; skipped in -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "falkon-ooc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// Input: 150 000 rows × 8 columns of CSV.
	var b strings.Builder
	b.WriteString("a,b,c,d,e,f,g,y\n")
	rng := rand.New(rand.NewPCG(1, 1))
	for range 150000 {
		for j := range 8 {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%.4f", rng.NormFloat64())
		}
		b.WriteByte('\n')
	}
	csvPath := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "s.store")
	model := filepath.Join(dir, "m.falkon")
	preds := filepath.Join(dir, "p.csv")
	ingestArgs := []string{"ingest", "--out", store, "--target", "y", "--chunk-rows", "8192", "--quiet", csvPath}
	fitArgs := []string{"fit", "--out", model, "--centers", "300", "--iters", "5", "--quiet", store}
	predArgs := []string{"predict", "--model", model, "--out", preds, "--quiet", store}
	for _, args := range [][]string{ingestArgs, fitArgs, predArgs} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	// ingest refuses an existing --out, so each killed ingest writes a new
	// path, which must then hold nothing or a complete store.
	ingestTo := func(i int) string { return filepath.Join(dir, fmt.Sprintf("k%d.store", i)) }
	checkStore := func(path string) error {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return nil
		}
		r, err := chunkstore.Open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		if r.Manifest().Rows != 150000 {
			return fmt.Errorf("store has %d rows", r.Manifest().Rows)
		}
		return r.Verify(context.Background())
	}
	checkModel := func(string) error {
		_, err := ooc.Load(model)
		return err
	}
	checkPreds := func(string) error {
		b, err := os.ReadFile(preds)
		if err != nil {
			return err
		}
		if n := bytes.Count(b, []byte("\n")); n != 150001 {
			return fmt.Errorf("prediction file has %d lines, want 150001", n)
		}
		return nil
	}
	for _, c := range []struct {
		name  string
		args  func(i int) []string
		out   func(i int) string
		check func(string) error
	}{
		{"ingest", func(i int) []string {
			a := append([]string(nil), ingestArgs...)
			a[2] = ingestTo(i)
			return a
		}, ingestTo, checkStore},
		{"fit", func(int) []string { return fitArgs }, func(int) string { return model }, checkModel},
		{"predict", func(int) []string { return predArgs }, func(int) string { return preds }, checkPreds},
	} {
		t.Run(c.name, func(t *testing.T) {
			// How long an uninterrupted run takes.
			start := time.Now()
			if out, err := exec.Command(bin, c.args(100)...).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			full := time.Since(start)
			killed := 0
			for i := range 8 {
				cmd := exec.Command(bin, c.args(i)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				delay := time.Duration(rng.Int64N(int64(full)))
				time.Sleep(delay)
				if cmd.Process.Signal(syscall.SIGKILL) == nil {
					killed++
				}
				cmd.Wait()
				if err := c.check(c.out(i)); err != nil {
					t.Fatalf("kill %d after %v of %v: output damaged: %v", i, delay, full, err)
				}
			}
			t.Logf("%s: %d kills within a %v run, output intact each time", c.name, killed, full.Round(time.Millisecond))
		})
	}
}
