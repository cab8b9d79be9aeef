package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// WithInputMap gives, bit for bit, the products of mapping the rows first
// ((x − shift)·scale, as ooc standardised chunks before), for every kernel
// and precision, and leaves x as it was.
func TestInputMapMatchesMappedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const rows, m, d, k = 133, 41, 7, 2
	raw := randMat(rng, rows, d)
	shift, scale := make([]float64, d), make([]float64, d)
	for j := range d {
		shift[j], scale[j] = 3*rng.Float64()-1.5, 0.2+4*rng.Float64()
		for i := range rows {
			raw[i*d+j] = raw[i*d+j]*7 + 2*shift[j]
		}
	}
	mapped := slices.Clone(raw)
	for i := range rows {
		for j := range d {
			mapped[i*d+j] = (mapped[i*d+j] - shift[j]) * scale[j]
		}
	}
	cen := randMat(rng, m, d)
	u, v := randMat(rng, m, k), randMat(rng, rows, k)
	for _, kern := range testKernels(d, rng) {
		for _, p := range precisions {
			name := fmt.Sprintf("%v/%v", kern, p)
			plain := NewCenters(kern, cen, m, d, p)
			withMap := plain.WithInputMap(shift, scale)
			ws := plain.NewWorkspace() // serves both: they share the packed centres
			before := slices.Clone(raw)
			w1, w2 := make([]float64, m*k), make([]float64, m*k)
			plain.KtKvAdd(ws, w1, mapped, rows, u, v, k)
			withMap.KtKvAdd(ws, w2, raw, rows, u, v, k)
			o1, o2 := make([]float64, rows*k), make([]float64, rows*k)
			plain.KvTo(ws, o1, mapped, rows, u, k)
			withMap.KvTo(ws, o2, raw, rows, u, k)
			b1, b2 := make([]float64, rows*m), make([]float64, rows*m)
			plain.BlockTo(ws, b1, mapped, rows)
			withMap.BlockTo(ws, b2, raw, rows)
			for _, c := range []struct {
				what      string
				got, want []float64
			}{{"KtKvAdd", w2, w1}, {"KvTo", o2, o1}, {"BlockTo", b2, b1}} {
				for i := range c.want {
					if math.Float64bits(c.got[i]) != math.Float64bits(c.want[i]) {
						t.Fatalf("%s: %s[%d] = %v with the input map, %v on mapped rows", name, c.what, i, c.got[i], c.want[i])
					}
				}
			}
			if !slices.Equal(raw, before) {
				t.Fatalf("%s: the input rows were modified", name)
			}
			if ws.NonFinite() != -1 {
				t.Fatalf("%s: NonFinite = %d on finite rows", name, ws.NonFinite())
			}
		}
	}
	if plain := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, cen, m, d, Float64); plain.WithInputMap(nil, nil) != plain {
		t.Error("WithInputMap(nil, nil) is not the centres themselves")
	}
}

// A non-finite row is reported by NonFinite (the first one, in any
// tile), is taken as a zero row (so the results stay finite), and the
// report is reset by the next call.
func TestNonFiniteRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const rows, m, d = 200, 30, 5
	cen := randMat(rng, m, d)
	u := randMat(rng, m, 1)
	for _, p := range precisions {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			for _, mapped := range []bool{false, true} {
				cs := NewCenters(Kernel{Kind: Matern52, Sigma: 1.5}, cen, m, d, p)
				if mapped {
					cs = cs.WithInputMap(make([]float64, d), slices.Repeat([]float64{2}, d))
				}
				ws := cs.NewWorkspace()
				x := randMat(rng, rows, d)
				x[150*d+3], x[170*d+1] = bad, bad // rows 150 and 170: a later tile than row 0
				w := make([]float64, m)
				cs.KtKvAdd(ws, w, x, rows, u, nil, 1)
				if got := ws.NonFinite(); got != 150 {
					t.Errorf("%v %v mapped=%v: NonFinite = %d, want 150", p, bad, mapped, got)
				}
				for _, v := range w {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%v %v: a non-finite row made w non-finite: %v", p, bad, v)
					}
				}
				cs.KvTo(ws, make([]float64, 100), x[:100*d], 100, u, 1)
				if got := ws.NonFinite(); got != -1 {
					t.Errorf("%v %v: NonFinite = %d after a call on finite rows, want -1", p, bad, got)
				}
			}
		}
	}
}

func TestInputMapPanics(t *testing.T) {
	cs := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, make([]float64, 6), 2, 3, Float64)
	other := NewCenters(Kernel{Kind: Gaussian, Sigma: 1}, make([]float64, 6), 2, 3, Float64)
	for name, f := range map[string]func(){
		"short shift": func() { cs.WithInputMap([]float64{1}, []float64{1, 1, 1}) },
		"scale only":  func() { cs.WithInputMap(nil, []float64{1, 1, 1}) },
		"other's workspace": func() {
			cs.WithInputMap(make([]float64, 3), make([]float64, 3)).KvTo(other.NewWorkspace(), make([]float64, 1), make([]float64, 3), 1, make([]float64, 2), 1)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
