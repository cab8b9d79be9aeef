// Command decision writes the imbalanced classification set of
// bench/ACCURACY.md's "Decisions on imbalanced data": train.csv and
// test.csv, about 5 % of rows of class "yes", whose log-odds are a
// smooth non-linear function of five Gaussian features (so a kernel
// model is right and a threshold at ½ recalls few positives).
//
// Usage, from the repository root (bench/decision/run.sh runs the table):
//
//	go run ./bench/decision -out DIR [-train 40000] [-test 20000] [-seed 1]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	out := flag.String("out", "", "directory to write train.csv and test.csv into (created)")
	train := flag.Int("train", 40000, "training rows")
	test := flag.Int("test", 20000, "test rows")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "decision: -out DIR is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "decision:", err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewPCG(*seed, 43))
	for _, part := range []struct {
		name string
		n    int
	}{{"train.csv", *train}, {"test.csv", *test}} {
		pos, err := write(filepath.Join(*out, part.name), part.n, rng)
		if err != nil {
			fmt.Fprintln(os.Stderr, "decision:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s: %d rows, %.2f %% yes\n", part.name, part.n, 100*float64(pos)/float64(part.n))
	}
}

// write writes n rows and returns how many are "yes".
func write(path string, n int, rng *rand.Rand) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,x1,x2,x3,x4,x5,y")
	pos := 0
	var x [5]float64
	for i := range n {
		for j := range x {
			x[j] = rng.NormFloat64()
		}
		z := 1.5*x[0] + math.Sin(2*x[1]) + 0.7*x[2]*x[3] - 0.5*x[4]*x[4] - 3.9
		y := "no"
		if rng.Float64() < 1/(1+math.Exp(-z)) {
			y = "yes"
			pos++
		}
		fmt.Fprintf(w, "%d,%.6f,%.6f,%.6f,%.6f,%.6f,%s\n", i, x[0], x[1], x[2], x[3], x[4], y)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, err
	}
	return pos, f.Close()
}
