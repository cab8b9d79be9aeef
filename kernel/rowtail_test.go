package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/kernel/internal/tile"
)

// TestRowTail: KvTo and KvWeightsTo compute a tile's tail of 1 to
// tile.MR − 1 rows row by row, and give the bits of padding it to a
// micro-tile (rowTail = 0), and each row the bits it has in a call of
// many rows: a row's prediction does not depend on the rows it is
// batched with. For every instruction-set variant, kernel, precision
// (BF16 with and without its cross term), with and without an input map,
// for several outputs; with no allocation per call.
func TestRowTail(t *testing.T) {
	def := tile.Selected()
	defer tile.Use(def)
	defer func(r int) { rowTail = r }(rowTail)
	rng := rand.New(rand.NewPCG(31, 32))
	const m, d, big = 83, 7, 192
	cen := randMat(rng, m, d)
	shift, scale := make([]float64, d), make([]float64, d)
	for j := range d {
		shift[j], scale[j] = rng.Float64(), 0.5+rng.Float64()
	}
	xb := randMat(rng, big, d)
	for _, v := range tile.Available() {
		tile.Use(v)
		withBF16(t, func(mode string) {
			for _, kern := range testKernels(d, rng) {
				for _, p := range precisions {
					if mode != "off" && p != BF16 {
						continue // only BF16 depends on the mode
					}
					plain := NewCenters(kern, cen, m, d, p)
					for _, cs := range []*Centers{plain, plain.WithInputMap(shift, scale)} {
						ws := cs.NewWorkspace()
						for _, k := range []int{1, 4} {
							u := randMat(rng, m, k)
							w := cs.NewWeights(u, k)
							rowTail = tile.MR - 1
							all := make([]float64, big*k)
							cs.KvTo(ws, all, xb, big, u, k)
							for _, rows := range []int{1, 2, 3, 5, 6, 7, cs.TileRows() + 1, cs.TileRows() + 3} {
								name := fmt.Sprintf("%v/%s/%v/%v/map=%v/k=%d/rows=%d", v, mode, kern, p, cs != plain, k, rows)
								for _, r0 := range []int{0, big - rows} {
									x := xb[r0*d : (r0+rows)*d]
									rowTail = tile.MR - 1
									got, gotW := make([]float64, rows*k), make([]float64, rows*k)
									cs.KvTo(ws, got, x, rows, u, k)
									cs.KvWeightsTo(ws, gotW, x, rows, w)
									if a := testing.AllocsPerRun(3, func() { cs.KvTo(ws, got, x, rows, u, k) }); a != 0 {
										t.Fatalf("%s: KvTo allocates %v times a call", name, a)
									}
									rowTail = 0
									pad := make([]float64, rows*k)
									cs.KvTo(ws, pad, x, rows, u, k)
									for i := range got {
										switch {
										case math.Float64bits(got[i]) != math.Float64bits(pad[i]):
											t.Fatalf("%s: KvTo[%d] = %v, padded %v", name, i, got[i], pad[i])
										case math.Float64bits(gotW[i]) != math.Float64bits(pad[i]):
											t.Fatalf("%s: KvWeightsTo[%d] = %v, padded %v", name, i, gotW[i], pad[i])
										case math.Float64bits(got[i]) != math.Float64bits(all[r0*k+i]):
											t.Fatalf("%s: KvTo[%d] = %v, in a call of %d rows %v", name, i, got[i], big, all[r0*k+i])
										}
									}
								}
							}
						}
					}
				}
			}
		})
	}
}
