package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// KvWeightsTo gives KvTo's products bit for bit, for every kernel and
// precision, through an input map, on a workspace that KvTo uses between
// calls (the workspace's own layout of u is left intact), and allocates
// nothing.
func TestWeightsMatchKvTo(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const m, d = 77, 5
	cen := randMat(rng, m, d)
	shift, scale := make([]float64, d), make([]float64, d)
	for j := range d {
		shift[j], scale[j] = rng.Float64(), 0.5+rng.Float64()
	}
	for _, kern := range testKernels(d, rng) {
		for _, p := range precisions {
			plain := NewCenters(kern, cen, m, d, p)
			for _, cs := range []*Centers{plain, plain.WithInputMap(shift, scale)} {
				ws := plain.NewWorkspace()
				for _, k := range []int{1, 3, 9} {
					u, u2 := randMat(rng, m, k), randMat(rng, m, k)
					w := cs.NewWeights(u, k)
					for _, rows := range []int{1, 3, 70} {
						name := fmt.Sprintf("%v/%v/k=%d/rows=%d", kern, p, k, rows)
						x := randMat(rng, rows, d)
						want, got, other := make([]float64, rows*k), make([]float64, rows*k), make([]float64, rows*k)
						cs.KvTo(ws, want, x, rows, u, k)
						cs.KvTo(ws, other, x, rows, u2, k) // the workspace now holds u2
						cs.KvWeightsTo(ws, got, x, rows, w)
						for i := range want {
							if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
								t.Fatalf("%s: KvWeightsTo[%d] = %v, KvTo %v", name, i, got[i], want[i])
							}
						}
						again := make([]float64, rows*k)
						cs.KvTo(ws, again, x, rows, u2, k)
						for i := range other {
							if math.Float64bits(again[i]) != math.Float64bits(other[i]) {
								t.Fatalf("%s: KvTo after KvWeightsTo [%d] = %v, before %v", name, i, again[i], other[i])
							}
						}
						if a := testing.AllocsPerRun(5, func() { cs.KvWeightsTo(ws, got, x, rows, w) }); a != 0 {
							t.Fatalf("%s: %v allocations per call", name, a)
						}
					}
				}
			}
		}
	}
}

func TestWeightsOtherCenters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	k := Kernel{Kind: Gaussian, Sigma: 1}
	a := NewCenters(k, randMat(rng, 4, 2), 4, 2, Float64)
	b := NewCenters(k, randMat(rng, 4, 2), 4, 2, Float64)
	w := b.NewWeights(make([]float64, 4), 1)
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("KvWeightsTo with weights of other centres did not panic")
		}
	}()
	a.KvWeightsTo(a.NewWorkspace(), make([]float64, 1), make([]float64, 2), 1, w)
}
